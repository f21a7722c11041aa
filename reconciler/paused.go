package reconciler

import (
	"context"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// Paused says whether obj (of kind) is paused, by its Cluster's
// spec.paused or its own paused annotation, and why in Cluster API's words
// (util/paused pausedCondition): "Cluster spec.paused is set to true",
// "<Kind> has the cluster.krtt.dev/paused annotation", both joined by ", ".
// cluster may be nil (not found) or obj itself (a Cluster).
func Paused(kind string, obj client.Object, cluster *clusterv1.Cluster) (bool, string) {
	var why []string
	if cluster != nil && cluster.Spec.Paused {
		why = append(why, "Cluster spec.paused is set to true")
	}
	if obj != nil {
		if _, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]; ok {
			why = append(why, kind+" has the "+clusterv1.PausedAnnotation+" annotation")
		}
	}
	return len(why) > 0, strings.Join(why, ", ")
}

// DescribePause is the action that says why an object is paused (Paused),
// for the Paused condition of the row that holds it.
func DescribePause[E any](pause func(E) (bool, string)) func(context.Context, E) engine.Outcome {
	return func(_ context.Context, s E) engine.Outcome {
		_, why := pause(s)
		return engine.OKf("%s", why)
	}
}
