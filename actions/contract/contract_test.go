package contract

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The contract's readiness flags are read at the v1beta2 place first, else
// at the v1beta1 one, and a value at the first place wins even when false.
func TestReadinessFlagsOfBothContractVersions(t *testing.T) {
	obj := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": status}}
	}
	cases := []struct {
		name string
		read func(*unstructured.Unstructured) bool
		u    *unstructured.Unstructured
		want bool
	}{
		{"no object", ControlPlaneInitialized, nil, false},
		{"no status", ControlPlaneInitialized, &unstructured.Unstructured{Object: map[string]any{}}, false},
		{"v1beta2 initialized", ControlPlaneInitialized, obj(map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true}}), true},
		{"v1beta1 initialized", ControlPlaneInitialized, obj(map[string]any{"initialized": true}), true},
		{"v1beta2 false wins", ControlPlaneInitialized, obj(map[string]any{"initialization": map[string]any{"controlPlaneInitialized": false}, "initialized": true}), false},
		{"v1beta2 provisioned", Provisioned, obj(map[string]any{"initialization": map[string]any{"provisioned": true}}), true},
		{"v1beta1 ready", Provisioned, obj(map[string]any{"ready": true}), true},
		{"neither", Provisioned, obj(map[string]any{"initialized": true}), false},
	}
	for _, c := range cases {
		if got := c.read(c.u); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
