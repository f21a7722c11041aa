// Package operator wires the krtt controllers into a controller-runtime
// manager; the operator binary, the local run and the tests share it.
package operator

import (
	"context"

	"time"

	"k8s.io/client-go/rest"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/controller/cluster"
	"github.com/krtt-dev/krtt/internal/controller/machine"
	"github.com/krtt-dev/krtt/internal/remote"
	krtttables "github.com/krtt-dev/krtt/tables"
)

// Scheme knows the built-in types and the cluster.krtt.dev API. Provider
// objects are read as unstructured, so their types are not registered.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := clusterv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Options for Setup.
type Options struct {
	MachineConcurrency int
	// Now is the controllers' clock; time.Now when nil (tests inject one).
	Now func() time.Time
	// Workload configures the workload cluster connections (health probe
	// interval, timeout, failure threshold); zero values are the defaults.
	Workload remote.Options
	// ClusterSet is the Cluster controller's table set; nil: the embedded one.
	ClusterSet *engine.Set
	// Traces, when set, receives the traces of the controllers other than
	// the Machine controller (whose runner the caller gets back).
	Traces func(engine.Trace)
}

// Setup adds the Machine controller for the given table set, and the
// workload cluster connections its Node side goes through.
func Setup(ctx context.Context, mgr ctrl.Manager, set *engine.Set, opts Options) (*machine.Reconciler, error) {
	clusters, err := WorkloadClusters(mgr, opts.Workload)
	if err != nil {
		return nil, err
	}
	if err := setupCluster(mgr, clusters, opts); err != nil {
		return nil, err
	}
	return machine.Setup(ctx, mgr, set, machine.Options{MaxConcurrentReconciles: opts.MachineConcurrency, Now: opts.Now, Clusters: clusters})
}

// setupCluster adds the Cluster controller (conditions and counts only, so
// two workers are plenty).
func setupCluster(mgr ctrl.Manager, clusters *remote.Cache, opts Options) error {
	set := opts.ClusterSet
	if set == nil {
		var err error
		if set, err = krtttables.Load(krtttables.Cluster, ""); err != nil {
			return err
		}
	}
	r, err := cluster.Setup(mgr, set, cluster.Options{MaxConcurrentReconciles: 2, Now: opts.Now, Clusters: clusters})
	if err != nil {
		return err
	}
	if opts.Traces != nil {
		r.Runner().Subscribe(opts.Traces)
	}
	return nil
}

// WorkloadClusters is the manager's cache of workload cluster connections,
// with the indexes the Machine controller reads through.
func WorkloadClusters(mgr ctrl.Manager, o remote.Options) (*remote.Cache, error) {
	if o.Scheme == nil {
		o.Scheme = Scheme()
	}
	o.Indexes = append(o.Indexes, machine.Indexes()...)
	c := remote.New(mgr.GetClient(), mgr.GetAPIReader(), o)
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// LeaderElectionID names the Lease the operator's replicas elect a leader on.
const LeaderElectionID = "krtt-operator.krtt.dev"

// NewManager is the one way the operator's manager is built, by the binary,
// make run, the demo and the tests alike: krtt's scheme, provider objects
// read from the cache, the shared Lease name, and no metrics endpoint unless
// one is asked for (tests run several managers in one process).
func NewManager(cfg *rest.Config, o ctrl.Options) (ctrl.Manager, error) {
	o.Scheme = Scheme()
	o.Client = ClientOptions()
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = LeaderElectionID
	}
	if o.Metrics.BindAddress == "" {
		o.Metrics.BindAddress = "0"
	}
	return ctrl.NewManager(cfg, o)
}

// ClientOptions make the manager's client serve provider objects (read as
// unstructured, by the provider contract) from its cache as well: the
// operator reads them on every reconcile and watches their kinds anyway.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{Unstructured: true}}
}
