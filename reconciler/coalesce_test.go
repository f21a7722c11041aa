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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
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
