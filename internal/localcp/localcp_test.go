package localcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestStateKeptAcrossRestarts starts a control plane, writes objects, stops
// it, starts it again on the same directory and finds them.
func TestStateKeptAcrossRestarts(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Assets(root); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")

	cp, err := Start(Options{Dir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Resumed {
		t.Error("first start reports resumed state")
	}
	if _, err := os.Stat(cp.Kubeconfig); err != nil {
		t.Errorf("kubeconfig: %v", err)
	}
	if err := cp.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept"}}); err != nil {
		t.Fatal(err)
	}
	applied, err := ApplyKustomization(ctx, cp.Client, filepath.Join(root, "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(applied.Created) == 0 || len(applied.Existing) != 0 {
		t.Errorf("first apply: %+v", applied)
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}

	cp, err = Start(Options{Dir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	if !cp.Resumed {
		t.Error("second start does not report resumed state")
	}
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kept"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("ConfigMap not kept across restart: %v", err)
	}
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "demo-0"}, &clusterv1.Machine{}); err != nil {
		t.Errorf("sample Machine not kept across restart: %v", err)
	}
	applied, err = ApplyKustomization(ctx, cp.Client, filepath.Join(root, "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(applied.Created) != 0 {
		t.Errorf("second apply created %v", applied.Created)
	}
}

// TestRestartAPIServer kills kube-apiserver and starts it again: the same
// client (same address, same certificates) reads what was written before,
// and the API server was really down in between.
func TestRestartAPIServer(t *testing.T) {
	ctx := context.Background()
	cp, err := Start(Options{Dir: filepath.Join(t.TempDir(), "state"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	if err := cp.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "before"}}); err != nil {
		t.Fatal(err)
	}
	var downErr error
	if err := cp.RestartAPIServer(func() {
		downErr = cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "before"}, &corev1.ConfigMap{})
	}); err != nil {
		t.Fatal(err)
	}
	if downErr == nil {
		t.Error("the API server answered while it was supposed to be down")
	}
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "before"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("after the restart: %v", err)
	}
}
