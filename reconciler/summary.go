package reconciler

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gate is one condition a summary condition reads (Cluster API's
// ForConditionTypes). Optional: left out while it is not set
// (IgnoreTypesIfMissing). Negative: fine while False, an issue while True
// (NegativePolarityConditionTypes, as Deleting).
type Gate struct {
	Type               string
	Optional, Negative bool
}

// Summarize reads the gates from conds as Cluster API's summary conditions
// do: False when any gate is an issue (False, or True for a negative one),
// Unknown when none is and some are Unknown or not yet reported, True
// otherwise; the message has a "* <Type>: <message>" line for each gate
// that is not fine, issues before unknowns, each in the gates' order (the
// reason where a condition has no message).
func Summarize(conds []metav1.Condition, gates ...Gate) (metav1.ConditionStatus, string) {
	var issues, unknowns []string
	for _, g := range gates {
		c := meta.FindStatusCondition(conds, g.Type)
		if c == nil {
			if !g.Optional {
				unknowns = append(unknowns, "* "+g.Type+": Condition not yet reported")
			}
			continue
		}
		bad := metav1.ConditionFalse
		if g.Negative {
			bad = metav1.ConditionTrue
		}
		msg := c.Message
		if msg == "" {
			msg = c.Reason
		}
		switch c.Status {
		case bad:
			issues = append(issues, "* "+g.Type+": "+msg)
		case metav1.ConditionUnknown:
			unknowns = append(unknowns, "* "+g.Type+": "+msg)
		}
	}
	status := metav1.ConditionTrue
	switch {
	case len(issues) > 0:
		status = metav1.ConditionFalse
	case len(unknowns) > 0:
		status = metav1.ConditionUnknown
	}
	return status, strings.Join(append(issues, unknowns...), "\n")
}

// AddGate appends g to gates unless one of them reads its condition type
// already: a gate a user names twice, or one the summary always reads,
// counts once.
func AddGate(gates []Gate, g Gate) []Gate {
	for _, have := range gates {
		if have.Type == g.Type {
			return gates
		}
	}
	return append(gates, g)
}
