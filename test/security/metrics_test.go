package security

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/actions/controller"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
)

// TestMetricsEndpointNeedsAReader runs the operator as its ServiceAccount
// under config/rbac, with the metrics options and probes the binary uses,
// and scrapes it with the tokens of two ServiceAccounts: the one bound to
// krtt-metrics-reader reads the metrics, the other is refused, and so is a
// request without a token. The operator's own reviews of the tokens must
// pass its RBAC. Readiness waits for the cache.
func TestMetricsEndpointNeedsAReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	applyRBAC(t, ctx)
	reader := &rbacv1.ClusterRole{}
	b, err := os.ReadFile(filepath.Join(localcp.RepoRoot(), "config", "rbac", "metrics_reader_role.yaml"))
	harness.Must(t, err)
	harness.Must(t, sigsyaml.UnmarshalStrict(b, reader))
	create(t, ctx, reader)

	mport, err := localcp.FreePort()
	harness.Must(t, err)
	pport, err := localcp.FreePort()
	harness.Must(t, err)
	rec := &recorder{requests: map[access]int{}, forbidden: map[string]int{}}
	opts, err := harness.OperatorOptions(harness.Filter)
	harness.Must(t, err)
	opts.Metrics = actions.MetricsOptions(fmt.Sprintf("127.0.0.1:%d", mport), true, "")
	opts.HealthProbeBindAddress = fmt.Sprintf("127.0.0.1:%d", pport)
	mgr, err := actions.NewManager(operatorConfig(rec), opts)
	harness.Must(t, err)
	harness.Must(t, actions.Setup(ctx, mgr, nil, controller.Options{Concurrency: 1}))
	harness.Must(t, actions.AddProbes(mgr))

	// Not started, the cache has not synced: not ready.
	req, _ := http.NewRequest(http.MethodGet, "/readyz", nil)
	if err := actions.CacheSynced(mgr)(req); err == nil {
		t.Error("CacheSynced passed before the manager started")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	defer func() { cancel(); <-done }()
	waitFor(t, "readyz 200", func() (bool, string) {
		code, body := get(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", pport), "")
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})

	ns := localcp.UniqueName("metrics")
	create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	allowed, denied := saToken(t, ctx, ns, "scraper"), saToken(t, ctx, ns, "stranger")
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: ns}},
	}
	create(t, ctx, binding)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), binding) })
	// The endpoint remembers a refusal for 30s: scrape only once the API
	// server's RBAC has seen the binding.
	waitFor(t, "the binding to take effect", func() (bool, string) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  "system:serviceaccount:" + ns + ":scraper",
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		}}
		harness.Must(t, env.Client.Create(ctx, sar))
		return sar.Status.Allowed, sar.Status.Reason
	})

	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", mport)
	// The metrics server listens once it has made its serving certificate,
	// which readiness does not wait for: ask without a token until it
	// answers (a 401 caches nothing that a later scrape could meet).
	waitFor(t, "the metrics endpoint to listen", func() (bool, string) {
		code, body := get(t, url, "")
		return code != 0, fmt.Sprintf("%d %.200s", code, body)
	})
	code, body := get(t, url, allowed)
	if code != http.StatusOK {
		t.Fatalf("the metrics reader got %d: %s", code, body)
	}
	for _, want := range []string{"krtt_machines{", "krtt_api_requests_total{"} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	checkUsedMetricsRegistered(t)
	if code, body := get(t, url, denied); code != http.StatusForbidden {
		t.Errorf("a ServiceAccount without the metrics-reader role got %d, want 403: %.200s", code, body)
	}
	if code, body := get(t, url, ""); code != http.StatusUnauthorized {
		t.Errorf("a request without a token got %d, want 401: %.200s", code, body)
	}
	if code, _ := get(t, strings.Replace(url, "https:", "http:", 1), ""); code != 0 && code < 400 {
		t.Errorf("plain HTTP was served (%d)", code)
	}
	if f := rec.forbiddenList(); len(f) > 0 {
		t.Errorf("the operator's ServiceAccount was refused:\n  %s", strings.Join(f, "\n  "))
	}
	for _, a := range []access{
		{Group: authenticationv1.GroupName, Resource: "tokenreviews", Verb: "create"},
		{Group: authorizationv1.GroupName, Resource: "subjectaccessreviews", Verb: "create"},
	} {
		if !rec.used(func(b access) bool { return b == a }) {
			t.Errorf("the endpoint never asked the API server (%s)", a)
		}
	}
}

// create creates o as admin, accepting one left by an earlier run.
func create(t *testing.T, ctx context.Context, o client.Object) {
	t.Helper()
	if err := env.Client.Create(ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
}

// saToken creates the ServiceAccount and returns a token the API server
// issued for it (TokenRequest).
func saToken(t *testing.T, ctx context.Context, ns, name string) string {
	t.Helper()
	create(t, ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	cs, err := kubernetes.NewForConfig(env.Config)
	harness.Must(t, err)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	harness.Must(t, err)
	return tr.Status.Token
}

// get returns the status and body of a GET with the bearer token (none when
// empty); code 0 when the request failed. The endpoint's certificate is
// self-signed, made at start: there is nothing to trust it by.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	harness.Must(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond until it holds, failing t after the test deadline
// (poll.Timeout) with cond's last detail.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	err := poll.Until(context.Background(), poll.Timeout(), func(context.Context) error {
		if ok, detail := cond(); !ok {
			return errors.New(detail)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// checkUsedMetricsRegistered fails for every metric the alerts and the
// dashboard read (test/alerts/testdata/used-metrics.txt, kept by that
// module's parse of their queries) that the registry the endpoint serves
// does not hold. A counter or gauge with labels appears in a scrape only
// once a series exists (no reconcile error yet, no Machine being deleted),
// so the registry is asked: registering a probe of that name fails when
// the name is taken.
func checkUsedMetricsRegistered(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(localcp.RepoRoot(), "test", "alerts", "testdata", "used-metrics.txt"))
	harness.Must(t, err)
	names := strings.Fields(string(b))
	if len(names) == 0 {
		t.Fatal("used-metrics.txt lists no metric")
	}
	for _, name := range names {
		// A histogram's series are named after it with these suffixes.
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if trimmed, ok := strings.CutSuffix(name, suffix); ok && !registered(name) {
				base = trimmed
			}
		}
		if !registered(base) {
			t.Errorf("the alerts or the dashboard read %s, which the operator does not export", name)
		}
	}
}

// registered reports whether the operator's registry holds a metric named
// name (one without constant labels, as all of krtt's and
// controller-runtime's are).
func registered(name string) bool {
	probe := probeCollector{prometheus.NewDesc(name, "probe", nil, nil)}
	err := ctrlmetrics.Registry.Register(probe)
	if err == nil {
		ctrlmetrics.Registry.Unregister(probe)
		return false
	}
	var already prometheus.AlreadyRegisteredError
	return errors.As(err, &already) || strings.Contains(err.Error(), "same fully-qualified name")
}

type probeCollector struct{ desc *prometheus.Desc }

func (p probeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }
func (p probeCollector) Collect(chan<- prometheus.Metric)    {}
