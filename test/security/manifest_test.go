package security

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// documents splits a multi-document YAML file and strictly decodes each
// document of the given kind.
func documents[T any](t *testing.T, file, kind string) []*T {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []*T
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if meta.Kind != kind {
			continue
		}
		v := new(T)
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			t.Fatalf("%s: %s: %v", file, kind, err)
		}
		out = append(out, v)
	}
	return out
}

// The manager Deployment runs as non-root with a read-only root filesystem,
// no capabilities, the runtime's default seccomp profile and no privilege
// escalation, for every container.
func TestManagerDeploymentIsLocked(t *testing.T) {
	file := filepath.Join(localcp.RepoRoot(), "config", "manager", "manager.yaml")
	deps := documents[appsv1.Deployment](t, file, "Deployment")
	if len(deps) != 1 {
		t.Fatalf("%s: want one Deployment, found %d", file, len(deps))
	}
	checkLocked(t, deps[0], "krtt-operator")
}

// checkLocked fails t for every way the Deployment's Pod could run with
// more than it needs; serviceAccount is the subject its ClusterRole binds.
func checkLocked(t *testing.T, dep *appsv1.Deployment, serviceAccount string) {
	t.Helper()
	spec := dep.Spec.Template.Spec
	pod := spec.SecurityContext
	if pod == nil {
		t.Fatal("the Pod has no securityContext")
	}
	containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	if len(containers) == 0 {
		t.Fatal("no containers")
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Error("the Pod shares a host namespace")
	}
	if spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken {
		t.Error("the operator needs its ServiceAccount token")
	}
	if spec.ServiceAccountName != serviceAccount {
		t.Errorf("%s: serviceAccountName %q, want %s (the subject of its ClusterRole's binding)", dep.Name, spec.ServiceAccountName, serviceAccount)
	}
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("container %s has no securityContext", c.Name)
			continue
		}
		nonRoot := sc.RunAsNonRoot
		if nonRoot == nil {
			nonRoot = pod.RunAsNonRoot
		}
		if nonRoot == nil || !*nonRoot {
			t.Errorf("container %s may run as root: set runAsNonRoot: true", c.Name)
		}
		if uid := sc.RunAsUser; uid != nil && *uid == 0 {
			t.Errorf("container %s runs as uid 0", c.Name)
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = pod.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("container %s: seccompProfile %+v, want RuntimeDefault", c.Name, seccomp)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s: readOnlyRootFilesystem must be true", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation must be false", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s is privileged", c.Name)
		}
		if sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 {
			t.Errorf("container %s: capabilities %+v, want drop [ALL] and add nothing", c.Name, sc.Capabilities)
		}
	}
}
