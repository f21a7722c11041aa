package machine

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// Values of the nodeHealth fact.
const (
	nodeHealthy          = "Healthy"
	nodeNotReady         = "NotReady"
	nodeConditionsFailed = "ConditionsFailed"
	nodeNotReported      = "NotReported"
)

// registerHealth binds the facts and actions of Machine health and the
// creation timeout (the machine-controller-manager's reconcileMachineHealth,
// healthTimeout and creationTimeout); the rows decide what they mean.
func registerHealth(r *engine.Registry[*Scope]) {
	r.Enum("nodeHealth", func(s *Scope) string {
		if s.Machine == nil {
			return nodeHealthy
		}
		return checkNodeHealth(s.Node(), healthNodeConditions(s.Machine)).fact()
	})
	r.Action("MarkUnhealthy", "Set status.health.unhealthySince if unset; say which Node conditions are unhealthy.", markUnhealthy, engine.Pure())
	r.Action("ClearUnhealthySince", "Clear status.health.unhealthySince: the Node is healthy again.", clearUnhealthySince, engine.Pure())
}

// creationSince is when the creation wait that started at start counts
// from: the start, or, once the providerID is known and what is left is
// the Node joining the workload cluster, as every Node-side wait counts
// (NodeSideSince). Before that the wait is on providers in the management
// cluster, which a workload cluster outage does not hold up.
func creationSince(s *Scope, start time.Time) time.Time {
	if s.Machine == nil || s.Machine.Spec.ProviderID == nil || *s.Machine.Spec.ProviderID == "" {
		return start
	}
	return NodeSideSince(s, start)
}

// healthNodeConditions: the condition types that make the Node unhealthy
// when True; the CRD defaults them, this covers a Machine read before.
func healthNodeConditions(m *clusterv1.Machine) []string {
	if m.Spec.Health.NodeConditions == nil {
		return clusterv1.DefaultHealthNodeConditions
	}
	return m.Spec.Health.NodeConditions
}

// nodeHealthCheck is what the Node's conditions say about its health: the
// conditions that say unhealthy (Ready False, a listed condition True) and
// those that are unknown (Ready Unknown or missing, a listed condition
// Unknown; a listed condition the Node does not report is not held against
// it).
type nodeHealthCheck struct {
	found        bool
	readyMissing bool
	readyStatus  corev1.ConditionStatus
	bad, unknown []string
}

func checkNodeHealth(n *corev1.Node, unhealthyWhenTrue []string) nodeHealthCheck {
	h := nodeHealthCheck{found: n != nil}
	if n == nil {
		return h
	}
	describe := func(c *corev1.NodeCondition) string {
		out := string(c.Type) + "=" + string(c.Status)
		if c.Reason != "" || c.Message != "" {
			out += " (" + strings.TrimSuffix(strings.Join(nonEmpty(c.Reason, c.Message), ": "), ".") + ")"
		}
		return out
	}
	switch ready := nodeCondition(n, corev1.NodeReady); {
	case ready == nil:
		h.readyMissing = true
		h.unknown = append(h.unknown, string(corev1.NodeReady))
	case ready.Status == corev1.ConditionTrue:
		h.readyStatus = ready.Status
	case ready.Status == corev1.ConditionFalse:
		h.readyStatus = ready.Status
		h.bad = append(h.bad, describe(ready))
	default:
		h.readyStatus = corev1.ConditionUnknown
		h.unknown = append(h.unknown, describe(ready))
	}
	for _, t := range unhealthyWhenTrue {
		switch c := nodeCondition(n, corev1.NodeConditionType(t)); {
		case c == nil || c.Status == corev1.ConditionFalse:
		case c.Status == corev1.ConditionTrue:
			h.bad = append(h.bad, describe(c))
		default:
			h.unknown = append(h.unknown, describe(c))
		}
	}
	return h
}

// fact maps the check onto the nodeHealth fact: a Node that is not Ready,
// whether its kubelet says so (False) or stopped reporting (Unknown), is
// NotReady; one whose kubelet has not reported Ready yet is NotReported (a
// Node that just registered, not an unhealthy one). Without a single Node
// there is nothing to hold against the Machine here: the node fact decides.
func (h nodeHealthCheck) fact() string {
	switch {
	case !h.found:
		return nodeHealthy
	case h.readyMissing:
		return nodeNotReported
	case h.readyStatus != corev1.ConditionTrue:
		return nodeNotReady
	case len(h.bad) > 0:
		return nodeConditionsFailed
	}
	return nodeHealthy
}

// summarisedNodeConditions are the Node conditions NodeHealthy reads, in
// Cluster API's order (summarizeNodeConditions): Ready, then the pressures
// a kubelet reports False while all is well.
var summarisedNodeConditions = []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// nodeHealth is the NodeHealthy condition as Cluster API's
// summarizeNodeConditions writes it: a line "* Node.<Type>: <message>" for
// each of Ready and the pressures that is not fine or not reported, one
// "* Node.AllConditions" line when the kubelet said the same of several;
// NodeNotHealthy when one says unhealthy, NodeHealthyUnknown when one is
// unknown or missing, else NodeHealthy. The types of spec.health.nodeConditions
// (the health timeout's, which Cluster API does not have) count too when
// the Node reports them other than False, so a Node the timeout holds
// against the Machine never reads healthy.
func nodeHealth(n *corev1.Node, unhealthyWhenTrue []string) (metav1.ConditionStatus, string, string) {
	var lines []string
	said := map[string]bool{}
	reported, bad, unknown := 0, 0, 0
	note := func(c *corev1.NodeCondition) {
		m := c.Message
		if m == "" {
			m = "Condition is " + string(c.Status)
		}
		reported++
		said[m] = true
		lines = append(lines, "* Node."+string(c.Type)+": "+m)
		if c.Status == corev1.ConditionUnknown {
			unknown++
		} else {
			bad++
		}
	}
	for _, t := range summarisedNodeConditions {
		switch c := nodeCondition(n, t); {
		case c == nil:
			lines = append(lines, "* Node."+string(t)+": Condition not yet reported")
			unknown++
		case t == corev1.NodeReady && c.Status != corev1.ConditionTrue,
			t != corev1.NodeReady && c.Status != corev1.ConditionFalse:
			note(c)
		}
	}
	for _, t := range unhealthyWhenTrue {
		if slices.Contains(summarisedNodeConditions, corev1.NodeConditionType(t)) {
			continue
		}
		if c := nodeCondition(n, corev1.NodeConditionType(t)); c != nil && c.Status != corev1.ConditionFalse {
			note(c)
		}
	}
	if reported > 1 && len(said) == 1 {
		for m := range said {
			lines = []string{"* Node.AllConditions: " + m}
		}
	}
	switch {
	case bad > 0:
		return metav1.ConditionFalse, clusterv1.NodeNotHealthyReason, strings.Join(lines, "\n")
	case unknown > 0:
		return metav1.ConditionUnknown, clusterv1.NodeHealthUnknownReason, strings.Join(lines, "\n")
	}
	return metav1.ConditionTrue, clusterv1.NodeHealthyReason, ""
}

// markUnhealthy starts the health timeout's clock once and names what is
// wrong with the Node, for the row's NodeHealthy message.
func markUnhealthy(_ context.Context, s *Scope) engine.Outcome {
	startClock(&s.Machine.Status.Health.UnhealthySince, metav1.NewTime(s.Now))
	n := s.Node()
	h := checkNodeHealth(n, healthNodeConditions(s.Machine))
	var problems []string
	if h.readyStatus == corev1.ConditionUnknown {
		problems = append(problems, h.unknown[0])
	}
	problems = append(problems, h.bad...)
	since := s.Machine.Status.Health.UnhealthySince.UTC().Format("2006-01-02T15:04:05Z")
	if n == nil {
		// The Node named in nodeRef is gone (row E04): nothing to report
		// but its absence.
		name := ""
		if hasNodeRef(s) {
			name = " " + s.Machine.Status.NodeRef.Name
		}
		return engine.OKf("Node%s has been deleted while the Machine still exists (unhealthy since %s)", name, since)
	}
	return engine.OKf("The Node %s reports %s (unhealthy since %s)", n.Name, strings.Join(problems, ", "), since)
}

func clearUnhealthySince(_ context.Context, s *Scope) engine.Outcome {
	since := s.Machine.Status.Health.UnhealthySince
	if since == nil {
		return engine.OK()
	}
	s.Machine.Status.Health.UnhealthySince = nil
	return engine.OKf("The Node is healthy again (unhealthy since %s)", since.UTC().Format("2006-01-02T15:04:05Z"))
}

func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
