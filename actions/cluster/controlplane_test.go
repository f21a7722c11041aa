package cluster

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestControlPlaneFacts: the condition is current when it says what is
// observed; a Cluster whose object was never missing needs none, and an
// object an API error left unread changes nothing.
func TestControlPlaneFacts(t *testing.T) {
	ref := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	cond := func(status metav1.ConditionStatus, reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: ControlPlaneAvailableCondition, Status: status, Reason: reason, Message: msg}}
	}
	missing := "SimControlPlane/cp does not exist"
	for _, tc := range []struct {
		name     string
		ref      *clusterv1.ObjectReference
		found    bool
		unread   bool
		conds    []metav1.Condition
		observed string
		current  bool
	}{
		{"no reference, no condition", nil, false, false, nil, "NotNamed", true},
		{"missing, not told yet", ref, false, false, nil, "Missing", false},
		{"missing, told", ref, false, false, cond(metav1.ConditionFalse, "ControlPlaneNotFound", missing), "Missing", true},
		{"missing, told of another object", ref, false, false, cond(metav1.ConditionFalse, "ControlPlaneNotFound", "SimControlPlane/old does not exist"), "Missing", false},
		{"found, never missing", ref, true, false, nil, "Found", true},
		{"found after it was missing", ref, true, false, cond(metav1.ConditionFalse, "ControlPlaneNotFound", missing), "Found", false},
		{"found, told", ref, true, false, cond(metav1.ConditionTrue, "ControlPlaneFound", "SimControlPlane/cp exists"), "Found", true},
		{"reference removed after it was missing", nil, false, false, cond(metav1.ConditionFalse, "ControlPlaneNotFound", missing), "NotNamed", false},
		{"reference removed, told", nil, false, false, cond(metav1.ConditionTrue, "NoControlPlaneRef", "spec.controlPlaneRef names no control plane object"), "NotNamed", true},
		{"unread", ref, false, true, nil, "Missing", true},
	} {
		c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: tc.ref}}
		c.Status.Conditions = tc.conds
		s := &Scope{Found: true, Cluster: c, ControlPlaneUnread: tc.unread}
		if tc.ref != nil && !tc.found && !tc.unread {
			s.ControlPlaneMissing = missing
		}
		if tc.found {
			s.ControlPlane = &unstructured.Unstructured{}
		}
		if got := controlPlane(s); got != tc.observed {
			t.Errorf("%s: controlPlane = %s, want %s", tc.name, got, tc.observed)
		}
		if got := controlPlaneConditionCurrent(s); got != tc.current {
			t.Errorf("%s: controlPlaneConditionCurrent = %v, want %v", tc.name, got, tc.current)
		}
	}
}
