// Package machineset is the MachineSet controller: the MachineSet tables,
// facts and actions (actions/machineset) run by the controller kit
// (reconciler/). This package only says what a MachineSet is to the kit and
// which events wake one.
package machineset

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Name is the controller's name: metrics label, Events reporter.
const Name = "machineset"

// observeTimeout bounds reading a MachineSet's world in one reconcile.
const observeTimeout = 10 * time.Second

// Catalogs are the catalogs of the registries the MachineSet tables name.
func Catalogs() []*engine.Catalog { return []*engine.Catalog{Registry().Catalog()} }

// Spec is the MachineSet controller for the kit: its tables, registry and
// observer. c reads the management cluster; r is what actions wait on to see
// their writes (the manager's cache; c when nil).
func Spec(set *engine.TableSet, c client.Client, r client.Reader) reconciler.Spec[*clusterv1.MachineSet, *Scope] {
	obs := &Observer{Client: c, Reader: r}
	return reconciler.Spec[*clusterv1.MachineSet, *Scope]{
		Name:             Name,
		Set:              set,
		Registry:         Registry(),
		NewObject:        func() *clusterv1.MachineSet { return &clusterv1.MachineSet{} },
		NewList:          func() client.ObjectList { return &clusterv1.MachineSetList{} },
		Finalizer:        clusterv1.MachineSetFinalizer,
		LegacyFinalizers: []string{clusterv1.LegacyMachineSetFinalizer},
		ObserveTimeout:   observeTimeout,
		Told:             func(s *Scope) *reconciler.Told { return &s.Told },
		Observe: func(ctx context.Context, key client.ObjectKey, now time.Time) reconciler.Observation[*clusterv1.MachineSet, *Scope] {
			s := obs.Observe(ctx, key, now)
			return reconciler.Observation[*clusterv1.MachineSet, *Scope]{Env: s, Object: s.Set, Found: s.Found, Err: s.Err}
		},
	}
}

// Setup registers the Machine index, builds the MachineSet controller on the
// kit and adds it to the manager.
func Setup(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	r, err := reconciler.New(Spec(opts.Set, mgr.GetClient(), mgr.GetCache()), opts.Kit(mgr, Name))
	if err != nil {
		return err
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &clusterv1.Machine{}, ControllerUIDIndex, ControllerUIDIndexer); err != nil {
		return fmt.Errorf("index Machines by controller: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1.MachineSet{}, SelectorLabelIndex, SelectorLabelIndexer); err != nil {
		return fmt.Errorf("index MachineSets by selector label: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1.MachineSet{}, TemplateLabelIndex, TemplateLabelIndexer); err != nil {
		return fmt.Errorf("index MachineSets by template label: %w", err)
	}
	m := mapper{client: mgr.GetClient()}
	b := r.Builder(mgr).
		// Owned Machines wake their set (created, failed, Ready, gone);
		// an orphan wakes the sets that may adopt it.
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.MachineSet{}, handler.OnlyControllerOwner())).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(m.orphanToMachineSets)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(m.clusterToMachineSets)).
		// A deployment whose template or revision moves on makes its sets
		// old (staleRevision): they hear of it, not only at their next
		// Machine event.
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(m.deploymentToMachineSets),
			builder.WithPredicates(revisionMoved())).
		// A set whose selector comes to overlap another's, or stops to,
		// wakes the other so both conditions say so.
		Watches(&clusterv1.MachineSet{}, m.overlapsChanged())
	return r.Setup(mgr, b, opts.Concurrency, nil)
}

// mapper turns events of other objects into the MachineSets they concern.
type mapper struct{ client client.Client }

func (m mapper) setsWhere(ctx context.Context, ns string, keep func(*clusterv1.MachineSet) bool) []reconcile.Request {
	list := &clusterv1.MachineSetList{}
	if err := m.client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if keep(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// orphanToMachineSets wakes the sets whose selector matches a Machine
// without a controller.
func (m mapper) orphanToMachineSets(ctx context.Context, obj client.Object) []reconcile.Request {
	machine, ok := obj.(*clusterv1.Machine)
	if !ok || metav1.GetControllerOf(machine) != nil {
		return nil
	}
	return m.setsWhere(ctx, machine.Namespace, func(ms *clusterv1.MachineSet) bool { return Matches(ms, machine) })
}

// deploymentToMachineSets wakes the sets a deployment controls.
func (m mapper) deploymentToMachineSets(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.setsWhere(ctx, obj.GetNamespace(), func(ms *clusterv1.MachineSet) bool {
		ref := metav1.GetControllerOf(ms)
		return ref != nil && ref.UID == obj.GetUID()
	})
}

// revisionMoved passes a deployment's updates that change what
// staleRevision reads: its spec (the template) or its revision.
func revisionMoved() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				e.ObjectOld.GetAnnotations()[clusterv1.RevisionAnnotation] != e.ObjectNew.GetAnnotations()[clusterv1.RevisionAnnotation]
		},
	}
}

// clusterToMachineSets wakes the sets of a Cluster (pause, creation).
func (m mapper) clusterToMachineSets(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.setsWhere(ctx, obj.GetNamespace(), func(ms *clusterv1.MachineSet) bool { return ms.Spec.ClusterName == obj.GetName() })
}

// overlapsChanged wakes the sets a set overlaps with before and after a
// change of what overlap reads (selector, template labels, Cluster,
// deletion), and when it comes or goes; its status changing wakes none.
func (m mapper) overlapsChanged() handler.EventHandler {
	add := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			ms, ok := o.(*clusterv1.MachineSet)
			if !ok {
				continue
			}
			// A set being deleted overlaps nothing, but the sets it
			// overlapped until now must hear of it.
			probe := ms.DeepCopy()
			probe.DeletionTimestamp = nil
			others, err := overlapping(ctx, m.client, probe)
			if err != nil {
				continue
			}
			for _, other := range others {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(other)})
			}
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, ok1 := e.ObjectOld.(*clusterv1.MachineSet)
			after, ok2 := e.ObjectNew.(*clusterv1.MachineSet)
			if ok1 && ok2 && !overlapInputsChanged(before, after) {
				return
			}
			add(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
	}
}

func overlapInputsChanged(a, b *clusterv1.MachineSet) bool {
	return a.Spec.ClusterName != b.Spec.ClusterName || a.DeletionTimestamp.IsZero() != b.DeletionTimestamp.IsZero() ||
		!maps.Equal(a.Spec.Selector.MatchLabels, b.Spec.Selector.MatchLabels) ||
		!maps.Equal(a.Spec.Template.ObjectMeta.Labels, b.Spec.Template.ObjectMeta.Labels)
}
