package reconciler

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// KindWatcher starts, once per kind, a watch on objects met only at run time
// (provider objects read as unstructured) that wakes their controlling
// owner, and the objects Referrers names. Actions call Watch when they adopt
// an object; observers call it when a kind cannot be read yet
// (KindNotReadableError), so that the kind's first sync (its informer
// replays every object) wakes the objects that wait on it instead of their
// back-off; the kit binds the watcher to the controller once it is built.
type KindWatcher struct {
	owner client.Object
	// Referrers, if set, maps an object of a watched kind to the reconciled
	// objects that name it (those not yet its owner).
	Referrers handler.TypedMapFunc[*unstructured.Unstructured, reconcile.Request]

	mu      sync.Mutex
	ctrl    controller.Controller
	cache   cache.Cache
	client  client.Client
	watched map[schema.GroupVersionKind]bool
}

// NewKindWatcher returns a watcher that enqueues the controlling owner of
// the given type.
func NewKindWatcher(owner client.Object) *KindWatcher {
	return &KindWatcher{owner: owner, watched: map[schema.GroupVersionKind]bool{}}
}

// Bind attaches the watcher to a built controller; until then Watch is a
// no-op (explain and tests run without one).
func (w *KindWatcher) Bind(c controller.Controller, ca cache.Cache, cl client.Client) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctrl, w.cache, w.client = c, ca, cl
}

// Watch makes sure obj's kind is watched.
func (w *KindWatcher) Watch(_ context.Context, obj *unstructured.Unstructured) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctrl == nil {
		return nil
	}
	gvk := obj.GroupVersionKind()
	if w.watched[gvk] {
		return nil
	}
	ownerGVK, err := w.client.GroupVersionKindFor(w.owner)
	if err != nil {
		return fmt.Errorf("watch %s: the owner's kind: %w", gvk, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	// The source waits for the kind's first sync on its own goroutine (one
	// per kind, ended with the controller), never on the caller's.
	err = w.ctrl.Watch(source.Kind(w.cache, u, handler.TypedEnqueueRequestsFromMapFunc(w.wakes(ownerGVK))))
	if err != nil {
		return fmt.Errorf("watch %s: %w", gvk, err)
	}
	w.watched[gvk] = true
	return nil
}

// wakes maps an object to its controlling owner and its referrers.
func (w *KindWatcher) wakes(owner schema.GroupVersionKind) handler.TypedMapFunc[*unstructured.Unstructured, reconcile.Request] {
	ownerOf := w.ownerOf(owner)
	return func(ctx context.Context, o *unstructured.Unstructured) []reconcile.Request {
		out := ownerOf(ctx, o)
		if w.Referrers == nil {
			return out
		}
		for _, r := range w.Referrers(ctx, o) {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		return out
	}
}

// ownerOf maps an object to its controlling owner of the watcher's kind, if
// this manager's cache holds that owner: under a watch filter, another
// instance's objects are not this one's to wake (they would only reach the
// "object gone" row here).
func (w *KindWatcher) ownerOf(owner schema.GroupVersionKind) handler.TypedMapFunc[*unstructured.Unstructured, reconcile.Request] {
	return func(ctx context.Context, o *unstructured.Unstructured) []reconcile.Request {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.Kind != owner.Kind {
			return nil
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != owner.Group {
			return nil
		}
		key := client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}
		if err := w.client.Get(ctx, key, w.owner.DeepCopyObject().(client.Object)); err != nil {
			return nil
		}
		return []reconcile.Request{{NamespacedName: key}}
	}
}

// Held keeps of fn's requests those whose object reader holds (the
// manager's cache, through newObject's kind). Under a watch filter the
// cache holds none of another instance's objects, and a request for one
// would only reach this controller's "object gone" rows; without one,
// requests for objects that do not exist are dropped alike. A read that
// fails otherwise keeps the request: a lost wake costs more than a spare
// reconcile.
func Held(reader client.Reader, newObject func() client.Object, fn handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		reqs := fn(ctx, o)
		held := reqs[:0]
		for _, r := range reqs {
			if err := reader.Get(ctx, r.NamespacedName, newObject()); !apierrors.IsNotFound(err) {
				held = append(held, r)
			}
		}
		return held
	}
}
