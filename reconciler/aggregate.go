package reconciler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// UpToDateGrace: a Machine younger than this without an UpToDate condition
// is left out of the UpToDate aggregates, as in Cluster API, so they do not
// flicker while a new Machine gets its first status.
const UpToDateGrace = 10 * time.Second

// AggregateReasons are the reasons of one aggregate condition: all fine,
// an issue (a False), unknown.
type AggregateReasons struct{ Fine, Issue, Unknown string }

// The reasons of the aggregates of the Machines' Ready and UpToDate.
var (
	ReadyReasons    = AggregateReasons{Fine: "Ready", Issue: "NotReady", Unknown: "ReadyUnknown"}
	UpToDateReasons = AggregateReasons{Fine: "UpToDate", Issue: "NotUpToDate", Unknown: "UpToDateUnknown"}
)

// shownGroups and shownPerGroup bound an aggregate's message: the first three
// messages (issues before unknowns, then the most Machines), each naming
// three Machines, as Cluster API's merge strategy words them.
const shownGroups, shownPerGroup = 3, 3

// AggregateMachines is Cluster API's NewAggregateCondition over the Machines'
// condition cond for the target type: False (reason issue) when one is
// False, Unknown (reason unknown) when one is Unknown or has not reported
// it, True (reason fine) otherwise, and True (NoReplicas) without Machines.
// The message has a "* Machine(s) <names>: <message>" line per message.
func AggregateMachines(machines []*clusterv1.Machine, cond, target string, r AggregateReasons, gen int64) metav1.Condition {
	out := metav1.Condition{Type: target, Status: metav1.ConditionTrue, Reason: r.Fine, ObservedGeneration: gen}
	if len(machines) == 0 {
		out.Reason = "NoReplicas"
		return out
	}
	type group struct {
		issue bool
		msg   string
		names []string
	}
	var groups []*group
	add := func(issue bool, msg, name string) {
		i := slices.IndexFunc(groups, func(g *group) bool { return g.issue == issue && g.msg == msg })
		if i < 0 {
			groups = append(groups, &group{issue: issue, msg: msg})
			i = len(groups) - 1
		}
		groups[i].names = append(groups[i].names, name)
	}
	for _, m := range machines {
		c := meta.FindStatusCondition(m.Status.Conditions, cond)
		switch {
		case c == nil:
			add(false, fmt.Sprintf("Condition %s not yet reported", cond), m.Name)
		case c.Status == metav1.ConditionFalse:
			add(true, c.Message, m.Name)
		case c.Status == metav1.ConditionUnknown:
			add(false, c.Message, m.Name)
		}
	}
	if len(groups) == 0 {
		return out
	}
	out.Status, out.Reason = metav1.ConditionUnknown, r.Unknown
	if slices.ContainsFunc(groups, func(g *group) bool { return g.issue }) {
		out.Status, out.Reason = metav1.ConditionFalse, r.Issue
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		switch {
		case a.issue != b.issue && a.issue:
			return -1
		case a.issue != b.issue:
			return 1
		}
		return len(b.names) - len(a.names)
	})
	var lines []string
	others := 0
	for i, g := range groups {
		if i >= shownGroups {
			others += len(g.names)
			continue
		}
		slices.Sort(g.names)
		var who string
		switch n := len(g.names); {
		case n == 1:
			who = "Machine " + g.names[0]
		case n <= shownPerGroup:
			who = "Machines " + strings.Join(g.names, ", ")
		default:
			who = fmt.Sprintf("Machines %s, ... (%d more)", strings.Join(g.names[:shownPerGroup], ", "), n-shownPerGroup)
		}
		line := "* " + who + ":"
		if strings.Contains(g.msg, "\n") {
			line += "\n  " + strings.ReplaceAll(g.msg, "\n", "\n  ")
		} else if g.msg != "" {
			line += " " + g.msg
		}
		lines = append(lines, line)
	}
	if others > 0 {
		lines = append(lines, fmt.Sprintf("And %d more Machines", others))
	}
	out.Message = strings.Join(lines, "\n")
	return out
}

// AggregateUpToDate aggregates the Machines' UpToDate condition into
// target, leaving out a Machine younger than UpToDateGrace without it.
func AggregateUpToDate(machines []*clusterv1.Machine, target string, now time.Time, gen int64) metav1.Condition {
	var counted []*clusterv1.Machine
	for _, m := range machines {
		if meta.FindStatusCondition(m.Status.Conditions, clusterv1.UpToDateCondition) != nil || now.Sub(m.CreationTimestamp.Time) > UpToDateGrace {
			counted = append(counted, m)
		}
	}
	return AggregateMachines(counted, clusterv1.UpToDateCondition, target, UpToDateReasons, gen)
}
