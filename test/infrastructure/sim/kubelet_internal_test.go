package sim

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// TestKubeletReportsOnANodeChangedSinceItsCache: an operator patched the
// Node's labels after the kubelet's cache read it. The kubelet's status
// patch merges its conditions by type, as a kubelet's does, so it lands
// rather than failing on the stale resourceVersion and being retried.
func TestKubeletReportsOnANodeChangedSinceItsCache(t *testing.T) {
	ctx := context.Background()
	sm := &simv1.SimMachine{}
	sm.Namespace, sm.Name = "ns", "n1"
	sm.Spec.ProviderID = ptr.To(ProviderID(sm.Namespace, sm.Name))
	node := &corev1.Node{}
	node.Name = NodeName(sm.Namespace, sm.Name)
	node.Labels = map[string]string{NodeLabel: "true"}
	node.Spec.ProviderID = *sm.Spec.ProviderID
	node.Status.Conditions = []corev1.NodeCondition{{Type: "KernelDeadlock", Status: corev1.ConditionFalse, Reason: "Scripted"}}
	base := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(sm, node).
		WithStatusSubresource(&corev1.Node{}, &simv1.SimMachine{}).Build()
	stale := &corev1.Node{}
	if err := base.Get(ctx, client.ObjectKeyFromObject(node), stale); err != nil {
		t.Fatal(err)
	}
	labelled := stale.DeepCopy()
	labelled.Labels["node-role.example/worker"] = ""
	if err := base.Update(ctx, labelled); err != nil {
		t.Fatal(err)
	}
	cached := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if n, ok := obj.(*corev1.Node); ok {
				stale.DeepCopyInto(n)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	kubelet := &kubeletNodeReconciler{client: cached, machines: base, interval: time.Minute, now: func() time.Time { return now }}
	if _, err := kubelet.reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(node)}); err != nil {
		t.Fatalf("kubelet on a Node changed since its cache: %v", err)
	}
	if c := condition(t, base, client.ObjectKeyFromObject(node), corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("Ready = %+v, want True", c)
	}
	if c := condition(t, base, client.ObjectKeyFromObject(node), "KernelDeadlock"); c == nil || c.Status != corev1.ConditionFalse {
		t.Fatalf("KernelDeadlock = %+v, want it kept False", c)
	}
	got := &corev1.Node{}
	if err := base.Get(ctx, client.ObjectKeyFromObject(node), got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Labels["node-role.example/worker"]; !ok {
		t.Fatalf("labels %v: the operator's label was lost", got.Labels)
	}
}

// TestKubeletSendsAPodsFinalDeletionOnce: the kubelet's deletion with grace
// period 0 is written by the API server as a shortened grace period before
// the Pod goes, and that write wakes the kubelet again. A second deletion
// would find no Pod; it is not sent.
func TestKubeletSendsAPodsFinalDeletionOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	node := &corev1.Node{}
	node.Name = "sim-node"
	node.Labels = map[string]string{NodeLabel: "true"}
	pod := func(name string, grace int64) *corev1.Pod {
		p := &corev1.Pod{}
		p.Namespace, p.Name, p.UID = "ns", name, "uid-"+types.UID(name)
		p.Spec.NodeName = node.Name
		p.Finalizers = []string{"example.com/hold"} // the fake client keeps a Pod with a deletionTimestamp only with one
		p.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Minute)}
		p.DeletionGracePeriodSeconds = ptr.To(grace)
		return p
	}
	deletes := map[string]int{}
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(node, pod("sent", 0), pod("due", 30)).Build(), interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			deletes[obj.GetName()]++
			return nil
		},
	})
	kubelet := &kubeletPodReconciler{client: c, machines: c, cap: 5 * time.Second, now: func() time.Time { return now }}
	for _, name := range []string{"sent", "due"} {
		if _, err := kubelet.reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}}); err != nil {
			t.Fatalf("kubelet on Pod %s: %v", name, err)
		}
	}
	if deletes["sent"] != 0 || deletes["due"] != 1 {
		t.Fatalf("deletions sent %v, want none for the Pod whose grace period is 0 and one for the one whose grace ran out", deletes)
	}
}
