package machine

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// podGoneWakeDelay is how long after a Pod goes its Machine is woken. A
// drain pass sends its evictions together, so a Node's Pods end within
// moments of each other; the work queue keeps one wake-up per Machine and
// the earliest time, so a reconcile a little after the first Pod went sees
// the others go too, and the drain's status (how many Pods remain) is
// patched once for them instead of once per Pod.
const podGoneWakeDelay = time.Second

// enqueueAfter is handler.EnqueueRequestsFromMapFunc with every request
// added after d.
func enqueueAfter(d time.Duration, fn handler.MapFunc) handler.EventHandler {
	add := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, r := range fn(ctx, obj) {
			q.AddAfter(r, d)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
	}
}
