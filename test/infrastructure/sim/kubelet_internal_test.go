package sim

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// TestRegistrationKeepsTheKubeletsConditions replays the interleaving behind
// a flaky TestKubeletNodeConditionsKnob: the cloud creates the Node, the
// kubelet reports it (Ready and the scripted KernelDeadlock=True) before the
// cloud's registration status write lands, and that write, computed from the
// Node as created, replaced the whole conditions list. KernelDeadlock was
// gone, so once the knob was cleared the kubelet had nothing to turn False.
// The seam is the Node client the cloud writes through: the kubelet runs at
// the moment the cloud sends its status patch, so the order is fixed.
func TestRegistrationKeepsTheKubeletsConditions(t *testing.T) {
	ctx := context.Background()
	sm := &simv1.SimMachine{}
	sm.Namespace, sm.Name = "ns", "n1"
	sm.Spec.ProviderID = ptr.To(ProviderID(sm.Namespace, sm.Name))
	sm.Spec.Sim.NodeConditions = []string{"KernelDeadlock"}

	base := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(sm).
		WithStatusSubresource(&corev1.Node{}, &simv1.SimMachine{}).Build()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	kubelet := &kubeletNodeReconciler{client: base, machines: base, interval: time.Minute, now: func() time.Time { return now }}
	node := client.ObjectKey{Name: NodeName(sm.Namespace, sm.Name)}
	heartbeat := func() {
		t.Helper()
		if _, err := kubelet.reconcile(ctx, reconcile.Request{NamespacedName: node}); err != nil {
			t.Fatalf("kubelet: %v", err)
		}
	}
	kubeletFirst := false
	nodes := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*corev1.Node); ok && sub == "status" && !kubeletFirst {
				kubeletFirst = true
				heartbeat()
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})

	cloud := &cloudReconciler{client: base, now: func() time.Time { return now }}
	if _, err := cloud.registerNode(ctx, nodes, sm); err != nil {
		t.Fatalf("register: %v", err)
	}
	if !kubeletFirst {
		t.Fatal("the cloud wrote no Node status: the seam did not run the kubelet in between")
	}
	if c := condition(t, base, node, "KernelDeadlock"); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("after registration KernelDeadlock = %+v, want True (the kubelet reported it first)", c)
	}

	sm.Spec.Sim.NodeConditions = nil
	if err := base.Update(ctx, sm); err != nil {
		t.Fatal(err)
	}
	heartbeat()
	if c := condition(t, base, node, "KernelDeadlock"); c == nil || c.Status != corev1.ConditionFalse {
		t.Fatalf("after clearing the knob KernelDeadlock = %+v, want False", c)
	}
}

func condition(t *testing.T, c client.Client, key client.ObjectKey, typ corev1.NodeConditionType) *corev1.NodeCondition {
	t.Helper()
	n := &corev1.Node{}
	if err := c.Get(context.Background(), key, n); err != nil {
		t.Fatal(err)
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}
