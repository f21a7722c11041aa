package reconciler

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/krtt-dev/krtt/engine"
)

// AddFinalizer is the action that puts a controller's finalizer on the object
// it reconciles (obj finds it in the scope). It changes the object in memory
// only: the kit's patch writes it, with the rest of the row's changes.
func AddFinalizer[E any](finalizer string, obj func(E) client.Object) func(context.Context, E) engine.Outcome {
	return func(_ context.Context, s E) engine.Outcome {
		controllerutil.AddFinalizer(obj(s), finalizer)
		return engine.OK()
	}
}

// RemoveFinalizer is the action that takes the finalizer off again, in memory
// like AddFinalizer, so that Kubernetes can delete the object once the patch lands.
func RemoveFinalizer[E any](finalizer string, obj func(E) client.Object) func(context.Context, E) engine.Outcome {
	return func(_ context.Context, s E) engine.Outcome {
		controllerutil.RemoveFinalizer(obj(s), finalizer)
		return engine.OK()
	}
}

// migrateFinalizers replaces, in memory, every legacy name of the
// controller's finalizer on obj by the current one, and returns the
// finalizers as they were when it replaced one (nil when none).
func migrateFinalizers(obj client.Object, finalizer string, legacy []string) []string {
	read := obj.GetFinalizers()
	var out []string
	migrated := false
	for _, f := range read {
		if slices.Contains(legacy, f) {
			migrated = true
			continue
		}
		out = append(out, f)
	}
	if !migrated {
		return nil
	}
	if !slices.Contains(out, finalizer) {
		out = append(out, finalizer)
	}
	obj.SetFinalizers(out)
	return read
}
