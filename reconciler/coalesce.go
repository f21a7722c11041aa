package reconciler

import (
	"context"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
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

// onlyStatusChanged reports whether an update changed nothing a controller
// acts on but the object's status: the generation (its spec), labels,
// annotations, finalizers, owners and deletion are the same.
func onlyStatusChanged(old, cur client.Object) bool {
	return old.GetGeneration() == cur.GetGeneration() &&
		maps.Equal(old.GetLabels(), cur.GetLabels()) &&
		maps.Equal(old.GetAnnotations(), cur.GetAnnotations()) &&
		slices.Equal(old.GetFinalizers(), cur.GetFinalizers()) &&
		slices.EqualFunc(old.GetOwnerReferences(), cur.GetOwnerReferences(), ownerEqual) &&
		old.GetDeletionTimestamp().Equal(cur.GetDeletionTimestamp())
}

func ownerEqual(a, b metav1.OwnerReference) bool {
	return a.UID == b.UID && a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name &&
		ptr.Equal(a.Controller, b.Controller) && ptr.Equal(a.BlockOwnerDeletion, b.BlockOwnerDeletion)
}

// statusOnly passes the updates onlyStatusChanged describes, and no other event.
var statusOnly = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return onlyStatusChanged(e.ObjectOld, e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// BuilderOption changes how Builder watches the reconciled object.
type BuilderOption func(*builderOptions)

type builderOptions struct{ statusDelay time.Duration }

// StatusUpdatesAfter makes an update of the reconciled object that changed
// only its status wake it after delay, coalesced (EnqueueCoalesced), instead
// of at once. For a controller whose status is a summary that changes on
// every reconcile while the world does (a Cluster's Machine counts): its
// own status write would otherwise wake it again at once, and it would
// write again as fast as it can reconcile for as long as the world keeps
// changing. The kit still sees its own writes come back (a reconcile that
// found the cache behind them waits for them), only later by up to delay.
func StatusUpdatesAfter(delay time.Duration) BuilderOption {
	return func(o *builderOptions) { o.statusDelay = delay }
}
