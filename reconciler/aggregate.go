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
	if len(machines) == 0 {
		return metav1.Condition{Type: target, Status: metav1.ConditionTrue, Reason: "NoReplicas", ObservedGeneration: gen}
	}
	items := make([]AggregateItem, len(machines))
	for i, m := range machines {
		items[i] = AggregateItem{Kind: "Machine", Name: m.Name, Conditions: m.Status.Conditions}
	}
	return Aggregate(items, cond, target, r, false, gen)
}

// AggregateItem is one object an aggregate condition reads.
type AggregateItem struct {
	Kind, Name string
	Conditions []metav1.Condition
}

// Aggregate is Cluster API's NewAggregateCondition over the items'
// condition cond for the target type. With a positive condition an item's
// False is an issue; with a negative one (negative: RollingOut, ScalingUp,
// ScalingDown) its True is. The target is then, with the same polarity,
// the issue status (reason issue) when one item has an issue, Unknown
// (reason unknown) when one is Unknown or has not reported it, and fine
// otherwise, also without items. The message has a "* <Kind(s)> <names>:
// <message>" line per kind and message (kinds in name order, issues first,
// then the most objects, then by the objects' names), three at most, and
// after a kind's lines the count of its objects whose messages did not fit.
func Aggregate(items []AggregateItem, cond, target string, r AggregateReasons, negative bool, gen int64) metav1.Condition {
	issueStatus, fineStatus := metav1.ConditionFalse, metav1.ConditionTrue
	if negative {
		issueStatus, fineStatus = metav1.ConditionTrue, metav1.ConditionFalse
	}
	out := metav1.Condition{Type: target, Status: fineStatus, Reason: r.Fine, ObservedGeneration: gen}
	type group struct {
		kind  string
		issue bool
		msg   string
		names []string
	}
	var groups []*group
	add := func(kind string, issue bool, msg, name string) {
		i := slices.IndexFunc(groups, func(g *group) bool { return g.kind == kind && g.issue == issue && g.msg == msg })
		if i < 0 {
			groups = append(groups, &group{kind: kind, issue: issue, msg: msg})
			i = len(groups) - 1
		}
		groups[i].names = append(groups[i].names, name)
	}
	for _, it := range items {
		c := meta.FindStatusCondition(it.Conditions, cond)
		switch {
		case c == nil:
			add(it.Kind, false, fmt.Sprintf("Condition %s not yet reported", cond), it.Name)
		case c.Status == issueStatus:
			add(it.Kind, true, c.Message, it.Name)
		case c.Status == metav1.ConditionUnknown:
			add(it.Kind, false, c.Message, it.Name)
		}
	}
	if len(groups) == 0 {
		return out
	}
	out.Status, out.Reason = metav1.ConditionUnknown, r.Unknown
	if slices.ContainsFunc(groups, func(g *group) bool { return g.issue }) {
		out.Status, out.Reason = issueStatus, r.Issue
	}
	for _, g := range groups {
		slices.Sort(g.names)
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		switch {
		case a.kind != b.kind:
			return strings.Compare(a.kind, b.kind)
		case a.issue != b.issue && a.issue:
			return -1
		case a.issue != b.issue:
			return 1
		case len(a.names) != len(b.names):
			return len(b.names) - len(a.names)
		}
		return strings.Compare(strings.Join(a.names, ","), strings.Join(b.names, ","))
	})
	var lines []string
	shown := 0
	for start := 0; start < len(groups); {
		kind := groups[start].kind
		end := start
		for end < len(groups) && groups[end].kind == kind {
			end++
		}
		var otherIssues, otherUnknown int
		for _, g := range groups[start:end] {
			if shown >= shownGroups {
				if g.issue {
					otherIssues += len(g.names)
				} else {
					otherUnknown += len(g.names)
				}
				continue
			}
			shown++
			lines = append(lines, groupLine(g.kind, g.names, g.msg))
		}
		lines = append(lines, othersLine(otherIssues, kind, "with other issues")...)
		lines = append(lines, othersLine(otherUnknown, kind, "with status unknown")...)
		start = end
	}
	out.Message = strings.Join(lines, "\n")
	return out
}

// groupLine is one line of an aggregate: up to shownPerGroup names of the
// objects that report msg, and how many more do.
func groupLine(kind string, names []string, msg string) string {
	var who string
	switch n := len(names); {
	case n == 1:
		who = kind + " " + names[0]
	case n <= shownPerGroup:
		who = kind + "s " + strings.Join(names, ", ")
	default:
		who = fmt.Sprintf("%ss %s, ... (%d more)", kind, strings.Join(names[:shownPerGroup], ", "), n-shownPerGroup)
	}
	line := "* " + who + ":"
	if msg != "" {
		line += indentUnder(msg)
	}
	return line
}

// othersLine counts the objects of a kind whose messages did not fit, as
// Cluster API's aggregateMessages words them ("And 1 Machine with other
// issues", "And 2 Machines with status unknown").
func othersLine(n int, kind, what string) []string {
	switch {
	case n == 1:
		return []string{fmt.Sprintf("And 1 %s %s", kind, what)}
	case n > 1:
		return []string{fmt.Sprintf("And %d %ss %s", n, kind, what)}
	}
	return nil
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

// RemediatingReasons are the Remediating condition's reasons; a controller
// that also counts Machines no health checker marked (the MachineSet's
// failed ones) says them with the same reasons.
var RemediatingReasons = AggregateReasons{Fine: "NotRemediating", Issue: "Remediating", Unknown: "RemediatingUnknown"}

// Remediating is Cluster API's setRemediatingCondition over the machines
// of a Cluster or a MachineSet (those being deleted included): True
// (Remediating) while one a health checker found unhealthy
// (HealthCheckSucceeded False) waits for its owner's remediation
// (OwnerRemediated False), a "* Machine(s) <names>: <message>" line per
// OwnerRemediated message; else False (NotRemediating), naming the
// unhealthy ones as "not healthy (not to be remediated<by>)".
func Remediating(machines []*clusterv1.Machine, by string, gen int64) metav1.Condition {
	var toRemediate []*clusterv1.Machine
	var unhealthy []string
	for _, m := range machines {
		if !meta.IsStatusConditionFalse(m.Status.Conditions, clusterv1.HealthCheckSucceededCondition) {
			continue
		}
		unhealthy = append(unhealthy, m.Name)
		if meta.IsStatusConditionFalse(m.Status.Conditions, clusterv1.OwnerRemediatedCondition) {
			toRemediate = append(toRemediate, m)
		}
	}
	cond := metav1.Condition{Type: clusterv1.RemediatingCondition, Status: metav1.ConditionFalse, Reason: RemediatingReasons.Fine, ObservedGeneration: gen}
	if len(toRemediate) > 0 {
		a := AggregateMachines(toRemediate, clusterv1.OwnerRemediatedCondition, clusterv1.RemediatingCondition, RemediatingReasons, gen)
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, RemediatingReasons.Issue, a.Message
	} else if len(unhealthy) > 0 {
		slices.Sort(unhealthy)
		verb, noun := "is", "Machine"
		if len(unhealthy) > 1 {
			verb, noun = "are", "Machines"
		}
		cond.Message = fmt.Sprintf("%s %s %s not healthy (not to be remediated%s)", noun, shortList(unhealthy, 3), verb, by)
	}
	return cond
}

// shortList names the first n of names and how many more there are.
func shortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, ... (%d more)", strings.Join(names[:n], ", "), len(names)-n)
}
