package remote_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/leakcheck"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
)

func TestClusterOfSecret(t *testing.T) {
	for name, want := range map[string]string{"c1-kubeconfig": "c1", "a-b-kubeconfig": "a-b", "-kubeconfig": "", "c1": "", "c1-kubeconfig-x": ""} {
		got, ok := remote.ClusterOfSecret(name)
		if got != want || ok != (want != "") {
			t.Errorf("ClusterOfSecret(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestRESTConfigSaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		data map[string][]byte
		want string
	}{
		{nil, `has no kubeconfig under the key "value"`},
		{map[string][]byte{"value": []byte("{not yaml")}, "does not parse"},
		{map[string][]byte{"value": []byte("apiVersion: v1\nkind: Config\n")}, "does not parse"},
	} {
		_, err := remote.RESTConfig(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-kubeconfig"}, Data: tc.data})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ns/c-kubeconfig") {
			t.Errorf("RESTConfig(%v) = %v; want an error naming the Secret and saying %q", tc.data, err, tc.want)
		}
	}
}

// TestConnections runs the cache against two API servers: the management
// cluster (Secrets) and a workload cluster (Nodes).
func TestConnections(t *testing.T) {
	mgmt, err := localcp.ForTest()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mgmt.Stop() }()
	workload, err := localcp.WorkloadForTest()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = workload.Stop() }()
	ns := localcp.UniqueName("remote")
	if err := mgmt.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	g := leakcheck.NewGroup(t)
	ctx := g.Context()
	mgr, err := ctrl.NewManager(mgmt.Config, ctrl.Options{Scheme: mgmt.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	cache := remote.New(mgr.GetClient(), mgr.GetAPIReader(), remote.Options{Scheme: mgmt.Scheme, SelfHosted: true,
		HealthInterval: 200 * time.Millisecond, HealthTimeout: 2 * time.Second, FailureThreshold: 2})
	events := cache.Subscribe()
	w := &watcher{}
	cache.AddWatcher(w)
	if err := mgr.Add(cache); err != nil {
		t.Fatal(err)
	}
	g.Go("manager", mgr)
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}

	key := client.ObjectKey{Namespace: ns, Name: "c1"}
	connect := func(want remote.State, msg string) remote.Connection {
		t.Helper()
		var got remote.Connection
		err := poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
			var err error
			got, err = cache.ClientFor(ctx, key)
			if err != nil {
				return err
			}
			if got.State != want || !strings.Contains(got.Message, msg) {
				return fmt.Errorf("state %s message %q; want %s with %q", got.State, got.Message, want, msg)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	t.Run("no Secret: self-hosted, through the management client", func(t *testing.T) {
		c := connect(remote.SelfHosted, "management cluster")
		if c.Client != mgr.GetClient() {
			t.Errorf("self-hosted client is not the management client")
		}
	})

	kubeconfig, err := remote.Kubeconfig(workload.Config, "workload")
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: remote.SecretName(key.Name)},
		Data: map[string][]byte{remote.SecretKey: kubeconfig}}
	if err := mgmt.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}, Spec: corev1.NodeSpec{ProviderID: "sim://x/y"}}
	if err := workload.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}

	t.Run("Secret: connected to the workload cluster, with watches", func(t *testing.T) {
		c := connect(remote.Connected, workload.Config.Host)
		err := poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
			return c.Client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{})
		})
		if err != nil {
			t.Fatalf("the Node of the workload cluster is not read through the connection: %v", err)
		}
		if err := mgmt.Client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}); err == nil {
			t.Fatal("the management cluster has the workload cluster's Node: the two are not apart")
		}
		if n := w.started(key); n != 1 {
			t.Errorf("watches started %d times for %s, want 1", n, key)
		}
		if cfg := w.config(key); cfg == nil || cfg.QPS != remote.DefaultClientQPS || cfg.Burst != remote.DefaultClientBurst {
			t.Errorf("the workload cluster's client is not limited to Cluster API's %d requests per second, bursts of %d: %+v",
				remote.DefaultClientQPS, remote.DefaultClientBurst, cfg)
		}
		if !c.ReachableAgain.IsZero() {
			t.Errorf("ReachableAgain = %s on a connection usable from the start", c.ReachableAgain)
		}
		if c.LastProbeSuccess.IsZero() || c.Establishing {
			t.Errorf("a connected cluster has LastProbeSuccess %s, Establishing %t", c.LastProbeSuccess, c.Establishing)
		}
		expectEvent(t, events, key)
	})

	t.Run("bad credentials: NoAccess, saying so", func(t *testing.T) {
		bad := rest.CopyConfig(workload.Config)
		bad.CertData, bad.KeyData, bad.BearerToken = nil, nil, "not-a-token"
		data, err := remote.Kubeconfig(bad, "workload")
		if err != nil {
			t.Fatal(err)
		}
		setSecret(ctx, t, mgmt.Client, secret, data)
		// The probe history is the Cluster's: the new Secret's connection
		// remembers that the cluster was reached before, so it is not
		// being established but failing.
		if c := connect(remote.NoAccess, "refused the credentials of Secret "+ns+"/c1-kubeconfig"); c.LastProbeSuccess.IsZero() || c.Establishing {
			t.Errorf("LastProbeSuccess = %s, Establishing = %t after the cluster was reached with the Secret before", c.LastProbeSuccess, c.Establishing)
		}
	})

	t.Run("Secret that does not parse: NoAccess, saying so", func(t *testing.T) {
		setSecret(ctx, t, mgmt.Client, secret, []byte("{not a kubeconfig"))
		connect(remote.NoAccess, "does not parse")
	})

	t.Run("Secret fixed: connected again, on a new connection", func(t *testing.T) {
		setSecret(ctx, t, mgmt.Client, secret, kubeconfig)
		c := connect(remote.Connected, workload.Config.Host)
		if c.ReachableAgain.IsZero() {
			t.Error("a Secret fixed after NoAccess does not say when the workload cluster became usable again")
		}
		if n := w.started(key); n != 2 {
			t.Errorf("watches started %d times for %s, want 2 (a new connection for the new Secret)", n, key)
		}
	})

	t.Run("API server gone: Unreachable after the failure threshold", func(t *testing.T) {
		before := connect(remote.Connected, workload.Config.Host)
		// The probes go on while the cluster answers: a later look finds a
		// later success.
		err := poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
			c, err := cache.ClientFor(ctx, key)
			if err != nil {
				return err
			}
			if !c.LastProbeSuccess.After(before.LastProbeSuccess) {
				return fmt.Errorf("LastProbeSuccess still %s", c.LastProbeSuccess)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := workload.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		c := connect(remote.Unreachable, "does not answer")
		if c.LastProbeSuccess.IsZero() || c.LastProbeSuccess.After(c.Since) {
			t.Errorf("LastProbeSuccess = %s, want the last success before the cluster became unreachable at %s", c.LastProbeSuccess, c.Since)
		}
		if c.Client != nil || c.Usable() {
			t.Error("an unreachable workload cluster hands out a client")
		}
		if !strings.Contains(c.Message, "probes in a row failed") {
			t.Errorf("message %q does not say the probes failed", c.Message)
		}
	})

	// forget deletes a Cluster's Secret and waits until its connection is
	// closed (the Cluster reads as self-hosted again).
	forget := func(t *testing.T, key client.ObjectKey, s *corev1.Secret) {
		t.Helper()
		if err := mgmt.Client.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
		err := poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
			c, err := cache.ClientFor(ctx, key)
			if err == nil && c.State != remote.SelfHosted {
				err = fmt.Errorf("state %s after the Secret was deleted, want SelfHosted", c.State)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a server never reached: establishing until the failure threshold, announced when it ends", func(t *testing.T) {
		key := client.ObjectKey{Namespace: ns, Name: "never"}
		dead := rest.CopyConfig(workload.Config)
		dead.Host = "https://127.0.0.1:1"
		data, err := remote.Kubeconfig(dead, "dead")
		if err != nil {
			t.Fatal(err)
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: remote.SecretName(key.Name)},
			Data: map[string][]byte{remote.SecretKey: data}}
		if err := mgmt.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		// The first attempt is made before ClientFor returns: one failure,
		// under the threshold of 2.
		err = poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
			c, err := cache.ClientFor(ctx, key)
			if err != nil {
				return err
			}
			if c.State != remote.Unreachable {
				return fmt.Errorf("state %s, want Unreachable", c.State)
			}
			if !c.Establishing || !c.LastProbeSuccess.IsZero() {
				t.Errorf("after its first attempt a connection never reached has Establishing = %t, LastProbeSuccess = %s", c.Establishing, c.LastProbeSuccess)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The first failure was announced; the second ends the
		// establishing, and although the state stays Unreachable that is
		// announced too.
		expectEvent(t, events, key)
		expectEvent(t, events, key)
		c, err := cache.ClientFor(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if c.State != remote.Unreachable || c.Establishing {
			t.Errorf("after the failure threshold: state %s, Establishing = %t; want Unreachable, false", c.State, c.Establishing)
		}
		forget(t, key, s)
	})

	t.Run("a Secret that cannot work as it is: failed at once, not being established", func(t *testing.T) {
		key := client.ObjectKey{Namespace: ns, Name: "unparsable"}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: remote.SecretName(key.Name)},
			Data: map[string][]byte{remote.SecretKey: []byte("{not a kubeconfig")}}
		if err := mgmt.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		err := poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
			c, err := cache.ClientFor(ctx, key)
			if err == nil && (c.State != remote.NoAccess || c.Establishing) {
				err = fmt.Errorf("state %s, Establishing %t; want NoAccess, false", c.State, c.Establishing)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		forget(t, key, s)
	})

	t.Run("Secret deleted: self-hosted again, connection closed", func(t *testing.T) {
		if err := mgmt.Client.Delete(ctx, secret); err != nil {
			t.Fatal(err)
		}
		connect(remote.SelfHosted, "")
		if open := cache.Open(); len(open) != 0 {
			t.Errorf("connections still open: %v", open)
		}
	})
}

func setSecret(ctx context.Context, t *testing.T, c client.Client, s *corev1.Secret, data []byte) {
	t.Helper()
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{remote.SecretKey: data}
	if err := c.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// expectEvent drains announced state changes until one names the Cluster.
func expectEvent(t *testing.T, ch <-chan event.GenericEvent, key client.ObjectKey) {
	t.Helper()
	deadline := time.After(poll.Timeout())
	for {
		select {
		case ev := <-ch:
			if client.ObjectKeyFromObject(ev.Object) == key {
				return
			}
		case <-deadline:
			t.Fatalf("no state change announced for %s", key)
		}
	}
}

// watcher counts the connections it was asked to watch.
type watcher struct {
	mu  sync.Mutex
	n   map[client.ObjectKey]int
	cfg map[client.ObjectKey]*rest.Config
}

func (w *watcher) WatchCluster(_ context.Context, key client.ObjectKey, c cluster.Cluster) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n, w.cfg = map[client.ObjectKey]int{}, map[client.ObjectKey]*rest.Config{}
	}
	w.n[key]++
	w.cfg[key] = c.GetConfig()
	return nil
}

// config is the client configuration of the last cluster watched for key.
func (w *watcher) config(key client.ObjectKey) *rest.Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cfg[key]
}

func (w *watcher) started(key client.ObjectKey) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[key]
}

// TestConnectLosingTheServerIsUnreachable: an API server that answers the
// probe and then fails while the cached cluster is built (discovery) is a
// server going away mid-connect, not a kubeconfig that cannot be used: the
// Cluster is Unreachable and the connection tries again, never a permanent
// NoAccess.
func TestConnectLosingTheServerIsUnreachable(t *testing.T) {
	mgmt, err := localcp.ForTest()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mgmt.Stop() }()
	// The server answers discovery once (the probe's), then fails it.
	var discoveries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}`))
		case "/apis":
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`))
		case "/api/v1":
			if discoveries.Add(1) > 1 {
				http.Error(w, "going away", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[` +
				`{"name":"nodes","singularName":"node","namespaced":false,"kind":"Node","verbs":["get","list","watch"]},` +
				`{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get","list","watch"]}]}`))
		case "/api/v1/nodes":
			_, _ = w.Write([]byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":[]}`))
		default:
			http.Error(w, "going away", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()

	// Pods in ByObject make building the cached cluster ask the server
	// whether Pods are namespaced, as the operator's slim cache does.
	ctx, clusters, key := cacheOfOneSecret(t, mgmt, srv.URL, remote.Options{Scheme: mgmt.Scheme,
		HealthInterval: 200 * time.Millisecond, HealthTimeout: 2 * time.Second, FailureThreshold: 2,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {}}}})

	var got remote.Connection
	err = poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
		var err error
		if got, err = clusters.ClientFor(ctx, key); err != nil {
			return err
		}
		if got.State == remote.NoAccess {
			return nil // final: reported below
		}
		if got.State != remote.Unreachable {
			return fmt.Errorf("state %s, want Unreachable", got.State)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.State != remote.Unreachable {
		t.Fatalf("state %s for a server that went away while connecting, want Unreachable: %s", got.State, got.Message)
	}
	// Tried again: the connection was not given up on.
	seen := discoveries.Load()
	if err := poll.Until(ctx, poll.Timeout(), func(context.Context) error {
		if discoveries.Load() <= seen {
			return fmt.Errorf("no new connect attempt after %d discovery requests", seen)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestAServerThatNeverAnswersDoesNotHoldTheCaller: a workload API server
// that answers the probe and discovery but never answers a write or a
// list fails each call through the connection's client after
// Options.RequestTimeout, a cache read of a kind whose informer cannot sync
// included, instead of holding the reconcile that made it.
func TestAServerThatNeverAnswersDoesNotHoldTheCaller(t *testing.T) {
	mgmt, err := localcp.ForTest()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mgmt.Stop() }()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}`))
		case r.URL.Path == "/apis":
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`))
		case r.URL.Path == "/api/v1":
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[` +
				`{"name":"nodes","singularName":"node","namespaced":false,"kind":"Node","verbs":["get","list","watch","patch"]},` +
				`{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get","list","watch"]}]}`))
		case r.URL.Path == "/api/v1/nodes" && r.URL.Query().Get("limit") == "1":
			// The probe.
			_, _ = w.Write([]byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":[]}`))
		default:
			// Accepted, never answered.
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		}
	}))
	defer srv.Close()
	defer close(stop)

	ctx, clusters, key := cacheOfOneSecret(t, mgmt, srv.URL, remote.Options{Scheme: mgmt.Scheme,
		HealthInterval: 200 * time.Millisecond, HealthTimeout: 2 * time.Second, RequestTimeout: 300 * time.Millisecond})
	var conn remote.Connection
	if err := poll.Until(ctx, poll.Timeout(), func(ctx context.Context) error {
		var err error
		if conn, err = clusters.ClientFor(ctx, key); err != nil {
			return err
		}
		if conn.State != remote.Connected {
			return fmt.Errorf("state %s: %s", conn.State, conn.Message)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	ns := key.Namespace
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`))
	for name, call := range map[string]func(context.Context) error{
		"cordon (a write)": func(ctx context.Context) error { return conn.Client.Patch(ctx, node, patch) },
		"list Pods (a cache read whose informer cannot sync)": func(ctx context.Context) error {
			return conn.Client.List(ctx, &corev1.PodList{}, client.InNamespace(ns))
		},
	} {
		// The caller's context outlives the request timeout by far: only
		// the connection's client can end the call.
		callCtx, cancel := context.WithTimeout(ctx, poll.Timeout())
		err := call(callCtx)
		callErr := callCtx.Err()
		cancel()
		if err == nil || callErr != nil {
			t.Errorf("%s against a server that never answers: %v (caller's context: %v); want it to fail on the client's own timeout", name, err, callErr)
		}
	}
}

// cacheOfOneSecret runs a Cache with opts in a manager of mgmt, with one
// Cluster's kubeconfig Secret naming the API server at url; it returns the
// context of the test's goroutines and the Cluster's key.
func cacheOfOneSecret(t *testing.T, mgmt *localcp.ControlPlane, url string, opts remote.Options) (context.Context, *remote.Cache, client.ObjectKey) {
	t.Helper()
	ns := localcp.UniqueName("remote")
	ctx := context.Background()
	if err := mgmt.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := remote.Kubeconfig(&rest.Config{Host: url}, "workload")
	if err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "c1"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: remote.SecretName(key.Name)},
		Data: map[string][]byte{remote.SecretKey: kubeconfig}}
	if err := mgmt.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	g := leakcheck.NewGroup(t)
	ctx = g.Context()
	mgr, err := ctrl.NewManager(mgmt.Config, ctrl.Options{Scheme: mgmt.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	clusters := remote.New(mgr.GetClient(), mgr.GetAPIReader(), opts)
	if err := mgr.Add(clusters); err != nil {
		t.Fatal(err)
	}
	g.Go("manager", mgr)
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	return ctx, clusters, key
}
