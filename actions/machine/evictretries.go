package machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Values of the Pod fact evictionRefusals.
const (
	refusalsBelow             = "Below"
	refusalsExhausted         = "Exhausted"
	refusalsBudgetNeverAllows = "BudgetNeverAllows"
)

// refusalsOf is how many evictions of the Pod were refused, as
// status.deletion.evictionRefusals records them (a namesake with another
// UID starts again).
func refusalsOf(m *clusterv1.Machine, pod *corev1.Pod) int32 {
	for _, r := range m.Status.Deletion.EvictionRefusals {
		if r.Pod == podName(pod) && (r.UID == "" || r.UID == pod.UID) {
			return r.Count
		}
	}
	return 0
}

// evictionRefusals observes the Pod's evictionRefusals fact against
// spec.deletion.maxEvictRetries: with 0 the Pod is never evicted; once the
// refusals reach the limit, a budget that can never allow an eviction
// (misconfigured) is told apart, since the machine-controller-manager does
// not delete through one.
func (v *drainView) evictionRefusals(ctx context.Context, pod *corev1.Pod) (string, error) {
	m := v.s.Machine
	if m == nil || m.Spec.Deletion.MaxEvictRetries == nil {
		return refusalsBelow, nil
	}
	limit := *m.Spec.Deletion.MaxEvictRetries
	switch n := refusalsOf(m, pod); {
	case limit == 0:
		return refusalsExhausted, nil
	case n < limit:
		return refusalsBelow, nil
	}
	never, err := budgetNeverAllows(ctx, v.s.NodeClient, pod)
	if err != nil {
		return "", err
	}
	if never {
		return refusalsBudgetNeverAllows, nil
	}
	return refusalsExhausted, nil
}

// budgetNeverAllows: a PodDisruptionBudget of the Pod allows no eviction
// although every Pod it expects is healthy and none is being disrupted (the
// machine-controller-manager's misconfigured budget): no eviction will ever
// be allowed.
func budgetNeverAllows(ctx context.Context, c client.Client, pod *corev1.Pod) (bool, error) {
	list := &policyv1.PodDisruptionBudgetList{}
	if err := c.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return false, fmt.Errorf("list PodDisruptionBudgets of Pod %s: %w", podName(pod), err)
	}
	for i := range list.Items {
		pdb := &list.Items[i]
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		st := pdb.Status
		if pdb.Generation == st.ObservedGeneration && st.ExpectedPods > 0 && st.CurrentHealthy >= st.ExpectedPods &&
			len(st.DisruptedPods) == 0 && st.DisruptionsAllowed == 0 {
			return true, nil
		}
	}
	return false, nil
}

// countRefusals rewrites status.deletion.evictionRefusals after a drain
// pass: the Pods still on the Node keep their count, those whose eviction
// was refused in this pass count one more. Kept only with maxEvictRetries.
func countRefusals(m *clusterv1.Machine, pods []corev1.Pod, refused map[string]bool) {
	if m.Spec.Deletion.MaxEvictRetries == nil {
		return
	}
	var out []clusterv1.EvictionRefusals
	for i := range pods {
		p := &pods[i]
		// The count stops at the limit: past it the verdict no longer
		// changes (P17 deletes the Pod, P18 keeps evicting it), and a
		// count still growing would cost a status write on every pass.
		n := refusalsOf(m, p)
		if refused[podName(p)] && n < *m.Spec.Deletion.MaxEvictRetries {
			n++
		}
		if n > 0 {
			out = append(out, clusterv1.EvictionRefusals{Pod: podName(p), UID: p.UID, Count: n})
		}
	}
	m.Status.Deletion.EvictionRefusals = out
}

// refusalsNote counts the refusal just met against maxEvictRetries, for the
// drain's message (at most the limit, as the count).
func refusalsNote(m *clusterv1.Machine, pod *corev1.Pod) string {
	if m.Spec.Deletion.MaxEvictRetries == nil {
		return ""
	}
	limit := *m.Spec.Deletion.MaxEvictRetries
	return fmt.Sprintf(" (refused %d of maxEvictRetries %d)", min(refusalsOf(m, pod)+1, limit), limit)
}
