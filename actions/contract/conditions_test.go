package contract

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestConditions: entries without a type or with a status the API server
// would refuse are left out; Ready is found among the rest.
func TestConditions(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "Maybe"},
		map[string]any{"status": "True"},
		"not an object",
		map[string]any{"type": "Ready", "status": "False", "reason": "Pending", "message": "waiting for the load balancer"},
	}}}}
	if got := Conditions(u); len(got) != 1 {
		t.Fatalf("Conditions = %+v, want only the valid Ready", got)
	}
	c := ReadyCondition(u)
	if c == nil || c.Status != "False" || c.Reason != "Pending" || c.Message != "waiting for the load balancer" {
		t.Errorf("ReadyCondition = %+v", c)
	}
	if ReadyCondition(nil) != nil {
		t.Error("a nil object has a Ready condition")
	}
}

// TestMirroredReason: a provider's reason is kept; without one a True
// condition takes the mirror's own, any other NoReasonReported.
func TestMirroredReason(t *testing.T) {
	for _, tc := range []struct {
		c    metav1.Condition
		want string
	}{
		{metav1.Condition{Status: metav1.ConditionFalse, Reason: "Pending"}, "Pending"},
		{metav1.Condition{Status: metav1.ConditionTrue}, "Ready"},
		{metav1.Condition{Status: metav1.ConditionFalse}, "NoReasonReported"},
		{metav1.Condition{Status: metav1.ConditionUnknown}, "NoReasonReported"},
	} {
		if got := MirroredReason(&tc.c, "Ready"); got != tc.want {
			t.Errorf("MirroredReason(%s %q) = %q, want %q", tc.c.Status, tc.c.Reason, got, tc.want)
		}
	}
}
