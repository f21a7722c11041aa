// Package cluster is the Cluster controller: the Cluster tables, facts and
// actions (actions/cluster) run by the controller kit. It sets a Cluster's
// WorkloadClusterReachable and MachinesReady conditions and status.machines,
// and tears a deleted Cluster down (its MachineDeployments, MachineSets and
// Machines first).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Name is the controller's name: metrics label, Events reporter.
const Name = "cluster"

// observeTimeout bounds one reconcile's reads (opening a connection
// included).
const observeTimeout = 10 * time.Second

// Spec is the Cluster controller for the kit.
// machines reads a Cluster's Machines (nil: listed through c), secrets a
// Secret's data (nil: through c).
func Spec(set *engine.TableSet, c client.Client, conns Connections, w *reconciler.KindWatcher, machines MachinesOfCluster, secrets client.Reader) reconciler.Spec[*clusterv1.Cluster, *Scope] {
	obs := &Observer{Client: c, Connections: conns, Watcher: w, Machines: machines, Secrets: secrets}
	return reconciler.Spec[*clusterv1.Cluster, *Scope]{
		Name:             Name,
		Set:              set,
		Registry:         Registry(),
		NewObject:        func() *clusterv1.Cluster { return &clusterv1.Cluster{} },
		NewList:          func() client.ObjectList { return &clusterv1.ClusterList{} },
		Finalizer:        clusterv1.ClusterFinalizer,
		LegacyFinalizers: []string{clusterv1.LegacyClusterFinalizer},
		ObserveTimeout:   observeTimeout,
		Told:             func(s *Scope) *reconciler.Told { return &s.Told },
		PhaseNote:        phaseNote,
		Observe: func(ctx context.Context, key client.ObjectKey, now time.Time) reconciler.Observation[*clusterv1.Cluster, *Scope] {
			s := obs.Observe(ctx, key)
			s.Now = now
			return reconciler.Observation[*clusterv1.Cluster, *Scope]{Env: s, Object: s.Cluster, Found: s.Found, Err: s.Err}
		},
	}
}

// phaseNote is Cluster API's sentence for a phase Event (updateStatus;
// reconcileDelete for a Cluster that goes).
func phaseNote(c *clusterv1.Cluster, phase string) string {
	if phase == "Deleted" {
		return fmt.Sprintf("Cluster %s has been deleted", c.Name)
	}
	return fmt.Sprintf("Cluster %s is %s", c.Name, phase)
}

// machineIndex adds machinesByCluster to the manager's Machine informer
// and reads the Clusters' Machines from it.
func machineIndex(ctx context.Context, mgr ctrl.Manager) (MachinesOfCluster, error) {
	inf, err := mgr.GetCache().GetInformer(ctx, &clusterv1.Machine{})
	if err != nil {
		return nil, fmt.Errorf("Machine informer: %w", err)
	}
	if err := inf.AddIndexers(toolscache.Indexers{machinesByCluster: machineClusterKey}); err != nil {
		return nil, fmt.Errorf("index Machines by Cluster: %w", err)
	}
	ix, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the manager's Machine informer (%T) has no indexer", inf)
	}
	return IndexedMachines(ix.GetIndexer()), nil
}

// machineCountDelay is how long a Cluster's Machine counts may lag: a
// fleet changing for minutes (200 Machines created or deleted) costs one
// Cluster status write per delay, not one per second (0.9 writes per
// Machine with 1s in the bench).
const machineCountDelay = 5 * time.Second

// workers is the Cluster controller's concurrency whatever the operator's:
// it only sets conditions and counts, so two are plenty.
const workers = 2

// Catalogs are the catalogs of the registries the Cluster tables name.
func Catalogs() []*engine.Catalog { return []*engine.Catalog{Registry().Catalog()} }

// Setup builds the Cluster controller on the kit: a Cluster is woken by its
// Machines, its kubeconfig Secret, and its connection changing state, which
// it reads from the workload cluster connections it shares with the Machine
// controller.
func Setup(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if opts.Clusters == nil {
		return errors.New("the Cluster controller needs the workload cluster connections (Options.Clusters)")
	}
	w := reconciler.NewKindWatcher(&clusterv1.Cluster{})
	w.Referrers = clustersNaming(mgr.GetClient())
	machines, err := machineIndex(ctx, mgr)
	if err != nil {
		return err
	}
	r, err := reconciler.New(Spec(opts.Set, mgr.GetClient(), opts.Clusters, w, machines, mgr.GetAPIReader()), opts.Kit(mgr, Name))
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1.Cluster{}, ReferencedObjectIndex, ReferencedObjectIndexer); err != nil {
		return fmt.Errorf("index Clusters by the objects they name: %w", err)
	}
	// Only Clusters this operator's cache holds are woken: under a watch
	// filter another instance's Cluster is not this one's to count.
	held := func(fn handler.MapFunc) handler.MapFunc {
		return reconciler.Held(mgr.GetClient(), func() client.Object { return &clusterv1.Cluster{} }, fn)
	}
	// Machine counts are a summary: Machines changing in a burst are
	// counted once per machineCountDelay, not once per change, and the
	// Cluster's own status write (new counts) wakes it no sooner.
	b := r.Builder(mgr, reconciler.StatusUpdatesAfter(machineCountDelay)).
		Watches(&clusterv1.Machine{}, reconciler.EnqueueCoalesced(machineCountDelay, held(machineToCluster))).
		// A Cluster being deleted waits for its MachineDeployments and
		// MachineSets to go; WorkersAvailable follows a deployment's
		// arrival and its Available condition, RollingOut, ScalingUp and
		// ScalingDown the status and reason of those conditions (a
		// stand-alone set's scaling ones), status.workers its
		// spec.replicas and a stand-alone set's. Their other changes
		// (status on every Machine change in a rollout, the counts in the
		// scaling messages) tell the Cluster nothing its Machine counts,
		// which wake it every machineCountDelay while Machines change, do
		// not: waking it on each would write its status on each (3 writes
		// per Machine replaced in a rolling update, against 0.2).
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(held(machineDeploymentToCluster)),
			builder.WithPredicates(predicate.Or(conditionsChanged(false, true, clusterv1.AvailableCondition),
				conditionsChanged(false, false, RollingOutCondition, ScalingUpCondition, ScalingDownCondition), replicasChanged(false)))).
		Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(held(machineSetToCluster)),
			builder.WithPredicates(predicate.Or(gone(), replicasChanged(true), conditionsChanged(true, false, ScalingUpCondition, ScalingDownCondition)))).
		// Its kubeconfig Secret, and the CA Secret one is generated from.
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(held(secretToCluster)),
			builder.WithPredicates(predicate.Or(remote.KubeconfigSecrets(), caSecrets()))).
		WatchesRawSource(source.Channel(opts.Clusters.Subscribe(), &handler.EnqueueRequestForObject{}))
	return r.Setup(mgr, b, workers, w)
}

// conditionsChanged passes the updates that change the status or reason
// (with messages, also the message) of one of the conditions the Cluster
// aggregates; with standaloneOnly, only of objects no controller owns (a
// MachineSet of a MachineDeployment counts through its deployment). The
// creation of a MachineDeployment passes too (a deletion always does).
func conditionsChanged(standaloneOnly, messages bool, types ...string) predicate.Predicate {
	conds := func(obj client.Object) ([]metav1.Condition, bool) {
		switch o := obj.(type) {
		case *clusterv1.MachineDeployment:
			return o.Status.Conditions, true
		case *clusterv1.MachineSet:
			return o.Status.Conditions, true
		}
		return nil, false
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !standaloneOnly },
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := conds(e.ObjectOld)
			after, ok2 := conds(e.ObjectNew)
			if !ok1 || !ok2 || (standaloneOnly && metav1.GetControllerOf(e.ObjectNew) != nil) {
				return false
			}
			for _, t := range types {
				a, b := meta.FindStatusCondition(before, t), meta.FindStatusCondition(after, t)
				if a == nil || b == nil {
					if (a == nil) != (b == nil) {
						return true
					}
					continue
				}
				if a.Status != b.Status || a.Reason != b.Reason || (messages && a.Message != b.Message) {
					return true
				}
			}
			return false
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// replicasChanged passes the updates that change spec.replicas; with
// standaloneOnly, only of objects no controller owns (a MachineSet of a
// MachineDeployment counts through its deployment).
func replicasChanged(standaloneOnly bool) predicate.Predicate {
	replicas := func(obj client.Object) *int32 {
		switch o := obj.(type) {
		case *clusterv1.MachineDeployment:
			return o.Spec.Replicas
		case *clusterv1.MachineSet:
			return o.Spec.Replicas
		}
		return nil
	}
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			if standaloneOnly && metav1.GetControllerOf(e.ObjectNew) != nil {
				return false
			}
			return !ptr.Equal(replicas(e.ObjectOld), replicas(e.ObjectNew))
		},
	}
}

// gone passes only deletions.
func gone() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
	}
}

func machineToCluster(_ context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok || m.Spec.ClusterName == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.ClusterName}}}
}

func machineSetToCluster(_ context.Context, o client.Object) []reconcile.Request {
	ms, ok := o.(*clusterv1.MachineSet)
	if !ok || ms.Spec.ClusterName == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ms.Namespace, Name: ms.Spec.ClusterName}}}
}

func machineDeploymentToCluster(_ context.Context, o client.Object) []reconcile.Request {
	md, ok := o.(*clusterv1.MachineDeployment)
	if !ok || md.Spec.ClusterName == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: md.Namespace, Name: md.Spec.ClusterName}}}
}

// secretToCluster maps a kubeconfig or CA Secret to its Cluster.
func secretToCluster(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := remote.ClusterOfSecret(o.GetName())
	if !ok {
		name, ok = remote.ClusterOfCASecret(o.GetName())
	}
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}

// caSecrets passes the creations and deletions of Secrets named <cluster>-ca:
// a Cluster without a kubeconfig Secret waits for one to sign it with.
func caSecrets() predicate.Predicate {
	named := func(o client.Object) bool { _, ok := remote.ClusterOfCASecret(o.GetName()); return ok }
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return named(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return named(e.Object) },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// The Cluster controller's permissions (config/rbac/role.yaml, make manifests).
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=clusters/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=clusters,verbs=get;list;watch;patch
// Teardown: the Cluster deletes its MachineDeployments, MachineSets and Machines.
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedeployments,verbs=list;watch;delete
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinesets,verbs=list;watch;delete
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines,verbs=list;watch;delete
// The control plane and infrastructure objects a Cluster names: adopted, and deleted last.
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io;infrastructure.cluster.x-k8s.io;sim.krtt.dev,resources=*,verbs=patch;delete
// The kubeconfig of a Cluster no control plane provider serves (reconcileKubeconfig).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create
