package reconciler

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestPaused words a pause as Cluster API's pausedCondition: the Cluster's
// spec.paused first, then the object's own annotation.
func TestPaused(t *testing.T) {
	annotated := metav1.ObjectMeta{Name: "m1", Annotations: map[string]string{clusterv1.PausedAnnotation: ""}}
	live, paused := &clusterv1.Cluster{}, &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: true}}
	for _, tc := range []struct {
		name    string
		obj     *clusterv1.Machine
		cluster *clusterv1.Cluster
		paused  bool
		why     string
	}{
		{"running", &clusterv1.Machine{}, live, false, ""},
		{"no Cluster", &clusterv1.Machine{}, nil, false, ""},
		{"Cluster paused", &clusterv1.Machine{}, paused, true, "Cluster spec.paused is set to true"},
		{"annotated", &clusterv1.Machine{ObjectMeta: annotated}, nil, true, "Machine has the cluster.krtt.dev/paused annotation"},
		{"both", &clusterv1.Machine{ObjectMeta: annotated}, paused, true,
			"Cluster spec.paused is set to true, Machine has the cluster.krtt.dev/paused annotation"},
	} {
		p, why := Paused("Machine", tc.obj, tc.cluster)
		if p != tc.paused || why != tc.why {
			t.Errorf("%s: %v %q, want %v %q", tc.name, p, why, tc.paused, tc.why)
		}
		out := DescribePause(func(*clusterv1.Machine) (bool, string) { return Paused("Machine", tc.obj, tc.cluster) })(context.Background(), tc.obj)
		if out.Message != tc.why {
			t.Errorf("%s: DescribePause says %q, want %q", tc.name, out.Message, tc.why)
		}
	}
}
