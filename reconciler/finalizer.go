package reconciler

import (
	"context"

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
