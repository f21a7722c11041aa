package security

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/internal/selfhosted"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// releaseImage is what the test asks `make release` to install: a registry
// with a port, so the image's name/tag split is exercised too.
const releaseImage = "registry.example.com:5000/krtt/krtt-operator:v9.8.7"

// TestReleaseManifests builds the release as a user would (`make release
// IMG=...`), then checks what it installs and that a real API server
// accepts every object of it (server-side dry-run).
func TestReleaseManifests(t *testing.T) {
	dist := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "release", "IMG="+releaseImage, "DIST="+dist)
	cmd.Dir = localcp.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	install := objects(t, filepath.Join(dist, "install.yaml"))
	sim := objects(t, filepath.Join(dist, "sim.yaml"))
	selfHosted := objects(t, filepath.Join(dist, "self-hosted.yaml"))

	t.Run("install.yaml holds the operator and nothing of the simulated provider", func(t *testing.T) {
		crds := map[string]bool{}
		for _, o := range install {
			if o.GetKind() == "CustomResourceDefinition" {
				crds[o.GetName()] = true
			}
		}
		for _, want := range []string{"machines.cluster.krtt.dev", "machinesets.cluster.krtt.dev", "clusters.cluster.krtt.dev", "machinedrainrules.cluster.krtt.dev"} {
			if !crds[want] {
				t.Errorf("install.yaml lacks the CRD %s", want)
			}
		}
		for name := range crds {
			if strings.HasSuffix(name, ".sim.krtt.dev") {
				t.Errorf("install.yaml installs the simulated provider's CRD %s; it belongs in sim.yaml", name)
			}
		}
		for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"} {
			if !hasKind(install, kind) {
				t.Errorf("install.yaml has no %s", kind)
			}
		}
		dep := deployment(t, install, "krtt-operator")
		checkReleased(t, dep, "manager")
		checkLocked(t, dep, "krtt-operator")
	})

	// Node-side rights in the management cluster are for self-hosted
	// Clusters only: never in install.yaml, all in self-hosted.yaml.
	nodeSide := []string{"nodes", "pods", "pods/eviction", "poddisruptionbudgets", "volumeattachments"}
	t.Run("install.yaml grants nothing of the Node side and runs without self-hosted Clusters", func(t *testing.T) {
		for _, r := range granted(t, install) {
			if slices.Contains(nodeSide, r) {
				t.Errorf("install.yaml grants %s; it belongs in config/rbac-self-hosted", r)
			}
		}
		// Without the component's role the mode would only meet
		// forbidden watches.
		for _, c := range deployment(t, install, "krtt-operator").Spec.Template.Spec.Containers {
			for _, a := range append(c.Command, c.Args...) {
				if strings.HasPrefix(a, "--"+selfhosted.Flag) && a != "--"+selfhosted.Flag+"=false" {
					t.Errorf("container %s runs with %s; install.yaml has no RBAC for it", c.Name, a)
				}
			}
		}
	})
	t.Run("self-hosted.yaml binds the Node side to the operator", func(t *testing.T) {
		got := granted(t, selfHosted)
		for _, r := range nodeSide {
			if !slices.Contains(got, r) {
				t.Errorf("self-hosted.yaml does not grant %s", r)
			}
		}
		bound := false
		for _, o := range selfHosted {
			if o.GetKind() != "ClusterRoleBinding" {
				continue
			}
			b := &rbacv1.ClusterRoleBinding{}
			if err := runtimeConvert(o, b); err != nil {
				t.Fatal(err)
			}
			for _, s := range b.Subjects {
				bound = bound || (s.Kind == "ServiceAccount" && s.Name == "krtt-operator" && s.Namespace == "krtt-system")
			}
		}
		if !bound {
			t.Error("self-hosted.yaml binds its ClusterRole to no krtt-system/krtt-operator ServiceAccount")
		}
	})

	t.Run("sim.yaml holds the simulated provider from the same image", func(t *testing.T) {
		n := 0
		for _, o := range sim {
			if o.GetKind() == "CustomResourceDefinition" {
				n++
				if !strings.HasSuffix(o.GetName(), ".sim.krtt.dev") {
					t.Errorf("sim.yaml installs %s, which is not the simulated provider's", o.GetName())
				}
			}
		}
		if n == 0 {
			t.Error("sim.yaml has no CRD")
		}
		dep := deployment(t, sim, "krtt-sim")
		checkReleased(t, dep, "sim")
		checkLocked(t, dep, "krtt-sim")
	})

	t.Run("a real API server accepts every object (server-side dry-run)", func(t *testing.T) {
		ctx := context.Background()
		// A namespaced dry-run needs its namespace to exist.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "krtt-system"}}
		if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		for _, o := range slices.Concat(install, sim, selfHosted) {
			err := env.Client.Patch(ctx, o, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("krtt-release-test"))
			if err != nil {
				t.Errorf("%s %s: %v", o.GetKind(), client.ObjectKeyFromObject(o), err)
			}
		}
	})
}

// granted lists the resources the ClusterRoles of objs grant any verb on.
func granted(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		r := &rbacv1.ClusterRole{}
		if err := runtimeConvert(o, r); err != nil {
			t.Fatal(err)
		}
		for _, rule := range r.Rules {
			out = append(out, rule.Resources...)
		}
	}
	return out
}

// TestReleaseOfADigitsOnlyTag: without VERSION the image is tagged with the
// short commit hash, which can be all digits; it stays the tag.
func TestReleaseOfADigitsOnlyTag(t *testing.T) {
	const img = "ghcr.io/krtt-dev/krtt-operator:3440863"
	dist := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "release", "IMG="+img, "DIST="+dist)
	cmd.Dir = localcp.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	for _, file := range []string{"install.yaml", "sim.yaml"} {
		var images []string
		for _, o := range objects(t, filepath.Join(dist, file)) {
			if o.GetKind() != "Deployment" {
				continue
			}
			dep := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, dep); err != nil {
				t.Fatal(err)
			}
			for _, c := range dep.Spec.Template.Spec.Containers {
				images = append(images, c.Image)
			}
		}
		if len(images) == 0 || slices.ContainsFunc(images, func(i string) bool { return i != img }) {
			t.Errorf("%s: images %q, want %q", file, images, img)
		}
	}
}

// checkReleased: the container runs the released image and is probed.
func checkReleased(t *testing.T, dep *appsv1.Deployment, container string) {
	t.Helper()
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name != container {
			continue
		}
		if c.Image != releaseImage {
			t.Errorf("%s/%s: image %q, want %q", dep.Name, c.Name, c.Image, releaseImage)
		}
		if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil {
			t.Errorf("%s/%s has no HTTP liveness probe", dep.Name, c.Name)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil {
			t.Errorf("%s/%s has no HTTP readiness probe", dep.Name, c.Name)
		}
		return
	}
	t.Errorf("%s has no container %s", dep.Name, container)
}

// objects reads every document of a multi-document YAML file.
func objects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(o.Object) > 0 {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s is empty", file)
	}
	return out
}

func hasKind(objs []*unstructured.Unstructured, kind string) bool {
	for _, o := range objs {
		if o.GetKind() == kind {
			return true
		}
	}
	return false
}

// deployment is the named Deployment of objs, typed.
func deployment(t *testing.T, objs []*unstructured.Unstructured, name string) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != name {
			continue
		}
		dep := &appsv1.Deployment{}
		if err := runtimeConvert(o, dep); err != nil {
			t.Fatal(err)
		}
		return dep
	}
	t.Fatalf("no Deployment %s", name)
	return nil
}

func runtimeConvert(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true)
}
