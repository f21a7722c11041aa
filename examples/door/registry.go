package door

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// Finalizer holds a Door until its bell is deleted.
const Finalizer = "example.krtt.dev/door"

// World is one Door's world as one reconcile observed it: what the facts
// read and the actions change.
type World struct {
	// Door is nil when the Door is gone.
	Door *Door
	// Bell is the Door's ConfigMap, nil when there is none; BellErr is
	// the error reading it.
	Bell    *corev1.ConfigMap
	BellErr error
	Now     time.Time
	client  client.Client
}

// BellName is the name of a Door's bell ConfigMap.
func BellName(door string) string { return door + "-bell" }

func doorOf(w *World) client.Object { return w.Door }

// Registry is the Go side of the door tables: an observer per fact they
// declare (openTooLong excepted: the engine computes it from the Open
// state's wait), the actions rows name, the status field setter.
var Registry = engine.LazyRegistry("door", func(r *engine.Registry[*World]) {
	r.Bool("found", func(w *World) bool { return w.Door != nil })
	r.Bool("deleting", func(w *World) bool { return w.Door != nil && !w.Door.DeletionTimestamp.IsZero() })
	r.Bool("wantOpen", func(w *World) bool { return w.Door != nil && w.Door.Spec.Open })
	r.Enum("bell", func(w *World) string {
		switch {
		case w.BellErr != nil:
			return "Unknown"
		case w.Bell != nil:
			return "Present"
		}
		return "Absent"
	})
	r.WaitFields(func(w *World) engine.WaitFields {
		if w.Door == nil {
			return reconciler.ObjectFields(nil, w.Now)
		}
		return reconciler.ObjectFields(w.Door, w.Now)
	})

	// Pure: the finalizer changes the Door in memory; the kit's patch saves
	// it. The kit runs no writing row after it until that patch landed.
	r.Action("AddFinalizer", "Add the example.krtt.dev/door finalizer.", reconciler.AddFinalizer(Finalizer, doorOf), engine.Pure())
	r.Action("RemoveFinalizer", "Remove the finalizer so Kubernetes deletes the Door.", reconciler.RemoveFinalizer(Finalizer, doorOf))
	r.Action("RingBell", "Create or update the bell ConfigMap, owned by the Door.", ringBell, engine.WritesThrough())
	r.Action("MarkOpened", "Set status.openedAt, which the Open state's wait counts from.", func(_ context.Context, w *World) engine.Outcome {
		w.Door.Status.OpenedAt = &metav1.Time{Time: w.Now.Truncate(time.Second)}
		return engine.OKf("opened; the bell rang")
	}, engine.Pure())
	r.Action("ClearOpened", "Clear status.openedAt.", func(_ context.Context, w *World) engine.Outcome {
		w.Door.Status.OpenedAt = nil
		return engine.OK()
	}, engine.Pure())
	r.Action("AutoClose", "Set spec.open to false and clear status.openedAt.", func(_ context.Context, w *World) engine.Outcome {
		w.Door.Spec.Open = false
		w.Door.Status.OpenedAt = nil
		return engine.OKf("closed itself after %ds", w.Door.Spec.AutoCloseSeconds)
	}, engine.Pure())
	// Not marked: the deletion shows in a later observation, not this one.
	r.Action("DeleteBell", "Delete the bell ConfigMap.", func(ctx context.Context, w *World) engine.Outcome {
		if err := w.client.Delete(ctx, w.Bell); err != nil && !apierrors.IsNotFound(err) {
			return engine.Fail(err)
		}
		return engine.OKf("deleted ConfigMap %s", w.Bell.Name)
	})
	r.StatusField("openedBy", "status.openedBy", func(w *World, v string) { w.Door.Status.OpenedBy = v })
})

// ringBell writes the bell and puts the API server's answer back into the
// World, as engine.WritesThrough promises.
func ringBell(ctx context.Context, w *World) engine.Outcome {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Door.Namespace, Name: BellName(w.Door.Name)}}
	_, err := controllerutil.CreateOrUpdate(ctx, w.client, cm, func() error {
		cm.Data = map[string]string{"rangAt": w.Now.UTC().Format(time.RFC3339)}
		return controllerutil.SetControllerReference(w.Door, cm, w.client.Scheme())
	})
	if err != nil {
		return engine.Fail(err)
	}
	w.Bell, w.BellErr = cm, nil
	return engine.OK()
}
