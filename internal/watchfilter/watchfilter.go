// Package watchfilter narrows a manager's cache to the objects labelled
// cluster.krtt.dev/watch-filter=VALUE, the one rule the operator and the sim
// share for running several instances, each on a part of a fleet.
package watchfilter

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Apply makes the cache hold only the labelled objects of the given kinds;
// an empty value changes nothing, and a value that is not a label value is
// refused, naming the flag.
func Apply(o *ctrl.Options, value string, kinds ...client.Object) error {
	if value == "" {
		return nil
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return fmt.Errorf("--watch-filter %q is not a label value: %s", value, strings.Join(errs, "; "))
	}
	if o.Cache.ByObject == nil {
		o.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	filter := labels.SelectorFromSet(labels.Set{clusterv1.WatchFilterLabel: value})
	for _, obj := range kinds {
		o.Cache.ByObject[obj] = cache.ByObject{Label: filter}
	}
	return nil
}
