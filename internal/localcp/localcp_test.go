package localcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestControlPlane starts one control plane (this package's tests start it
// on purpose, not through ForTest) and exercises what the others rely on:
// a kubeconfig, restarting kube-apiserver under live clients, a proxy that
// takes it away and brings it back, Connect from a kubeconfig, and state
// kept across a stop and a start on the same directory.
func TestControlPlane(t *testing.T) {
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
	stopped := false
	defer func() {
		if !stopped {
			_ = cp.Stop()
		}
	}()
	if cp.Resumed {
		t.Error("first start reports resumed state")
	}
	if _, err := os.Stat(cp.Kubeconfig); err != nil {
		t.Errorf("kubeconfig: %v", err)
	}
	kept := client.ObjectKey{Namespace: "default", Name: "kept"}
	if err := cp.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kept.Namespace, Name: kept.Name}}); err != nil {
		t.Fatal(err)
	}
	applied, err := ApplyKustomization(ctx, cp.Client, filepath.Join(root, "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(applied.Created) == 0 || len(applied.Existing) != 0 {
		t.Errorf("first apply: %+v", applied)
	}

	// kube-apiserver killed and started again: the same client (same
	// address, same certificates) reads what was written before, and the
	// API server was really down in between.
	t.Run("RestartAPIServer", func(t *testing.T) {
		var downErr error
		if err := cp.RestartAPIServer(func() {
			downErr = cp.Client.Get(ctx, kept, &corev1.ConfigMap{})
		}); err != nil {
			t.Fatal(err)
		}
		if downErr == nil {
			t.Error("the API server answered while it was supposed to be down")
		}
		if err := cp.Client.Get(ctx, kept, &corev1.ConfigMap{}); err != nil {
			t.Errorf("after the restart: %v", err)
		}
	})

	// Connect reads the kubeconfig; behind a proxy, StopAPIServer and
	// StartAPIServer take the API server away from the proxy's clients only.
	t.Run("ConnectBehindProxy", func(t *testing.T) {
		shared, err := Connect(cp.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		proxied, err := shared.behindProxy()
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = proxied.Stop() }()
		if proxied.URL == cp.URL {
			t.Fatalf("proxied URL %s is the API server's", proxied.URL)
		}
		get := func(c client.Client) error { return c.Get(ctx, kept, &corev1.ConfigMap{}) }
		if err := get(proxied.Client); err != nil {
			t.Fatalf("through the proxy: %v", err)
		}
		if err := proxied.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		// A new client: the proxied one may hold a connection the cut
		// already dropped, which is also refused, but a fresh dial proves
		// the listener is gone.
		fresh, err := client.New(rest.CopyConfig(proxied.Config), client.Options{Scheme: proxied.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := get(fresh); err == nil {
			t.Error("the proxy answered while cut")
		}
		if err := get(proxied.Client); err == nil {
			t.Error("the proxied client got an answer while cut")
		}
		if err := get(shared.Client); err != nil {
			t.Errorf("the API server itself stopped answering: %v", err)
		}
		if err := proxied.StartAPIServer(); err != nil {
			t.Fatal(err)
		}
		if err := get(proxied.Client); err != nil {
			t.Errorf("after the proxy came back: %v", err)
		}
		if err := shared.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := get(cp.Client); err != nil {
			t.Errorf("Stop of a connected control plane stopped it: %v", err)
		}
	})

	stopped = true
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
	if err := cp.Client.Get(ctx, kept, &corev1.ConfigMap{}); err != nil {
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
