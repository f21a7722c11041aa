package machine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestNodeHealth(t *testing.T) {
	node := func(conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: conds}}
	}
	c := func(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s}
	}
	defaults := clusterv1.DefaultHealthNodeConditions
	for _, tc := range []struct {
		name   string
		n      *corev1.Node
		types  []string
		want   metav1.ConditionStatus
		reason string
		fact   string
	}{
		{"ready", node(c(corev1.NodeReady, "True")), defaults, metav1.ConditionTrue, "NodeHealthy", nodeHealthy},
		{"no Ready condition is unknown", node(), defaults, metav1.ConditionUnknown, "NodeConditionsUnknown", nodeNotReported},
		{"Ready unknown", node(c(corev1.NodeReady, "Unknown")), defaults, metav1.ConditionUnknown, "NodeConditionsUnknown", nodeNotReady},
		{"not ready", node(c(corev1.NodeReady, "False")), defaults, metav1.ConditionFalse, "NodeNotReady", nodeNotReady},
		{"listed condition True", node(c(corev1.NodeReady, "True"), c(corev1.NodeDiskPressure, "True")), defaults, metav1.ConditionFalse, "NodeConditionsFailed", nodeConditionsFailed},
		{"False wins over Unknown", node(c(corev1.NodeReady, "Unknown"), c("KernelDeadlock", "True")), defaults, metav1.ConditionFalse, "NodeConditionsFailed", nodeNotReady},
		{"listed condition unknown", node(c(corev1.NodeReady, "True"), c("NetworkUnavailable", "Unknown")), defaults, metav1.ConditionUnknown, "NodeConditionsUnknown", nodeHealthy},
		{"unlisted condition True", node(c(corev1.NodeReady, "True"), c(corev1.NodeMemoryPressure, "True")), defaults, metav1.ConditionTrue, "NodeHealthy", nodeHealthy},
		{"own list", node(c(corev1.NodeReady, "True"), c(corev1.NodeMemoryPressure, "True")), []string{"MemoryPressure"}, metav1.ConditionFalse, "NodeConditionsFailed", nodeConditionsFailed},
		{"empty list: only Ready counts", node(c(corev1.NodeReady, "True"), c(corev1.NodeDiskPressure, "True")), []string{}, metav1.ConditionTrue, "NodeHealthy", nodeHealthy},
		{"no Node", nil, defaults, metav1.ConditionTrue, "NodeHealthy", nodeHealthy},
	} {
		h := checkNodeHealth(tc.n, tc.types)
		got, reason, _ := h.condition()
		if tc.n != nil && (got != tc.want || reason != tc.reason) {
			t.Errorf("%s: %s/%s, want %s/%s", tc.name, got, reason, tc.want, tc.reason)
		}
		if f := h.fact(); f != tc.fact {
			t.Errorf("%s: fact %s, want %s", tc.name, f, tc.fact)
		}
	}
}

// The message names every condition that is wrong, with the kubelet's words.
func TestNodeHealthMessage(t *testing.T) {
	n := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: "False", Reason: "KubeletNotReady", Message: "container runtime is down."},
		{Type: "KernelDeadlock", Status: "True", Reason: "DockerHung"},
	}}}
	_, _, msg := nodeHealth(n, clusterv1.DefaultHealthNodeConditions)
	if want := "The Node reports Ready=False (KubeletNotReady: container runtime is down), KernelDeadlock=True (DockerHung)"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}
