package explain

import (
	"fmt"
	"strings"
	"time"

	"github.com/krtt-dev/krtt/engine"
)

// This file holds the pure parts of explaining a decision that krtt decide
// and krtt explain share: the fired row's columns, its result for each way
// its actions can end (runtime defaults included), and why every other row
// of the state does not fire.

// Columns are a row's five human KRTT columns and the seed row it cites.
// The JSON tags are the shape krtt decide and krtt explain print.
type Columns struct {
	Cites     string `json:"cites,omitempty"`
	Observed  string `json:"observed"`
	Desired   string `json:"desired"`
	Trigger   string `json:"trigger"`
	Action    string `json:"action"`
	Resulting string `json:"resulting"`
}

// ColumnsOf returns the row's five human columns and its citation.
func ColumnsOf(r *engine.Row) Columns {
	return Columns{Cites: r.Cites, Observed: r.Observed, Desired: r.Desired, Trigger: r.Trigger, Action: r.Action, Resulting: r.Resulting}
}

// Lines returns one "label: value" line per column, labels padded to one
// width, the citation first when there is one and an empty Desired Spec as
// "-".
func (c Columns) Lines() []string {
	var out []string
	if c.Cites != "" {
		out = append(out, "cites:                 "+c.Cites)
	}
	return append(out,
		"Observed Status:       "+c.Observed,
		"Desired Spec:          "+orDash(c.Desired),
		"Trigger / Condition:   "+c.Trigger,
		"Reconciliation Action: "+c.Action,
		"Resulting Status:      "+c.Resulting,
	)
}

// MatchText writes a match as fact=value, or fact in [a, b] when it
// accepts several values.
func MatchText(m engine.Match) string {
	if len(m.Values) == 1 {
		return m.Fact + "=" + m.Values[0]
	}
	return m.Fact + " in [" + strings.Join(m.Values, ", ") + "]"
}

// Mismatch is one match of a row's when clause that the facts violate.
type Mismatch struct {
	Match engine.Match
	// Value is the fact's value, "" when unset.
	Value string
}

// Mismatches returns every match of the row's when clause (guards included)
// that the facts violate, in the order the author wrote them;
// the row's FirstMismatch returns only the first.
func Mismatches(r *engine.Row, f engine.Facts) []Mismatch {
	var out []Mismatch
	for _, m := range r.WhenClause() {
		got := f.Get(m.Fact)
		accepted := false
		for _, v := range m.Values {
			accepted = accepted || v == got
		}
		if !accepted {
			out = append(out, Mismatch{Match: m, Value: got})
		}
	}
	return out
}

// String says in words why the fact rules the row out.
func (m Mismatch) String() string {
	if g, ok := strings.CutPrefix(m.Match.Fact, engine.GuardFactPrefix); ok {
		return fmt.Sprintf("guard %s is %s, the row needs it true", g, orUnset(m.Value))
	}
	return fmt.Sprintf("%s=%s, the row wants %s", m.Match.Fact, orUnset(m.Value), MatchText(m.Match))
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// Verdict says why a row of the state did not fire.
type Verdict string

const (
	// VerdictMismatch: a fact rules the row out.
	VerdictMismatch Verdict = "mismatch"
	// VerdictMasked: the row matches, but an earlier row of its hitPolicy
	// first table wins.
	VerdictMasked Verdict = "masked"
	// VerdictNotConsulted: a table consulted earlier decided (and the row
	// would not have matched anyway).
	VerdictNotConsulted Verdict = "not-consulted"
	// VerdictShadowed: a table consulted earlier decided, and the row would
	// have matched.
	VerdictShadowed Verdict = "shadowed"
)

// RowVerdict says why one row of the state did not fire.
type RowVerdict struct {
	Table   *engine.Table
	Row     *engine.Row
	Verdict Verdict
	// Mismatches are all the facts that rule the row out, in the order of
	// its when clause.
	Mismatches []Mismatch
	// Decided is the earlier table that decided (not-consulted, shadowed).
	Decided *engine.Table
	// First is the row that comes first and wins (masked); nil when the
	// winner is not known (no row fired).
	First *engine.Row
}

// RowVerdicts says, for every row of the state other than the one that fired
// (d, nil when none did), why it does not fire with the facts, in the order
// of the set's tables and their rows.
func RowVerdicts(s *engine.TableSet, st *engine.State, f engine.Facts, d *engine.Decision) []RowVerdict {
	out := []RowVerdict{}
	decided := -1
	if d != nil {
		for i, t := range s.Tables {
			if t == d.Table {
				decided = i
			}
		}
	}
	for ti, t := range s.Tables {
		var winner *engine.Row // first matching row so far (hitPolicy first)
		for _, r := range t.Rows {
			if !r.AppliesIn(st) || (d != nil && r == d.Row) {
				continue
			}
			v := RowVerdict{Table: t, Row: r, Mismatches: Mismatches(r, f)}
			mismatch := len(v.Mismatches) > 0
			switch {
			case decided >= 0 && ti > decided:
				v.Decided = d.Table
				v.Verdict = VerdictShadowed
				if mismatch {
					v.Verdict = VerdictNotConsulted
				}
			case mismatch:
				v.Verdict = VerdictMismatch
			default:
				v.Verdict = VerdictMasked
				v.First = winner
				if v.First == nil && d != nil && d.Table == t {
					v.First = d.Row
				}
			}
			if !mismatch && winner == nil {
				winner = r
			}
			out = append(out, v)
		}
	}
	return out
}

// Reason says in words why the row does not fire, naming at most most of
// its mismatching facts (all of them when most <= 0).
func (v RowVerdict) Reason(most int) string {
	ms := v.Mismatches
	if most > 0 && len(ms) > most {
		ms = ms[:most]
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	why := strings.Join(parts, "; ")
	switch v.Verdict {
	case VerdictNotConsulted:
		return fmt.Sprintf("not consulted: table %s, earlier in the set, decided (it would not match anyway: %s)", v.Decided.Name, why)
	case VerdictShadowed:
		return fmt.Sprintf("shadowed: it would match, but table %s, earlier in the set, decided", v.Decided.Name)
	case VerdictMasked:
		if v.First != nil {
			return fmt.Sprintf("matches too, but row %s comes first (hitPolicy %s)", v.First.ID, v.Table.HitPolicy)
		}
		return "matches too"
	}
	return why
}

// StatusValue is one status field a result sets.
type StatusValue struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// ResultSummary is a row's result for one way its actions can end, as the
// runtime resolves it, defaults included.
type ResultSummary struct {
	// Branch is then, inProgress or onFailure.
	Branch string
	// Given is false when the row does not write the branch and the
	// runtime's default applies.
	Given bool
	// Arises is false for inProgress and onFailure of a row without
	// actions: nothing can wait or fail.
	Arises bool
	// From is the state the row fires in, To the state after the result.
	From, To     string
	RequeueAfter time.Duration
	// RequeueAt names the requeue hook (when the observation says).
	RequeueAt string
	Retry     bool
	// StatusUnchanged: only the conditions are written.
	StatusUnchanged bool
	// Conditions keep the {detail} placeholder of their messages.
	Conditions []engine.Condition
	Status     []StatusValue
}

// Results resolves the row's result for each way its actions can end:
// then (done), inProgress (an action waits) and onFailure (an action
// failed), with the runtime's own Resolve.
func Results(d *engine.Decision) []ResultSummary {
	r := d.Row
	var out []ResultSummary
	for _, o := range []struct {
		status engine.OutcomeStatus
		given  bool
	}{{engine.Done, true}, {engine.InProgress, r.InProgress != nil}, {engine.Failed, r.OnFailure != nil}} {
		res := d.Apply(engine.Outcome{Status: o.status, Message: "{detail}"})
		s := ResultSummary{
			Branch: res.Branch, Given: o.given, Arises: o.status == engine.Done || len(r.Do) > 0,
			From: d.From.Name, To: res.To.Name, RequeueAfter: res.RequeueAfter, RequeueAt: res.RequeueAt, Retry: res.Retry, StatusUnchanged: res.StatusUnchanged,
			Conditions: res.Conditions,
		}
		for _, k := range res.StatusOrder {
			s.Status = append(s.Status, StatusValue{Field: k, Value: res.Status[k]})
		}
		out = append(out, s)
	}
	return out
}

// Changed reports whether the result moves to another state.
func (s ResultSummary) Changed() bool { return s.To != s.From }

// Line says in one line what the result does: the branch, the state it
// leads to, the requeue and the retry, and whether it is the runtime's
// default.
func (s ResultSummary) Line() string {
	var label string
	switch s.Branch {
	case "then":
		label = "then (every action done):"
	case "inProgress":
		label = "inProgress (an action waits):"
	default:
		label = "onFailure (an action failed):"
	}
	label = fmt.Sprintf("%-30s", label)
	if !s.Arises {
		return label + " does not arise: the row runs no actions"
	}
	var parts []string
	if s.Changed() {
		parts = append(parts, s.From+" -> "+s.To)
	} else {
		parts = append(parts, "stays "+s.To)
	}
	if s.RequeueAt != "" {
		parts = append(parts, "requeue at "+s.RequeueAt)
	}
	if s.RequeueAfter > 0 {
		parts = append(parts, "requeue after "+engine.ShortDuration(s.RequeueAfter))
	}
	if s.Retry {
		parts = append(parts, "return an error (work queue back-off)")
	}
	out := label + " " + strings.Join(parts, "; ")
	if !s.Given {
		out += " (default: the row gives no " + s.Branch + ")"
	}
	return out
}

// Details returns one line per condition and status field the result
// writes.
func (s ResultSummary) Details() []string {
	var out []string
	for _, c := range s.Conditions {
		line := fmt.Sprintf("condition %s=%s reason %s", c.Type, c.Status, c.Reason)
		if c.Message != "" {
			line += fmt.Sprintf(" message %q", c.Message)
		}
		out = append(out, line)
	}
	for _, st := range s.Status {
		out = append(out, fmt.Sprintf("status %s=%q", st.Field, st.Value))
	}
	if s.StatusUnchanged {
		out = append(out, "nothing else in status changes")
	}
	return out
}

// orDash shows an empty column as "-", as the rendered tables do.
func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
