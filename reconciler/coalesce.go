package reconciler

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EnqueueCoalesced maps events to requests as
// handler.EnqueueRequestsFromMapFunc does, but adds them after delay: the
// work queue holds a request once, so a burst of events about many objects
// that map to one (a Cluster's Machines changing one by one) becomes one
// reconcile and one status write per delay instead of one per event (a
// Node's Pods going one by one during a drain). For wake-ups that may come
// late by the delay: the reconcile still decides on what it observes then;
// never for one a decision cannot afford to take late.
func EnqueueCoalesced(delay time.Duration, fn handler.MapFunc) handler.EventHandler {
	add := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			if o == nil {
				continue
			}
			for _, req := range fn(ctx, o) {
				q.AddAfter(req, delay)
			}
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
	}
}
