package reconciler

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	krttpoll "github.com/krtt-dev/krtt/test/framework/poll"
)

func TestEnqueueCoalescedWakesOnceAfterTheDelay(t *testing.T) {
	// The queue's clock is a fake one: the delay runs out when the test
	// steps it, not when the machine gets round to it.
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	defer q.ShutDown()
	m1 := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "m1"}}
	h := EnqueueCoalesced(200*time.Millisecond, func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{m1}
	})
	ctx := context.Background()
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	h.Delete(ctx, event.DeleteEvent{Object: pod("p1")}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: pod("p2"), ObjectNew: pod("p2")}, q)
	h.Delete(ctx, event.DeleteEvent{Object: pod("p3")}, q)
	clk.Step(199 * time.Millisecond)
	if n := q.Len(); n != 0 {
		t.Fatalf("woken before the delay (%d in the queue)", n)
	}
	clk.Step(time.Millisecond)
	// The queue moves a request whose delay ran out on its own goroutine.
	if err := krttpoll.Until(ctx, 5*time.Second, func(context.Context) error {
		if q.Len() == 0 {
			return errors.New("nothing in the queue once the delay ran out")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := q.Len(); n != 1 {
		t.Fatalf("%d requests in the queue after the delay, want one for the three events", n)
	}
	if got, _ := q.Get(); got != m1 {
		t.Errorf("woke %v, want %v", got, m1)
	}
}

func TestOnlyStatusChanged(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 3, ResourceVersion: "10",
			Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}, Finalizers: []string{"f"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u"}}}}
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		change func(*corev1.Pod)
		want   bool
	}{
		{"status and resourceVersion", func(p *corev1.Pod) { p.ResourceVersion = "11"; p.Status.Phase = corev1.PodRunning }, true},
		{"managed fields", func(p *corev1.Pod) { p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}} }, true},
		{"generation", func(p *corev1.Pod) { p.Generation = 4 }, false},
		{"a label", func(p *corev1.Pod) { p.Labels["a"] = "2" }, false},
		{"an annotation", func(p *corev1.Pod) { p.Annotations = nil }, false},
		{"a finalizer", func(p *corev1.Pod) { p.Finalizers = append(p.Finalizers, "g") }, false},
		{"the controller flag of an owner", func(p *corev1.Pod) { p.OwnerReferences[0].Controller = ptr.To(true) }, false},
		{"deletion", func(p *corev1.Pod) { p.DeletionTimestamp = &now }, false},
	} {
		cur := base()
		tc.change(cur)
		if got := onlyStatusChanged(base(), cur); got != tc.want {
			t.Errorf("%s: onlyStatusChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The two watches Builder sets up with StatusUpdatesAfter split the
	// events between them: a status-only update goes to the coalesced one,
	// every other event to the immediate one.
	withStatus, withoutLabels := base(), base()
	withStatus.Status.Phase = corev1.PodRunning
	withoutLabels.Labels = nil
	immediate := predicate.Not[client.Object](statusOnly)
	for _, c := range []struct {
		name      string
		coalesced bool
		immediate bool
	}{
		{"status update", statusOnly.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withStatus}),
			immediate.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withStatus})},
		{"label update", statusOnly.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withoutLabels}),
			immediate.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withoutLabels})},
		{"create", statusOnly.Create(event.CreateEvent{Object: base()}), immediate.Create(event.CreateEvent{Object: base()})},
		{"delete", statusOnly.Delete(event.DeleteEvent{Object: base()}), immediate.Delete(event.DeleteEvent{Object: base()})},
		{"generic", statusOnly.Generic(event.GenericEvent{Object: base()}), immediate.Generic(event.GenericEvent{Object: base()})},
	} {
		if want := c.name == "status update"; c.coalesced != want || c.immediate == want {
			t.Errorf("%s: coalesced %v, immediate %v; want coalesced %v only", c.name, c.coalesced, c.immediate, want)
		}
	}
}
