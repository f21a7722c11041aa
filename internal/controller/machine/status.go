package machine

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	machineactions "github.com/krtt-dev/krtt/actions/machine"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// This file turns one firing into the Machine's status. Conditions that
// merely mirror other objects (bootstrap, infrastructure, Node) are refreshed
// from the snapshot on every reconcile; conditions a row names win over them.

// applyStep writes state, phase, status fields, conditions and
// lastTransition into the in-memory Machine.
func applyStep(s *machineactions.Scope, step *engine.Step) {
	m := s.Machine
	res := step.Result
	if m.Status.State != res.To.Name || m.Status.StateSince == nil {
		m.Status.StateSince = &metav1.Time{Time: step.Trace.Time.Truncate(time.Second)}
	}
	m.Status.State = res.To.Name
	if res.To.Phase != "" {
		m.Status.Phase = clusterv1.MachinePhase(res.To.Phase)
	}
	m.Status.ObservedGeneration = m.Generation
	for _, k := range res.StatusOrder {
		v := res.Status[k]
		switch k {
		case "bootstrapDataSecretCreated":
			m.Status.Initialization.BootstrapDataSecretCreated = ptr.To(v == "true")
		case "infrastructureProvisioned":
			m.Status.Initialization.InfrastructureProvisioned = ptr.To(v == "true")
		case "failureReason":
			m.Status.FailureReason = ptr.To(v)
		case "failureMessage":
			m.Status.FailureMessage = ptr.To(v)
		}
	}
	mirrorConditions(s)
	for _, c := range res.Conditions {
		setCondition(m, c.Type, metav1.ConditionStatus(c.Status), c.Reason, c.Message)
	}
	summarizeReady(m, res.Conditions)
	mirrorCertificatesExpiry(s)

	tr := step.Trace
	next := clusterv1.LastTransition{
		Table: tr.Table, Row: tr.Row, From: tr.From, To: tr.To, Action: tr.Action,
		Outcome: string(tr.Outcome), Message: tr.Message,
	}
	if prev := m.Status.LastTransition; prev != nil {
		same := *prev
		same.Time = metav1.Time{}
		if same == next {
			// Same row, same outcome, same words: keep the old time so an
			// unchanged wait does not rewrite status on every reconcile.
			return
		}
	}
	next.Time = metav1.NewTime(tr.Time.Truncate(time.Second))
	m.Status.LastTransition = &next
}

func setCondition(m *clusterv1.Machine, t string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: m.Generation,
	})
}

func mirrorConditions(s *machineactions.Scope) {
	m := s.Machine
	// BootstrapConfigReady
	switch {
	case m.Spec.Bootstrap.ConfigRef == nil:
		setCondition(m, clusterv1.BootstrapConfigReadyCondition, metav1.ConditionTrue, "DataSecretProvided", "spec.bootstrap.dataSecretName is set by the user")
	case s.Bootstrap != nil:
		if st, reason, msg, ok := machineactions.ReadyCondition(s.Bootstrap); ok {
			setCondition(m, clusterv1.BootstrapConfigReadyCondition, metav1.ConditionStatus(st), orDefault(reason, "BootstrapConfigReady"), msg)
		} else if machineactions.BootstrapDataSecretCreated(s.Bootstrap) {
			setCondition(m, clusterv1.BootstrapConfigReadyCondition, metav1.ConditionTrue, "DataSecretCreated", "")
		} else {
			setCondition(m, clusterv1.BootstrapConfigReadyCondition, metav1.ConditionFalse, "WaitingForDataSecret", "Waiting for the bootstrap provider to create the data secret")
		}
	}
	// InfrastructureReady
	if s.Infrastructure != nil {
		if st, reason, msg, ok := machineactions.ReadyCondition(s.Infrastructure); ok {
			setCondition(m, clusterv1.InfrastructureReadyCondition, metav1.ConditionStatus(st), orDefault(reason, "InfrastructureReady"), msg)
		} else if machineactions.InfrastructureProvisioned(s.Infrastructure) {
			setCondition(m, clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, "Provisioned", "")
		} else {
			setCondition(m, clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, "WaitingForProvisioning", "Waiting for the infrastructure provider")
		}
	}
	// NodeReady and NodeHealthy
	if n := s.Node(); n != nil {
		ready := nodeCondition(n, corev1.NodeReady)
		if ready == nil {
			setCondition(m, clusterv1.NodeReadyCondition, metav1.ConditionUnknown, "NodeConditionsUnknown", "The Node reports no Ready condition")
		} else {
			setCondition(m, clusterv1.NodeReadyCondition, metav1.ConditionStatus(ready.Status), orDefault(ready.Reason, "NodeReady"), ready.Message)
		}
		healthy, reason, msg := nodeHealth(n)
		setCondition(m, clusterv1.NodeHealthyCondition, healthy, reason, msg)
	}
	// Paused and Deleting, when no row says otherwise.
	setCondition(m, clusterv1.PausedCondition, metav1.ConditionFalse, "NotPaused", "")
	if m.DeletionTimestamp.IsZero() {
		setCondition(m, clusterv1.DeletingCondition, metav1.ConditionFalse, clusterv1.NotDeletingReason, "")
	}
}

func nodeCondition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// nodeHealth: healthy when Ready and under no pressure.
func nodeHealth(n *corev1.Node) (metav1.ConditionStatus, string, string) {
	ready := nodeCondition(n, corev1.NodeReady)
	switch {
	case ready == nil || ready.Status == corev1.ConditionUnknown:
		return metav1.ConditionUnknown, "NodeConditionsUnknown", "The Node's Ready condition is unknown"
	case ready.Status == corev1.ConditionFalse:
		return metav1.ConditionFalse, "NodeNotReady", "The Node is not Ready: " + ready.Message
	}
	for _, t := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if c := nodeCondition(n, t); c != nil && c.Status == corev1.ConditionTrue {
			return metav1.ConditionFalse, string(t), "The Node reports " + string(t)
		}
	}
	return metav1.ConditionTrue, "NodeHealthy", ""
}

// summarizeReady: Ready is True when the Machine is not being deleted and
// its bootstrap, infrastructure and Node are; otherwise it names the first
// condition that is not. A row that sets Ready itself wins.
func summarizeReady(m *clusterv1.Machine, fromRow []engine.Condition) {
	for _, c := range fromRow {
		if c.Type == clusterv1.ReadyCondition {
			return
		}
	}
	if !m.DeletionTimestamp.IsZero() {
		setCondition(m, clusterv1.ReadyCondition, metav1.ConditionFalse, "Deleting", "The Machine is being deleted")
		return
	}
	for _, t := range []string{clusterv1.BootstrapConfigReadyCondition, clusterv1.InfrastructureReadyCondition, clusterv1.NodeHealthyCondition} {
		c := meta.FindStatusCondition(m.Status.Conditions, t)
		if c == nil {
			setCondition(m, clusterv1.ReadyCondition, metav1.ConditionFalse, t+"Missing", t+" is not reported yet")
			return
		}
		if c.Status != metav1.ConditionTrue {
			setCondition(m, clusterv1.ReadyCondition, c.Status, c.Reason, t+": "+c.Message)
			return
		}
	}
	setCondition(m, clusterv1.ReadyCondition, metav1.ConditionTrue, "Ready", "")
}

func mirrorCertificatesExpiry(s *machineactions.Scope) {
	m := s.Machine
	raw := m.Annotations[clusterv1.CertificatesExpiryAnnotation]
	if raw == "" && s.Bootstrap != nil {
		raw = s.Bootstrap.GetAnnotations()[clusterv1.CertificatesExpiryAnnotation]
	}
	if raw == "" {
		m.Status.CertificatesExpiryDate = nil
		return
	}
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		m.Status.CertificatesExpiryDate = &metav1.Time{Time: t}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
