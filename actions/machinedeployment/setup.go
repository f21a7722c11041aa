package machinedeployment

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// Name is the controller's name: metrics label, Events reporter.
const Name = "machinedeployment"

// observeTimeout bounds reading a MachineDeployment's world in one
// reconcile.
const observeTimeout = 10 * time.Second

// Catalogs are the catalogs of the registries the MachineDeployment tables
// name.
func Catalogs() []*engine.Catalog { return []*engine.Catalog{Registry().Catalog()} }

// Spec is the MachineDeployment controller for the kit. c reads the
// management cluster; r is what actions wait on to see their writes (the
// manager's cache; c when nil).
func Spec(set *engine.TableSet, c client.Client, r client.Reader) reconciler.Spec[*clusterv1.MachineDeployment, *Scope] {
	obs := &Observer{Client: c, Reader: r}
	return reconciler.Spec[*clusterv1.MachineDeployment, *Scope]{
		Name:           Name,
		Set:            set,
		Registry:       Registry(),
		NewObject:      func() *clusterv1.MachineDeployment { return &clusterv1.MachineDeployment{} },
		NewList:        func() client.ObjectList { return &clusterv1.MachineDeploymentList{} },
		Finalizer:      clusterv1.MachineDeploymentFinalizer,
		ObserveTimeout: observeTimeout,
		Told:           func(s *Scope) *reconciler.Told { return &s.Told },
		Observe: func(ctx context.Context, key client.ObjectKey, now time.Time) reconciler.Observation[*clusterv1.MachineDeployment, *Scope] {
			s := obs.Observe(ctx, key, now)
			return reconciler.Observation[*clusterv1.MachineDeployment, *Scope]{Env: s, Object: s.MD, Found: s.Found, Err: s.Err}
		},
	}
}

// Setup builds the MachineDeployment controller on the kit and adds it to
// the manager.
func Setup(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	r, err := reconciler.New(Spec(opts.Set, mgr.GetClient(), mgr.GetCache()), opts.Kit(mgr, Name))
	if err != nil {
		return err
	}
	m := mapper{client: mgr.GetClient()}
	b := r.Builder(mgr).
		// Its MachineSets wake it (created, scaled, gone), and so do
		// their Machines (Ready, deleted), which the rollout counts.
		Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.MachineDeployment{}, handler.OnlyControllerOwner())).
		// A MachineSet without a controller wakes the deployments that
		// may adopt it.
		Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(m.orphanToDeployments)).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(m.machineToDeployment)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(m.clusterToDeployments))
	return r.Setup(mgr, b, opts.Concurrency, nil)
}

// mapper turns events of other objects into the MachineDeployments they
// concern.
type mapper struct{ client client.Client }

// machineToDeployment wakes the deployment of a Machine's MachineSet.
func (m mapper) machineToDeployment(ctx context.Context, obj client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "MachineSet" {
		return nil
	}
	ms := &clusterv1.MachineSet{}
	if err := m.client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, ms); err != nil {
		return nil
	}
	owner := metav1.GetControllerOf(ms)
	if owner == nil || owner.Kind != "MachineDeployment" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ms.Namespace, Name: owner.Name}}}
}

// orphanToDeployments wakes the deployments that adopt a MachineSet
// without a controller (Cluster API MachineSetToDeployments).
func (m mapper) orphanToDeployments(ctx context.Context, obj client.Object) []reconcile.Request {
	ms, ok := obj.(*clusterv1.MachineSet)
	if !ok || metav1.GetControllerOf(ms) != nil {
		return nil
	}
	list := &clusterv1.MachineDeploymentList{}
	if err := m.client.List(ctx, list, client.InNamespace(ms.Namespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if adoptable(&list.Items[i], ms) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// clusterToDeployments wakes the deployments of a Cluster (pause, creation).
func (m mapper) clusterToDeployments(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &clusterv1.MachineDeploymentList{}
	if err := m.client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.ClusterName == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
