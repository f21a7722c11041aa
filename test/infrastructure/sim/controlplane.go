package sim

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simcontrolplanes,verbs=get;list;watch
// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simcontrolplanes/status,verbs=get;update;patch

// controlPlaneReconciler plays a control plane provider: it reports by the
// contract whether the control plane is managed outside the Cluster's
// Machines, which decides whether the Machine controller needs a
// control-plane Machine before it touches Nodes.
type controlPlaneReconciler struct {
	client client.Client
}

func setupControlPlane(mgr ctrl.Manager, _ Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&simv1.SimControlPlane{}).
		Named("sim-control-plane").
		Complete(&controlPlaneReconciler{client: mgr.GetClient()})
}

// Reconcile retries conflicts quietly.
func (r *controlPlaneReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *controlPlaneReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cp := &simv1.SimControlPlane{}
	if err := r.client.Get(ctx, req.NamespacedName, cp); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	before := cp.DeepCopy()
	external := ptr.Deref(cp.Spec.ExternallyManaged, true)
	cp.Status.ExternalManagedControlPlane = ptr.To(external)
	if external {
		cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	}
	msg := "the control plane is made of the Cluster's control-plane Machines"
	if external {
		msg = "the control plane is managed outside the Cluster's Machines"
	}
	meta.SetStatusCondition(&cp.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Available", Message: msg, ObservedGeneration: cp.Generation,
	})
	if statusEqual(before.Status, cp.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.client.Status().Patch(ctx, cp, client.MergeFrom(before))
}
