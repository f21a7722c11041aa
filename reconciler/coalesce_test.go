package reconciler

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestEnqueueCoalescedWakesOnceAfterTheDelay(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
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
	if n := q.Len(); n != 0 {
		t.Fatalf("woken at once (%d in the queue), not after the delay", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := q.Len(); n != 1 {
		t.Fatalf("%d requests in the queue after the delay, want one for the three events", n)
	}
	if got, _ := q.Get(); got != m1 {
		t.Errorf("woke %v, want %v", got, m1)
	}
}
