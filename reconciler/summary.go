package reconciler

import (
	"regexp"
	"slices"
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
	// Fine lists reasons that count as fine whatever the status (Cluster
	// API's InfoMergePriority from a custom merge strategy): a Machine
	// being deleted whose infrastructure object is gone is not an issue.
	Fine []string
}

// Summarize reads the gates from conds as Cluster API's summary conditions
// do: False when any gate is an issue (False, or True for a negative one),
// Unknown when none is and some are Unknown or not yet reported, True
// otherwise; the message has a "* <Type>: <message>" line for each gate
// that is not fine, in the gates' order (the reason where a condition has
// no message; a message of several lines or bullets indented below, see
// indentUnder).
func Summarize(conds []metav1.Condition, gates ...Gate) (metav1.ConditionStatus, string) {
	var lines []string
	issues, unknowns := 0, 0
	for _, g := range gates {
		c := meta.FindStatusCondition(conds, g.Type)
		if c == nil {
			if !g.Optional {
				unknowns++
				lines = append(lines, "* "+g.Type+": Condition not yet reported")
			}
			continue
		}
		if slices.Contains(g.Fine, c.Reason) {
			continue
		}
		bad := metav1.ConditionFalse
		if g.Negative {
			bad = metav1.ConditionTrue
		}
		switch c.Status {
		case bad:
			issues++
		case metav1.ConditionUnknown:
			unknowns++
		default:
			continue
		}
		if c.Message == "" {
			lines = append(lines, "* "+g.Type+": "+c.Reason)
			continue
		}
		lines = append(lines, "* "+g.Type+":"+indentUnder(c.Message))
	}
	status := metav1.ConditionTrue
	switch {
	case issues > 0:
		status = metav1.ConditionFalse
	case unknowns > 0:
		status = metav1.ConditionUnknown
	}
	return status, strings.Join(lines, "\n")
}

// bullet finds a "* " list item, as Cluster API's summaries look for one
// anywhere in a message.
var bullet = regexp.MustCompile(`\s*\*\s+`)

// indentUnder places a condition's message after its "* <Type>:" line the
// way Cluster API's summaries do: one plain line follows on the same line;
// a message of several lines or of bullets goes below, indented, each line
// that is not a bullet made one.
func indentUnder(m string) string {
	if !strings.Contains(m, "\n") && !bullet.MatchString(m) {
		return " " + m
	}
	lines := strings.Split(m, "\n")
	plain := false
	for _, l := range lines {
		if !bullet.MatchString(l) {
			plain = true
			break
		}
	}
	for i, l := range lines {
		switch {
		case !plain:
			lines[i] = "  " + l
		case bullet.MatchString(l):
			lines[i] = "    " + l
		default:
			lines[i] = "  * " + l
		}
	}
	return "\n" + strings.Join(lines, "\n")
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
