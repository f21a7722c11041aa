package sim

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simclusters/status,verbs=get;update;patch

// SimEndpointPort is the port of the endpoints the sim gives SimClusters.
const SimEndpointPort = 6443

// infraClusterReconciler plays an infrastructure provider's cluster
// controller: it gives the SimCluster a control plane endpoint (unless told
// not to) and reports it provisioned, with three failure domains, by the
// contract, unless a test holds it.
type infraClusterReconciler struct {
	client client.Client
}

func setupInfraCluster(mgr ctrl.Manager, _ Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&simv1.SimCluster{}).
		Named("sim-infra-cluster").
		Complete(&infraClusterReconciler{client: mgr.GetClient()})
}

// Reconcile retries conflicts quietly.
func (r *infraClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *infraClusterReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	sc := &simv1.SimCluster{}
	if err := r.client.Get(ctx, req.NamespacedName, sc); err != nil || !sc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	knobs := sc.Spec.Sim
	if !knobs.HoldProvisioning && !knobs.NoEndpoint && sc.Spec.ControlPlaneEndpoint.Host == "" {
		before := sc.DeepCopy()
		sc.Spec.ControlPlaneEndpoint = simv1.SimAPIEndpoint{Host: fmt.Sprintf("%s.%s.sim.krtt.dev", sc.Name, sc.Namespace), Port: SimEndpointPort}
		return reconcile.Result{}, r.client.Patch(ctx, sc, client.MergeFrom(before))
	}
	before := sc.DeepCopy()
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Provisioned", ObservedGeneration: sc.Generation}
	if knobs.HoldProvisioning {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "Provisioning", "the infrastructure is being provisioned (spec.sim.holdProvisioning)"
	}
	sc.Status.Initialization.Provisioned = ptr.To(!knobs.HoldProvisioning)
	sc.Status.FailureDomains = nil
	if !knobs.HoldProvisioning {
		for _, zone := range []string{DefaultFailureDomain, "sim-zone-b", "sim-zone-c"} {
			sc.Status.FailureDomains = append(sc.Status.FailureDomains, simv1.SimFailureDomain{Name: zone, ControlPlane: ptr.To(true)})
		}
	}
	meta.SetStatusCondition(&sc.Status.Conditions, ready)
	if statusEqual(before.Status, sc.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.client.Status().Patch(ctx, sc, client.MergeFrom(before))
}
