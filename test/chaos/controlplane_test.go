package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// controlPlaneErrs is what startResumed found wrong with localcp's start,
// restart and resume; TestControlPlane reports it.
var controlPlaneErrs []error

// TestControlPlane fails when the control plane the runs use did not start,
// restart and resume as test/framework/localcp promises (see startResumed).
func TestControlPlane(t *testing.T) {
	for _, err := range controlPlaneErrs {
		t.Error(err)
	}
}

// startResumed starts the runs' control plane in dir and, before any
// process uses it, checks what `make run`, the demo and these runs rely on:
// a first start is fresh and writes a kubeconfig, kube-apiserver killed and
// started again serves the same clients what was written before (and was
// really down in between), and a Stop then a Start on the same directory
// resumes the state, which ApplyKustomization then leaves alone. Checking
// here costs one stop and start, where a test package of its own would cost
// one more control plane in `make test` (the shared ones cannot be
// stopped). What fails is kept for TestControlPlane; only a control plane
// that does not come up at all is an error.
func startResumed(root, dir string) (*localcp.ControlPlane, error) {
	ctx := context.Background()
	var errs []error
	check := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	defer func() { controlPlaneErrs = errs }()

	cp, err := localcp.Start(localcp.Options{Dir: dir, Fresh: true, Port: -1, Root: root, Audit: true})
	if err != nil {
		return nil, err
	}
	if cp.Resumed {
		check("first start reports resumed state")
	}
	if _, err := os.Stat(cp.Kubeconfig); err != nil {
		check("kubeconfig: %v", err)
	}
	kept := client.ObjectKey{Namespace: "default", Name: "localcp-kept"}
	samples := filepath.Join(root, "config", "samples")
	if err := cp.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kept.Namespace, Name: kept.Name}}); err != nil {
		check("create ConfigMap: %v", err)
	}
	if applied, err := localcp.ApplyKustomization(ctx, cp.Client, samples); err != nil {
		check("first apply: %v", err)
	} else if len(applied.Created) == 0 || len(applied.Existing) != 0 {
		check("first apply: %+v", applied)
	}

	var downErr error
	if err := cp.RestartAPIServer(func() {
		downErr = cp.Client.Get(ctx, kept, &corev1.ConfigMap{})
	}); err != nil {
		return nil, errors.Join(fmt.Errorf("restart kube-apiserver: %w", err), cp.Stop())
	}
	if downErr == nil {
		check("the API server answered while it was supposed to be down")
	}
	if err := cp.Client.Get(ctx, kept, &corev1.ConfigMap{}); err != nil {
		check("after the kube-apiserver restart: %v", err)
	}

	if err := cp.Stop(); err != nil {
		return nil, fmt.Errorf("stop the control plane: %w", err)
	}
	if cp, err = localcp.Start(localcp.Options{Dir: dir, Port: -1, Root: root, Audit: true}); err != nil {
		return nil, fmt.Errorf("start the control plane again on %s: %w", dir, err)
	}
	if !cp.Resumed {
		check("second start does not report resumed state")
	}
	if err := cp.Client.Get(ctx, kept, &corev1.ConfigMap{}); err != nil {
		check("ConfigMap not kept across restart: %v", err)
	}
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "demo-0"}, &clusterv1.Machine{}); err != nil {
		check("sample Machine not kept across restart: %v", err)
	}
	if applied, err := localcp.ApplyKustomization(ctx, cp.Client, samples); err != nil {
		check("second apply: %v", err)
	} else if len(applied.Created) != 0 {
		check("second apply created %v", applied.Created)
	}

	// The runs' operators manage every namespace: the samples would be one
	// more cluster for them. No controller ran yet, so nothing holds a
	// finalizer and the deletes take effect at once.
	if err := deleteSamples(ctx, cp.Client, samples); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

func deleteSamples(ctx context.Context, c client.Client, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	slices.Reverse(files)
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		objs, err := localcp.ReadObjects(f)
		if err != nil {
			return err
		}
		slices.Reverse(objs)
		for _, o := range objs {
			if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete sample %s %s: %w", o.GetKind(), o.GetName(), err)
			}
		}
	}
	return nil
}
