package reconciler_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// The engine times a state's wait from the fields it names by path
// (wait: {since: status.openedAt, timeout: spec.autoCloseSeconds,
// timedOut: openTooLong}); a registry reads them with ObjectFields.
func ExampleObjectFields() {
	door := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"autoCloseSeconds": int64(30)},
		"status": map[string]any{"openedAt": "2026-01-02T03:04:05Z"},
	}}
	wait := &engine.StateWait{Since: "status.openedAt", Timeout: "spec.autoCloseSeconds", TimedOut: "openTooLong"}
	now := time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC)
	t := wait.Timing(reconciler.ObjectFields(door, now), nil)
	fmt.Println(t.Deadline.Format(time.RFC3339), t.TimedOut)
	// Output: 2026-01-02T03:04:35Z true
}

// AddFinalizer and RemoveFinalizer change the object in memory; the kit's
// patch saves them. Register AddFinalizer engine.Pure: the kit then runs
// no row that writes anything else before the finalizer is saved.
func ExampleAddFinalizer() {
	type world struct{ cm *corev1.ConfigMap }
	r := engine.NewRegistry[*world]("example")
	objectOf := func(w *world) client.Object { return w.cm }
	r.Action("AddFinalizer", "Add the finalizer.", reconciler.AddFinalizer("example.krtt.dev/f", objectOf), engine.Pure())

	w := &world{cm: &corev1.ConfigMap{}}
	_ = reconciler.AddFinalizer("example.krtt.dev/f", objectOf)(context.Background(), w)
	fmt.Println(w.cm.Finalizers)
	// Output: [example.krtt.dev/f]
}

// A controller is a Spec (its tables, registry and observer) given to
// New, and Setup with the watches that wake an object; examples/door in
// the krtt repository is this controller whole, with its tables and test.
func ExampleNew() {
	type world struct {
		cm  *corev1.ConfigMap
		now time.Time
	}
	var (
		mgr ctrl.Manager     // the manager, from ctrl.NewManager
		set *engine.TableSet // loaded and checked with engine.LoadFS and engine.Check
		reg *engine.Registry[*world]
	)
	spec := reconciler.Spec[*corev1.ConfigMap, *world]{
		Name: "example", Set: set, Registry: reg,
		NewObject: func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
		NewList:   func() client.ObjectList { return &corev1.ConfigMapList{} },
		Finalizer: "example.krtt.dev/f",
		// ConfigMap does not implement kit.Status; a type of your own does,
		// and leaves Status nil.
		Status: nil,
		Observe: func(ctx context.Context, key client.ObjectKey, now time.Time) reconciler.Observation[*corev1.ConfigMap, *world] {
			w := &world{now: now}
			cm := &corev1.ConfigMap{}
			if err := mgr.GetClient().Get(ctx, key, cm); err != nil {
				if apierrors.IsNotFound(err) {
					err = nil
				}
				// Not found: the tables decide in their initialState.
				return reconciler.Observation[*corev1.ConfigMap, *world]{Env: w, Err: err}
			}
			w.cm = cm
			return reconciler.Observation[*corev1.ConfigMap, *world]{Env: w, Object: cm, Found: true}
		},
	}
	r, err := reconciler.New(spec, reconciler.Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()})
	if err != nil {
		return
	}
	_ = r.Setup(mgr, r.Builder(mgr).Owns(&corev1.Secret{}), 1, nil)
}
