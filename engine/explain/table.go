package explain

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/krtt-dev/krtt/engine"
)

// TableReport lists a table's rows with the scenarios that cover them.
type TableReport struct {
	Set       string `json:"set"`
	Table     string `json:"table"`
	Title     string `json:"title,omitempty"`
	File      string `json:"file"`
	HitPolicy string `json:"hitPolicy"`
	// Kind is TransitionTable or DecisionTable.
	Kind string `json:"kind"`
	// Subject is what one item of a decision table is (a Pod).
	Subject string `json:"subject,omitempty"`
	// CoverageKnown is false when no coverage file was read.
	CoverageKnown bool       `json:"coverageKnown"`
	Covered       int        `json:"covered"`
	Rows          []TableRow `json:"rows"`
	// UnknownRows are rows the coverage names that the table does not have.
	UnknownRows []string `json:"unknownRows,omitempty"`
}

// TableRow is one row: where it applies, when, what it does and where it
// leads, and the scenarios that exercise it.
type TableRow struct {
	ID     string   `json:"id"`
	Line   int      `json:"line"`
	From   []string `json:"from"`
	When   string   `json:"when"`
	Do     []string `json:"do"`
	Action string   `json:"action"`
	// Result is the state after the row's actions finish (then); empty
	// for a decision table's row, which gives a Verdict instead.
	Result  string `json:"result,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	// Covered lists the scenarios that exercise the row ("file:line name").
	Covered []string `json:"coveredBy"`
}

// Table describes one table of the set. coverage maps table → row →
// scenarios (features/coverage.json); nil means coverage is unknown.
func Table(set *engine.TableSet, table string, coverage map[string]map[string][]string) (*TableReport, error) {
	t := set.Table(table)
	if d := set.Decision(table); t == nil && d != nil {
		return decisionTable(set, d, coverage), nil
	}
	if t == nil {
		var names []string
		for _, x := range set.Tables {
			names = append(names, x.Name)
		}
		for _, x := range set.Decisions {
			names = append(names, x.Name)
		}
		return nil, fmt.Errorf("set %s has no table %q; tables: %s", set.Name, table, strings.Join(names, ", "))
	}
	rep := &TableReport{Set: set.Name, Table: t.Name, Title: t.Title, File: t.Pos.File, HitPolicy: string(t.HitPolicy),
		Kind: engine.KindTable, CoverageKnown: coverage != nil, Rows: []TableRow{}}
	cov := coverage[t.Name]
	for _, r := range t.Rows {
		row := TableRow{ID: r.ID, Line: r.Pos.Line, From: append([]string{}, r.From...), Do: append([]string{}, r.Do...),
			Action: r.Action, Covered: append([]string{}, cov[r.ID]...)}
		row.When = matchesText(matches(r.WhenClause()))
		switch {
		case r.Then.State != "":
			row.Result = r.Then.State
		default:
			row.Result = "(stays)"
		}
		if len(row.Covered) > 0 {
			rep.Covered++
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.unknownRows(cov, func(id string) bool { return t.Row(id) != nil })
	return rep, nil
}

// decisionTable lists a decision table's rows: when each gives which
// verdict, and the scenarios that cover it.
func decisionTable(set *engine.TableSet, d *engine.DecisionTable, coverage map[string]map[string][]string) *TableReport {
	rep := &TableReport{Set: set.Name, Table: d.Name, Title: d.Title, File: d.Pos.File, HitPolicy: string(d.HitPolicy),
		Kind: engine.KindDecision, Subject: d.Subject, CoverageKnown: coverage != nil, Rows: []TableRow{}}
	cov := coverage[d.Name]
	for _, r := range d.Rows {
		row := TableRow{ID: r.ID, Line: r.Pos.Line, From: []string{}, Do: []string{}, Action: r.Action, Verdict: r.Verdict,
			When: matchesText(matches(r.When)), Covered: append([]string{}, cov[r.ID]...)}
		if len(row.Covered) > 0 {
			rep.Covered++
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.unknownRows(cov, func(id string) bool { return d.Row(id) != nil })
	return rep
}

// unknownRows notes the rows the coverage names that the table lacks.
func (r *TableReport) unknownRows(cov map[string][]string, known func(string) bool) {
	for id := range cov {
		if !known(id) {
			r.UnknownRows = append(r.UnknownRows, id)
		}
	}
	sort.Strings(r.UnknownRows)
}

// JSON writes the report as indented JSON.
func (r *TableReport) JSON(w io.Writer) error { return writeJSON(w, r) }

// Text writes the table's rows and their coverage in plain words.
func (r *TableReport) Text(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	if r.Kind == engine.KindDecision {
		p("Decision table %s (set %s, one verdict per %s, hitPolicy %s, %s)\n", r.Table, r.Set, r.Subject, r.HitPolicy, r.File)
	} else {
		p("Table %s (set %s, hitPolicy %s, %s)\n", r.Table, r.Set, r.HitPolicy, r.File)
	}
	if r.Title != "" {
		p("  %s\n", r.Title)
	}
	if r.CoverageKnown {
		p("  %d of %d rows covered by scenarios\n", r.Covered, len(r.Rows))
	} else {
		p("  coverage unknown (no coverage file)\n")
	}
	for _, row := range r.Rows {
		p("\n%s (line %d)\n", row.ID, row.Line)
		if r.Kind == engine.KindDecision {
			p("  when:    %s\n", row.When)
			p("  verdict: %s — %s\n", row.Verdict, row.Action)
		} else {
			p("  from:   %s\n", strings.Join(row.From, ", "))
			p("  when:   %s\n", row.When)
			if len(row.Do) > 0 {
				p("  do:     %s — %s\n", strings.Join(row.Do, ", "), row.Action)
			} else {
				p("  do:     nothing — %s\n", row.Action)
			}
			p("  result: %s\n", row.Result)
		}
		switch {
		case !r.CoverageKnown:
			p("  covered: coverage unknown\n")
		case len(row.Covered) == 0:
			p("  covered: not covered\n")
		default:
			p("  covered by:\n")
			for _, c := range row.Covered {
				p("    %s\n", c)
			}
		}
	}
	if len(r.UnknownRows) > 0 {
		p("\nwarning: the coverage names rows the table does not have: %s\n", strings.Join(r.UnknownRows, ", "))
	}
}
