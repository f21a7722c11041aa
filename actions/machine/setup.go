// Package machine is the Machine controller: the Machine tables, facts and
// actions (actions/machine) run by the controller kit (reconciler/). This
// package only says what a Machine is to the kit and which events wake one.
package machine

import (
	"context"
	"fmt"
	"time"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Name is the controller's name: metrics label, Events reporter.
const Name = "machine"

// observeTimeout bounds reading a Machine's world in one reconcile.
const observeTimeout = 10 * time.Second

// Catalogs are the catalogs of the registries the Machine tables name:
// the Machine registry and the Pod verdict decision table's.
func Catalogs() []*engine.Catalog {
	return []*engine.Catalog{Registry().Catalog(), PodRegistry().Catalog()}
}

// Spec is the Machine controller for the kit: its tables, registry and
// observer. c reads the management cluster; clusters reaches the Node side
// (nil: the management cluster); w may be nil (explain); sync is what,
// beyond the domains always copied, goes from a Machine to its Node.
func Spec(set *engine.TableSet, c client.Client, clusters ClusterClients, w *reconciler.KindWatcher, sync controller.NodeSync) reconciler.Spec[*clusterv1.Machine, *Scope] {
	if clusters == nil {
		clusters = LocalClusterClients{Client: c}
	}
	obs := newObserver(set, c, clusters, w)
	obs.NodeSync = sync
	return reconciler.Spec[*clusterv1.Machine, *Scope]{
		Name:             Name,
		Set:              set,
		Registry:         Registry(),
		NewObject:        func() *clusterv1.Machine { return &clusterv1.Machine{} },
		NewList:          func() client.ObjectList { return &clusterv1.MachineList{} },
		Finalizer:        clusterv1.MachineFinalizer,
		LegacyFinalizers: []string{clusterv1.LegacyMachineFinalizer},
		ObserveTimeout:   observeTimeout,
		Told:             func(s *Scope) *reconciler.Told { return &s.Told },
		Observe: func(ctx context.Context, key client.ObjectKey, now time.Time) reconciler.Observation[*clusterv1.Machine, *Scope] {
			s := obs.Observe(ctx, key, now)
			return reconciler.Observation[*clusterv1.Machine, *Scope]{Env: s, Object: s.Machine, Found: s.MachineFound, Err: s.Err}
		},
	}
}

// newObserver is the observer of Spec. w is given only on the manager's
// path, whose cache holds machineIndexes; krtt explain reads without them.
func newObserver(set *engine.TableSet, c client.Client, clusters ClusterClients, w *reconciler.KindWatcher) *Observer {
	obs := &Observer{Client: c, Clusters: clusters, Indexed: w != nil}
	// Setup refuses a set without the Pod verdict table; without it the
	// drain fails with a message naming it.
	obs.PodVerdicts, _ = PodVerdicts(set)
	if w != nil {
		obs.Watcher = w
	}
	return obs
}

// machineIndexes are the Machine indexes of the manager's cache.
func machineIndexes() []remote.Index {
	return []remote.Index{
		{Object: &clusterv1.Machine{}, Field: machineProviderIDIndex, Extract: indexMachineByProviderID},
		{Object: &clusterv1.Machine{}, Field: machineExternalRefIndex, Extract: indexMachineByExternalRef},
		{Object: &clusterv1.Machine{}, Field: controlPlaneMachineIndex, Extract: indexControlPlaneMachine},
	}
}

// Setup registers the indexes, builds the Machine controller on the kit and
// adds it to the manager.
func Setup(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	set := opts.Set
	if _, err := PodVerdicts(set); err != nil {
		return err
	}
	w := reconciler.NewKindWatcher(&clusterv1.Machine{})
	var clusters ClusterClients
	if opts.Clusters != nil {
		clusters = opts.Clusters
		opts.Clusters.AddIndexes(Indexes()...)
	}
	r, err := reconciler.New(Spec(set, mgr.GetClient(), clusters, w, opts.NodeSync), opts.Kit(mgr, Name))
	if err != nil {
		return err
	}
	idx := mgr.GetFieldIndexer()
	// An index starts an informer: without self-hosted Clusters the
	// management cluster's Nodes and Pods are neither read nor granted.
	if opts.LocalNodeSide() {
		for _, ix := range Indexes() {
			if err := idx.IndexField(ctx, ix.Object, ix.Field, ix.Extract); err != nil {
				return fmt.Errorf("index %s: %w", ix.Field, err)
			}
		}
	}
	for _, ix := range machineIndexes() {
		if err := idx.IndexField(ctx, ix.Object, ix.Field, ix.Extract); err != nil {
			return fmt.Errorf("index %s: %w", ix.Field, err)
		}
	}
	m := mapper{client: mgr.GetClient(), nodes: mgr.GetClient()}
	w.Referrers = m.machinesNaming
	b := r.Builder(mgr).
		// A Cluster's spec (pause) and deletion matter to its Machines, not
		// its status, which the Cluster controller rewrites as they change.
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(m.clusterToMachines), builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
				predicate.AnnotationChangedPredicate{}, deletionRequested()))).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(m.secretToMachines), builder.WithPredicates(remote.KubeconfigSecrets())).
		// A drain rule that changes changes Pod verdicts: look again at once.
		Watches(&clusterv1.MachineDrainRule{}, handler.EnqueueRequestsFromMapFunc(m.drainingMachines)).
		// A deployment's new template or revision changes whether its
		// Machines are up to date.
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(m.deploymentToMachines), builder.WithPredicates(rolloutChanged()))
	// The management cluster is the Node side of self-hosted Clusters.
	if opts.LocalNodeSide() {
		for _, src := range m.nodeSideSources(mgr.GetCache()) {
			b = b.WatchesRawSource(src)
		}
	}
	if opts.Clusters != nil {
		b = b.WatchesRawSource(workloadEvents(opts.Clusters.Subscribe(), handler.EnqueueRequestsFromMapFunc(m.clusterToMachines)))
	}
	if err := r.Setup(mgr, b, opts.Concurrency, w); err != nil {
		return err
	}
	if opts.Clusters != nil {
		opts.Clusters.AddWatcher(m.workloadWatcher(r.Controller()))
	}
	return nil
}
