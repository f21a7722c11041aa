package machine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeHealth(t *testing.T) {
	node := func(conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: conds}}
	}
	c := func(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s}
	}
	for _, tc := range []struct {
		name   string
		n      *corev1.Node
		want   metav1.ConditionStatus
		reason string
	}{
		{"ready", node(c(corev1.NodeReady, "True")), metav1.ConditionTrue, "NodeHealthy"},
		{"no Ready condition is unknown", node(), metav1.ConditionUnknown, "NodeConditionsUnknown"},
		{"Ready unknown", node(c(corev1.NodeReady, "Unknown")), metav1.ConditionUnknown, "NodeConditionsUnknown"},
		{"not ready", node(c(corev1.NodeReady, "False")), metav1.ConditionFalse, "NodeNotReady"},
		{"pressure", node(c(corev1.NodeReady, "True"), c(corev1.NodeDiskPressure, "True")), metav1.ConditionFalse, "NodeConditionsFailed"},
		{"False wins over Unknown", node(c(corev1.NodeReady, "Unknown"), c(corev1.NodeMemoryPressure, "True")), metav1.ConditionFalse, "NodeConditionsFailed"},
		{"pressure unknown", node(c(corev1.NodeReady, "True"), c(corev1.NodePIDPressure, "Unknown")), metav1.ConditionUnknown, "NodeConditionsUnknown"},
	} {
		got, reason, _ := nodeHealth(tc.n)
		if got != tc.want || reason != tc.reason {
			t.Errorf("%s: %s/%s, want %s/%s", tc.name, got, reason, tc.want, tc.reason)
		}
	}
}
