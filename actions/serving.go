package actions

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The metrics endpoint asks the API server who a scraper is (TokenReview)
// and whether it may get /metrics (SubjectAccessReview).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// DefaultMetricsAddress is where the operator serves metrics unless told
// otherwise: HTTPS, as Kubebuilder's scaffold does.
const DefaultMetricsAddress = ":8443"

// MetricsOptions are the metrics endpoint options of the operator, for the
// binary and the tests alike. Secure serves HTTPS and lets through only
// requests whose bearer token the API server authenticates and whose user
// RBAC allows get on the non-resource URL /metrics (the metrics-reader
// ClusterRole); without a certificate in certDir the endpoint signs its
// own. Not secure is plain HTTP for anyone who reaches the port, for a
// Prometheus that cannot present a token. HTTP/2 is off: the endpoint is
// reachable by anyone in the cluster before authentication, and HTTP/2's
// stream reset floods (CVE-2023-44487) cost the server before a request is
// refused.
func MetricsOptions(addr string, secure bool, certDir string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr, SecureServing: secure}
	if secure {
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		o.CertDir = certDir
		o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return o
}

// cacheSyncWait bounds how long one readiness probe waits for the cache: a
// probe that has not synced yet answers "not ready" rather than hanging
// until the kubelet's probe timeout.
const cacheSyncWait = 2 * time.Second

// CacheSynced is the operator's readiness check: ready once the manager's
// cache holds every Machine, MachineSet and Cluster it manages (each
// controller's kind has listed), so the metrics Service routes only to a
// replica whose gauges (counted from the cache) count them all. Only these
// kinds count: a provider kind met at run time that cannot be listed
// (reconciler.KindSync) keeps its informer unsynced for as long as it is
// broken, and must not take every replica out of service. The tables are
// loaded and linted before the manager is built (the binary exits on a
// finding), so a manager that answers at all has them.
func CacheSynced(mgr ctrl.Manager) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), cacheSyncWait)
		defer cancel()
		for _, c := range Controllers {
			// Before the cache starts this returns the informer unsynced
			// at once; after, it waits for the sync until ctx ends.
			inf, err := mgr.GetCache().GetInformer(ctx, c.Object)
			if err != nil {
				return fmt.Errorf("%s cache: %w", c.Name, err)
			}
			if !inf.HasSynced() {
				return fmt.Errorf("the %s cache has not synced yet", c.Name)
			}
		}
		return nil
	}
}

// AddProbes adds the operator's liveness check (the process answers) and
// its readiness check (CacheSynced).
func AddProbes(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("cache-synced", CacheSynced(mgr))
}
