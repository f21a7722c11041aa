package watchfilter

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestApply(t *testing.T) {
	var none ctrl.Options
	if err := Apply(&none, "", &corev1.Node{}); err != nil || none.Cache.ByObject != nil {
		t.Errorf("empty value: err %v, cache entries %v; want nothing changed", err, none.Cache.ByObject)
	}
	var bad ctrl.Options
	if err := Apply(&bad, "not a label!", &corev1.Node{}); err == nil || !strings.Contains(err.Error(), "--watch-filter") {
		t.Errorf("bad value: %v, want an error naming --watch-filter", err)
	}
	var o ctrl.Options
	if err := Apply(&o, "part-a", &corev1.Node{}, &clusterv1.Machine{}); err != nil {
		t.Fatal(err)
	}
	if len(o.Cache.ByObject) != 2 {
		t.Fatalf("%d cache entries, want 2", len(o.Cache.ByObject))
	}
	for obj, by := range o.Cache.ByObject {
		if by.Label == nil || by.Label.String() != clusterv1.WatchFilterLabel+"=part-a" {
			t.Errorf("%T: selector %v", obj, by.Label)
		}
	}
}
