package reconciler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestStaleMachines words Machines in deletion for over 15 minutes as
// Cluster API's aggregateStaleMachines: sorted names, three at most, and
// the causes of drains running for over 5 minutes, in its order.
func TestStaleMachines(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	machine := func(name string, deletedAgo, drainingFor time.Duration, drain string) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if deletedAgo > 0 {
			m.DeletionTimestamp = &metav1.Time{Time: now.Add(-deletedAgo)}
		}
		if drainingFor > 0 {
			m.Status.Deletion.NodeDrainStartTime = &metav1.Time{Time: now.Add(-drainingFor)}
			m.Status.Conditions = []metav1.Condition{{Type: clusterv1.DeletingCondition, Status: metav1.ConditionTrue,
				Reason: clusterv1.DeletingDrainingNodeReason, Message: drain}}
		}
		return m
	}
	const (
		pdb  = "* Pod ns/db: cannot evict pod as it would violate the pod's disruption budget. The disruption budget db needs 1 healthy pods"
		term = "* Pod ns/web: deletionTimestamp set, but still not removed from the Node"
	)
	for _, tc := range []struct {
		name string
		ms   []*clusterv1.Machine
		want string
	}{
		{"none deleted", []*clusterv1.Machine{machine("a", 0, 0, "")}, ""},
		{"deleted 10m ago", []*clusterv1.Machine{machine("a", 10*time.Minute, 10*time.Minute, pdb)}, ""},
		{"one stale", []*clusterv1.Machine{machine("a", 20*time.Minute, 0, "")}, "Machine a is in deletion since more than 15m"},
		{"drain of 4m not named", []*clusterv1.Machine{machine("a", 20*time.Minute, 4*time.Minute, pdb)}, "Machine a is in deletion since more than 15m"},
		{"causes in Cluster API's order", []*clusterv1.Machine{machine("b", 20*time.Minute, 6*time.Minute, term), machine("a", 16*time.Minute, 16*time.Minute, pdb)},
			"Machines a, b are in deletion since more than 15m, delay likely due to PodDisruptionBudgets, Pods not terminating"},
		{"three names, then how many more", []*clusterv1.Machine{machine("e", time.Hour, 0, ""), machine("d", time.Hour, 0, ""),
			machine("c", time.Hour, 0, ""), machine("b", time.Hour, 0, ""), machine("a", time.Hour, 0, "")},
			"Machines a, b, c, ... (2 more) are in deletion since more than 15m"},
	} {
		if got := StaleMachines(tc.ms, now); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
