package localcp

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Starting, restarting kube-apiserver and resuming state from the same
// directory are checked by test/chaos, whose control plane is its own and
// restarted anyway; this package's tests run on the shared one, so they
// never stop it.
var env *ControlPlane

func TestMain(m *testing.M) {
	os.Exit(RunTests(m, func(cp *ControlPlane) error { env = cp; return nil }))
}

// Connect reads the kubeconfig; behind a proxy, StopAPIServer and
// StartAPIServer take the API server away from the proxy's clients only,
// and Stop of a connected control plane leaves it running.
func TestConnectBehindProxy(t *testing.T) {
	ctx := context.Background()
	ns := UniqueName("localcp")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	kept := client.ObjectKey{Namespace: ns, Name: "kept"}
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kept.Namespace, Name: kept.Name}}); err != nil {
		t.Fatal(err)
	}

	if _, err := os.Stat(env.Kubeconfig); err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	shared, err := Connect(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	proxied, err := shared.behindProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proxied.Stop() }()
	if proxied.URL == env.URL {
		t.Fatalf("proxied URL %s is the API server's", proxied.URL)
	}
	get := func(c client.Client) error { return c.Get(ctx, kept, &corev1.ConfigMap{}) }
	if err := get(proxied.Client); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if err := proxied.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	// A new client: the proxied one may hold a connection the cut already
	// dropped, which is also refused, but a fresh dial proves the listener
	// is gone.
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
	if err := get(env.Client); err != nil {
		t.Errorf("Stop of a connected control plane stopped it: %v", err)
	}
}

// Names of one process never repeat and carry its token, so packages
// sharing a control plane never meet.
func TestUniqueName(t *testing.T) {
	a, b := UniqueName("x"), UniqueName("x")
	if a == b {
		t.Errorf("UniqueName returned %s twice", a)
	}
	for _, n := range []string{a, b} {
		if !strings.HasPrefix(n, "x-"+RunToken()+"-") {
			t.Errorf("%s does not carry the run token %s", n, RunToken())
		}
	}
}

// etcd serves pprof at its client address when profiled (krtt-bench
// -profile reads its CPU profile there), and not otherwise. An etcd of its
// own, not the shared control plane's, so it can be stopped.
func TestEtcdProfiling(t *testing.T) {
	assets, err := Assets(RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, profiling := range []bool{true, false} {
		etcd := newEtcd(t.TempDir(), io.Discard, profiling)
		etcd.Path = filepath.Join(assets, "etcd")
		if err := etcd.Start(); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(etcd.URL.String() + "/debug/pprof/heap")
		if err == nil {
			_ = resp.Body.Close()
		}
		if stopErr := etcd.Stop(); stopErr != nil {
			t.Error(stopErr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if served := resp.StatusCode == http.StatusOK; served != profiling {
			t.Errorf("profiling %v: GET /debug/pprof/heap answered %s", profiling, resp.Status)
		}
	}
}
