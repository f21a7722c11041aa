package reconciler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestScalingConditions(t *testing.T) {
	now := metav1.Now()
	live := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	gone := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	const blocked = "because SimMachineTemplate does not exist"
	for _, tc := range []struct {
		name                             string
		obj                              metav1.Object
		current, desired                 int
		stale, blocked                   string
		up, upMessage, down, downMessage string
	}{
		{"steady", live, 3, 3, "", "", "False NotScalingUp", "", "False NotScalingDown", ""},
		{"up", live, 1, 3, "", "", "True ScalingUp", "Scaling up from 1 to 3 replicas", "False NotScalingDown", ""},
		{"up, blocked", live, 0, 3, "", blocked, "True ScalingUp", "Scaling up from 0 to 3 replicas is blocked " + blocked, "False NotScalingDown", ""},
		{"steady, would be blocked", live, 3, 3, "", blocked, "False NotScalingUp", "Scaling up would be blocked " + blocked, "False NotScalingDown", ""},
		{"down", live, 4, 3, "", "", "False NotScalingUp", "", "True ScalingDown", "Scaling down from 4 to 3 replicas"},
		{"down, a Machine stale", live, 4, 3, "Machine m1 is in deletion since more than 15m", "", "False NotScalingUp", "", "True ScalingDown",
			"Scaling down from 4 to 3 replicas\n* Machine m1 is in deletion since more than 15m"},
		{"being deleted wants none, never blocked", gone, 2, 3, "", blocked, "False NotScalingUp", "", "True ScalingDown", "Scaling down from 2 to 0 replicas"},
		{"being deleted, nothing left", gone, 0, 3, "", "", "False NotScalingUp", "", "False NotScalingDown", ""},
	} {
		up, down := ScalingConditions(tc.obj, tc.current, tc.desired, tc.stale, tc.blocked)
		if up.Type != "ScalingUp" || string(up.Status)+" "+up.Reason != tc.up || up.Message != tc.upMessage {
			t.Errorf("%s: ScalingUp %+v, want %s %q", tc.name, up, tc.up, tc.upMessage)
		}
		if down.Type != "ScalingDown" || string(down.Status)+" "+down.Reason != tc.down || down.Message != tc.downMessage {
			t.Errorf("%s: ScalingDown %+v, want %s %q", tc.name, down, tc.down, tc.downMessage)
		}
		if up.ObservedGeneration != tc.obj.GetGeneration() || down.ObservedGeneration != tc.obj.GetGeneration() {
			t.Errorf("%s: observedGeneration %d/%d, want %d", tc.name, up.ObservedGeneration, down.ObservedGeneration, tc.obj.GetGeneration())
		}
	}
}
