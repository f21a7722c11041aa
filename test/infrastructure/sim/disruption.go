package sim

import (
	"context"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// disruptionReconciler is a minimal stand-in for the disruption controller
// of kube-controller-manager: it keeps PodDisruptionBudget status current,
// so the Eviction API can allow disruptions. Expected Pods are the Pods
// matching the selector (no scale subresource lookups).
type disruptionReconciler struct {
	client  client.Client
	now     func() time.Time
	timeout time.Duration
}

func setupDisruption(mgr ctrl.Manager, opts Options) error {
	r := &disruptionReconciler{client: mgr.GetClient(), now: time.Now, timeout: opts.DisruptedPodTimeout}
	return ctrl.NewControllerManagedBy(mgr).
		For(&policyv1.PodDisruptionBudget{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return pdbsOfPod(ctx, mgr.GetClient(), o)
		})).
		Named("sim-disruption").
		Complete(r)
}

// pdbsOfPod wakes the PodDisruptionBudgets whose selector matches the Pod.
func pdbsOfPod(ctx context.Context, c client.Client, o client.Object) []reconcile.Request {
	list := &policyv1.PodDisruptionBudgetList{}
	if err := c.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		pdb := &list.Items[i]
		sel, err := pdbSelector(pdb)
		if err != nil || !sel.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pdb)})
	}
	return out
}

// pdbSelector: in policy/v1 a nil selector matches nothing, an empty one
// every Pod of the namespace.
func pdbSelector(pdb *policyv1.PodDisruptionBudget) (labels.Selector, error) {
	if pdb.Spec.Selector == nil {
		return labels.Nothing(), nil
	}
	return metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
}

// Reconcile retries conflicts quietly.
func (r *disruptionReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *disruptionReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pdb := &policyv1.PodDisruptionBudget{}
	if err := r.client.Get(ctx, req.NamespacedName, pdb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !pdb.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	sel, err := pdbSelector(pdb)
	if err != nil {
		return reconcile.Result{}, r.writeStatus(ctx, pdb, func(st *policyv1.PodDisruptionBudgetStatus) {
			st.DisruptionsAllowed = 0
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition,
				Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: err.Error(), ObservedGeneration: pdb.Generation})
		})
	}
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(pdb.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return reconcile.Result{}, err
	}
	now := r.now()
	byName := map[string]*corev1.Pod{}
	for i := range pods.Items {
		byName[pods.Items[i].Name] = &pods.Items[i]
	}

	// Pods the Eviction API disrupted but that are not being deleted yet
	// count as unhealthy until they are, or until the entry expires.
	disrupted := map[string]metav1.Time{}
	var requeue time.Duration
	for name, at := range pdb.Status.DisruptedPods {
		p := byName[name]
		if p == nil || !p.DeletionTimestamp.IsZero() {
			continue
		}
		expires := at.Add(r.timeout)
		if !now.Before(expires) {
			continue
		}
		disrupted[name] = at
		if d := until(now, expires); requeue == 0 || d < requeue {
			requeue = d
		}
	}

	expected := int32(len(pods.Items))
	var healthy int32
	for _, p := range pods.Items {
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		if _, ok := disrupted[p.Name]; ok {
			continue
		}
		if podReady(&p) {
			healthy++
		}
	}
	desired := desiredHealthy(pdb, expected)
	allowed := max(0, healthy-desired)
	if expected <= 0 {
		allowed = 0
	}

	err = r.writeStatus(ctx, pdb, func(st *policyv1.PodDisruptionBudgetStatus) {
		st.ObservedGeneration = pdb.Generation
		st.ExpectedPods, st.CurrentHealthy, st.DesiredHealthy, st.DisruptionsAllowed = expected, healthy, desired, allowed
		if len(disrupted) == 0 {
			st.DisruptedPods = nil
		} else {
			st.DisruptedPods = disrupted
		}
		cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue,
			Reason: policyv1.SufficientPodsReason, ObservedGeneration: pdb.Generation}
		if allowed == 0 {
			cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
		}
		meta.SetStatusCondition(&st.Conditions, cond)
	})
	if apierrors.IsConflict(err) {
		// The Eviction API wrote the status meanwhile: look again.
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return reconcile.Result{RequeueAfter: requeue}, err
}

// desiredHealthy turns minAvailable (count or percentage, rounded up) or
// maxUnavailable (count or percentage, rounded up) into a Pod count.
func desiredHealthy(pdb *policyv1.PodDisruptionBudget, expected int32) int32 {
	switch {
	case pdb.Spec.MinAvailable != nil:
		return scaled(*pdb.Spec.MinAvailable, expected)
	case pdb.Spec.MaxUnavailable != nil:
		return max(0, expected-scaled(*pdb.Spec.MaxUnavailable, expected))
	default:
		return 0
	}
}

func scaled(v intstr.IntOrString, total int32) int32 {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(total), true)
	if err != nil || n < 0 {
		return 0
	}
	return int32(min(n, math.MaxInt32))
}

// writeStatus updates the status (with the read resourceVersion, so a
// concurrent Eviction API write makes it conflict) only when it changed.
func (r *disruptionReconciler) writeStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, mutate func(*policyv1.PodDisruptionBudgetStatus)) error {
	before := pdb.Status.DeepCopy()
	mutate(&pdb.Status)
	if statusEqual(*before, pdb.Status) {
		return nil
	}
	return r.client.Status().Update(ctx, pdb)
}
