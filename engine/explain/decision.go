package explain

import (
	"fmt"
	"strings"

	"github.com/krtt-dev/krtt/engine"
)

// DecisionRowCheck says what one row of a decision table makes of an
// assignment that may leave facts unset: krtt decide asks only for the
// facts that matter, so a fact no row before the deciding one reads can be
// left out.
type DecisionRowCheck struct {
	Row *engine.DecisionRow
	// Verdict is mismatch (a given fact rules the row out), masked (it
	// matches but an earlier row wins under hitPolicy first), undecided
	// (no given fact rules it out, but it reads facts that were not given),
	// or empty for the row that decides.
	Verdict Verdict
	// Mismatches are the given facts that rule the row out.
	Mismatches []Mismatch
	// Unset are the facts the row reads that were not given (undecided).
	Unset []string
	// First is the row that decides, for a masked row.
	First *engine.DecisionRow
}

// VerdictUndecided: no given fact rules the row out, and it reads facts that
// were not given, so whether it matches is not known.
const VerdictUndecided Verdict = "undecided"

// Reason says in words why the row does not decide.
func (c DecisionRowCheck) Reason() string {
	switch c.Verdict {
	case VerdictMasked:
		if c.First == nil {
			return "matches, but an earlier row may match first"
		}
		return fmt.Sprintf("matches too, but row %s comes first (hitPolicy %s)", c.First.ID, c.Row.Table().HitPolicy)
	case VerdictUndecided:
		return "may match: give " + strings.Join(c.Unset, ", ")
	}
	parts := make([]string, len(c.Mismatches))
	for i, m := range c.Mismatches {
		parts[i] = m.String()
	}
	return strings.Join(parts, "; ")
}

// DecisionCheck is what a decision table makes of a partial assignment:
// the row that decides, if it is known, and what every other row makes of
// the facts.
type DecisionCheck struct {
	// Decides is the row that gives the verdict; nil when none is known.
	Decides *engine.DecisionRow
	// Error says why no row decides: none matches, two match under unique,
	// or an earlier row might match on facts that were not given.
	Error  string
	Others []DecisionRowCheck
}

// CheckDecision decides with an assignment that may leave facts unset. Under
// hitPolicy first a row decides when every fact it reads is given and
// matches and no earlier row may match; under unique, when it is the only
// row that may match and it does. Facts no row before the deciding one
// reads need not be given.
func CheckDecision(t *engine.DecisionTable, f engine.Facts) (*DecisionCheck, error) {
	if !t.Owns(f) {
		return nil, fmt.Errorf("decision table %s: facts were built for another table", t.Name)
	}
	out := &DecisionCheck{}
	var undecided []string
	var matching []*engine.DecisionRow
	checks := make([]DecisionRowCheck, len(t.Rows))
	for i, r := range t.Rows {
		c := DecisionRowCheck{Row: r}
		for _, m := range r.When {
			got := f.Get(m.Fact)
			if got == "" {
				c.Unset = append(c.Unset, m.Fact)
				continue
			}
			ok := false
			for _, v := range m.Values {
				ok = ok || v == got
			}
			if !ok {
				c.Mismatches = append(c.Mismatches, Mismatch{Match: m, Value: got})
			}
		}
		switch {
		case len(c.Mismatches) > 0:
			c.Verdict = VerdictMismatch
		case len(c.Unset) > 0:
			c.Verdict = VerdictUndecided
			undecided = append(undecided, r.ID)
		default:
			matching = append(matching, r)
		}
		checks[i] = c
	}
	switch {
	case t.HitPolicy == engine.HitFirst:
		// The first row that is not ruled out decides, if it is known to match.
		for i := range checks {
			if checks[i].Verdict == VerdictMismatch {
				continue
			}
			if checks[i].Verdict == "" {
				out.Decides = checks[i].Row
			} else {
				out.Error = fmt.Sprintf("row %s comes first and may match: give %s", checks[i].Row.ID, strings.Join(checks[i].Unset, ", "))
			}
			break
		}
	case len(matching) > 1:
		out.Error = fmt.Sprintf("rows %s and %s both match", matching[0].ID, matching[1].ID)
	case len(undecided) > 0:
		out.Error = fmt.Sprintf("rows %s may match: give the facts they read", strings.Join(undecided, ", "))
	case len(matching) == 1:
		out.Decides = matching[0]
	}
	if out.Decides == nil && out.Error == "" {
		out.Error = fmt.Sprintf("no row of decision table %s matches", t.Name)
	}
	for _, c := range checks {
		if c.Row == out.Decides {
			continue
		}
		if c.Verdict == "" {
			c.Verdict = VerdictMasked
			c.First = out.Decides
		}
		out.Others = append(out.Others, c)
	}
	return out, nil
}
