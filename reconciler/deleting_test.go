package reconciler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestDeletingCondition(t *testing.T) {
	now := metav1.Now()
	live := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	gone := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	for _, tc := range []struct {
		obj             metav1.Object
		machines, sets  int
		status          metav1.ConditionStatus
		reason, message string
	}{
		{live, 4, 1, metav1.ConditionFalse, "NotDeleting", ""},
		{gone, 1, 0, metav1.ConditionTrue, "Deleting", "Deleting 1 Machine"},
		{gone, 3, 2, metav1.ConditionTrue, "Deleting", "Deleting 3 Machines"},
		{gone, 0, 2, metav1.ConditionTrue, "Deleting", "Deleting 2 MachineSets"},
		{gone, 0, 1, metav1.ConditionTrue, "Deleting", "Deleting 1 MachineSets"},
		{gone, 0, 0, metav1.ConditionTrue, "Deleting", "Deletion completed"},
	} {
		c := DeletingCondition(tc.obj, tc.machines, tc.sets, "")
		if c.Type != "Deleting" || c.Status != tc.status || c.Reason != tc.reason || c.Message != tc.message {
			t.Errorf("%d Machines, %d MachineSets, deleting %v: %+v", tc.machines, tc.sets, tc.obj.GetDeletionTimestamp() != nil, c)
		}
	}
	if c := DeletingCondition(gone, 2, 0, "Machines a, b are in deletion since more than 15m"); c.Message != "Deleting 2 Machines\n* Machines a, b are in deletion since more than 15m" {
		t.Errorf("with stale Machines: %q", c.Message)
	}
	if c := DeletingCondition(gone, 0, 1, "Machine a is in deletion since more than 15m"); c.Message != "Deleting 1 MachineSets" {
		t.Errorf("no Machine left, yet a stale line: %q", c.Message)
	}
	if c := DeletingCondition(live, 0, 0, ""); c.ObservedGeneration != 3 {
		t.Errorf("observedGeneration %d, want 3", c.ObservedGeneration)
	}
}
