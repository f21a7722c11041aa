package contract

import (
	"testing"

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
