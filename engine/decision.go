package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// KindDecision is the kind of a stateless decision table.
const KindDecision = "DecisionTable"

// DecisionTable is the second kind of KRTT table: stateless. Where a
// transition table decides what happens next to one object in its state, a
// decision table gives one verdict for one item (a Pod on a Node being
// drained) from the facts of that item alone. It has its own vocabulary
// (facts, impossible combinations, the verdicts it may give) and registry,
// is checked for completeness and masked rows like a transition table, and
// every verdict it gives is published as a trace naming the row, so a
// controller can say why it treated an item as it did.
type DecisionTable struct {
	Name        string
	Title       string
	Description string
	Source      string
	// Subject names what one item is (a Pod), for pages and messages.
	Subject string
	// Registry names the Go registry whose observers compute the facts.
	Registry string
	// SetName is the TableSet whose controller consults the table; its
	// traces carry that set's name, and the set lists it in Decisions.
	SetName    string
	HitPolicy  HitPolicy
	Facts      []*Fact
	Impossible []*Impossible
	// Verdicts are the outcomes a row may give: the table's finite output.
	Verdicts []Value
	Rows     []*DecisionRow
	Pos      Pos

	setPos Pos
	// vocab holds the facts and impossible combinations as a Set without
	// states, so assignments, cubes and the checks work as for transition
	// tables.
	vocab *TableSet
}

// DecisionRow is one rule of a decision table.
type DecisionRow struct {
	ID    string
	Cites string
	// The human columns: the item observed, the condition, what is done.
	Observed string
	Trigger  string
	Action   string

	When    []Match
	Verdict string
	Pos     Pos

	table *DecisionTable
	cube  cube
}

// Table returns the decision table the row belongs to.
func (r *DecisionRow) Table() *DecisionTable { return r.table }

// Matches reports whether the row's when clause holds for the assignment.
func (r *DecisionRow) Matches(f Facts) bool { return r.cube.matches(f.v) }

// Row returns the row with the given id, or nil.
func (t *DecisionTable) Row(id string) *DecisionRow {
	for _, r := range t.Rows {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Fact returns the named fact, or nil.
func (t *DecisionTable) Fact(name string) *Fact { return t.vocab.Fact(name) }

// NewFacts returns an assignment of the table's facts with every fact unset.
func (t *DecisionTable) NewFacts() Facts { return t.vocab.NewFacts() }

// Verdict returns the named verdict, or nil.
func (t *DecisionTable) Verdict(name string) *Value {
	for i := range t.Verdicts {
		if t.Verdicts[i].Name == name {
			return &t.Verdicts[i]
		}
	}
	return nil
}

// Owns reports whether the facts were built by the table's NewFacts: facts
// of another vocabulary would be read by the wrong indexes.
func (t *DecisionTable) Owns(f Facts) bool { return f.set == t.vocab }

// Decide returns the row that gives the verdict for one assignment: the
// first matching row under hitPolicy first, the only one under unique (an
// error when two match, which lint rules out for checked tables).
func (t *DecisionTable) Decide(f Facts) (*DecisionRow, error) {
	if f.set != t.vocab {
		return nil, fmt.Errorf("decision table %s: facts were built for another table", t.Name)
	}
	if missing := f.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("decision table %s: facts without a value: %s", t.Name, strings.Join(missing, ", "))
	}
	var hit *DecisionRow
	for _, r := range t.Rows {
		if !r.cube.matches(f.v) {
			continue
		}
		if t.HitPolicy == HitFirst {
			return r, nil
		}
		if hit != nil {
			return nil, fmt.Errorf("decision table %s: rows %s and %s both match %s", t.Name, hit.ID, r.ID, f)
		}
		hit = r
	}
	if hit == nil {
		return nil, fmt.Errorf("%w in decision table %s for %s", ErrNoDecision, t.Name, f)
	}
	return hit, nil
}

// traceSet is the set name a decision's trace carries.
func (t *DecisionTable) traceSet() string {
	if t.SetName != "" {
		return t.SetName
	}
	return t.Name
}

// decisionSpec reads the spec of a DecisionTable document.
func (r *reader) decisionSpec(name string, n *yaml.Node, pos Pos) *DecisionTable {
	t := &DecisionTable{Name: name, HitPolicy: HitUnique, Pos: pos}
	r.fields(n, "the DecisionTable spec", map[string]func(*yaml.Node){
		"title":       func(v *yaml.Node) { t.Title = r.str(v, "spec.title") },
		"description": func(v *yaml.Node) { t.Description = r.str(v, "spec.description") },
		"source":      func(v *yaml.Node) { t.Source = r.str(v, "spec.source") },
		"subject":     func(v *yaml.Node) { t.Subject = r.str(v, "spec.subject") },
		"registry":    func(v *yaml.Node) { t.Registry = r.str(v, "spec.registry") },
		"set":         func(v *yaml.Node) { t.SetName = r.str(v, "spec.set"); t.setPos = r.pos(v) },
		"hitPolicy": func(v *yaml.Node) {
			hp := HitPolicy(r.str(v, "spec.hitPolicy"))
			if hp != HitUnique && hp != HitFirst {
				r.errorf(v, "use unique or first", "unknown hitPolicy %q", hp)
			}
			t.HitPolicy = hp
		},
		"facts": func(v *yaml.Node) {
			r.list(v, "spec.facts", func(c *yaml.Node) { t.Facts = append(t.Facts, r.fact(c)) })
		},
		"impossible": func(v *yaml.Node) {
			r.list(v, "spec.impossible", func(c *yaml.Node) { t.Impossible = append(t.Impossible, r.impossible(c)) })
		},
		"verdicts": func(v *yaml.Node) {
			r.list(v, "spec.verdicts", func(c *yaml.Node) {
				val := Value{Pos: r.pos(c)}
				r.fields(c, "a verdict", map[string]func(*yaml.Node){
					"name":        func(v *yaml.Node) { val.Name = r.str(v, "verdict name") },
					"description": func(v *yaml.Node) { val.Description = r.str(v, "verdict description") },
				})
				if val.Name == "" || val.Description == "" {
					r.errorf(c, "give every verdict a name and a one-line description", "verdict without a name or description")
				}
				t.Verdicts = append(t.Verdicts, val)
			})
		},
		"rows": func(v *yaml.Node) {
			r.list(v, "spec.rows", func(c *yaml.Node) { t.Rows = append(t.Rows, r.decisionRow(c)) })
		},
	})
	r.row = ""
	if len(t.Rows) == 0 {
		r.errorf(n, "add at least one row under spec.rows", "decision table %s has no rows", name)
	}
	if len(t.Verdicts) == 0 {
		r.errorf(n, "list the verdicts the rows may give under spec.verdicts", "decision table %s declares no verdicts", name)
	}
	return t
}

func (r *reader) decisionRow(n *yaml.Node) *DecisionRow {
	row := &DecisionRow{Pos: r.pos(n), ID: rowID(n)}
	r.row = row.ID
	r.fields(n, "a decision row", map[string]func(*yaml.Node){
		"id":       func(v *yaml.Node) { row.ID = r.str(v, "row id") },
		"cites":    func(v *yaml.Node) { row.Cites = r.str(v, "cites") },
		"observed": func(v *yaml.Node) { row.Observed = r.str(v, "observed") },
		"trigger":  func(v *yaml.Node) { row.Trigger = r.str(v, "trigger") },
		"action":   func(v *yaml.Node) { row.Action = r.str(v, "action") },
		"when":     func(v *yaml.Node) { row.When = r.matches(v, "when") },
		"verdict":  func(v *yaml.Node) { row.Verdict = r.str(v, "verdict") },
	})
	if row.ID == "" {
		r.errorf(n, "give every row a unique id such as P01", "row without an id")
	}
	for _, col := range []struct{ name, val string }{{"observed", row.Observed}, {"trigger", row.Trigger}, {"action", row.Action}, {"verdict", row.Verdict}} {
		if col.val == "" {
			r.errorf(n, "fill in the column", "row has no %q", col.name)
		}
	}
	return row
}

// resolveDecision builds the table's vocabulary and row cubes and checks
// every name the rows use.
func resolveDecision(t *DecisionTable, findings *Findings) {
	add := func(pos Pos, row, hint, format string, args ...any) {
		*findings = append(*findings, Finding{Pos: pos, Severity: SevError, Check: "reference", Table: t.Name, Row: row,
			Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	s := &TableSet{Name: t.Name, Registry: t.Registry, Facts: t.Facts, Impossible: t.Impossible, Pos: t.Pos,
		factIndex: map[string]int{}, stateIndex: map[string]int{}}
	t.vocab = s
	if len(t.Facts) == 0 {
		add(t.Pos, "", "declare the facts the rows match under spec.facts", "decision table %s declares no facts", t.Name)
	}
	for i, f := range s.Facts {
		if _, dup := s.factIndex[f.Name]; dup {
			add(f.Pos, "", "rename one of them", "fact %q declared twice", f.Name)
		}
		f.index = i
		s.factIndex[f.Name] = i
	}
	for _, im := range s.Impossible {
		im.cube = s.cubeOf(im.When, t.Name, "", findings)
	}
	verdicts := map[string]bool{}
	var names []string
	for _, v := range t.Verdicts {
		if verdicts[v.Name] {
			add(v.Pos, "", "rename one of them", "verdict %q declared twice", v.Name)
		}
		verdicts[v.Name] = true
		names = append(names, v.Name)
	}
	ids := map[string]*DecisionRow{}
	for _, r := range t.Rows {
		r.table = t
		if prev, dup := ids[r.ID]; dup && r.ID != "" {
			add(r.Pos, r.ID, "give each row a unique id", "duplicate row id %q (first used at line %d)", r.ID, prev.Pos.Line)
		}
		ids[r.ID] = r
		r.cube = s.cubeOf(r.When, t.Name, r.ID, findings)
		if r.Verdict != "" && !verdicts[r.Verdict] {
			add(r.Pos, r.ID, withDidYouMean(r.Verdict, names, "declared verdicts: "+strings.Join(names, ", ")), "unknown verdict %q", r.Verdict)
		}
	}
}

// checkDecision runs the static checks on one decision table: rows whose
// every combination is impossible, overlapping rows (unique), rows masked by
// earlier ones (first), and gaps (completeness).
func checkDecision(t *DecisionTable, out *Findings) {
	s := t.vocab
	c := newSetChecker(s, out)
	add := func(pos Pos, row, check string, sev Severity, hint, format string, args ...any) {
		c.add(Finding{Pos: pos, Severity: sev, Check: check, Table: t.Name, Row: row, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	never := map[*DecisionRow]bool{}
	for _, r := range t.Rows {
		if len(c.imp) > 0 && gap(s, r.cube, c.imp) == nil {
			never[r] = true
			add(r.Pos, r.ID, "masking", SevError, "fix the row's when clause or the impossible declaration, or delete the row",
				"row %s can never fire: every combination its when matches is declared impossible", r.ID)
		}
	}
	for i, r := range t.Rows {
		if never[r] {
			continue
		}
		if t.HitPolicy == HitFirst {
			cover := append([]cube(nil), c.imp...)
			var blockers []string
			for _, e := range t.Rows[:i] {
				cover = append(cover, e.cube)
				if x, ok := e.cube.intersect(r.cube); ok && gap(s, x, c.imp) != nil {
					blockers = append(blockers, fmt.Sprintf("%s (line %d)", e.ID, e.Pos.Line))
				}
			}
			if i > 0 && gap(s, r.cube, cover) == nil {
				add(r.Pos, r.ID, "masking", SevError, "move the row above them, narrow their when clauses, or delete it",
					"row %s can never fire: %s match first", r.ID, strings.Join(blockers, ", "))
			}
			continue
		}
		for _, e := range t.Rows[:i] {
			if never[e] {
				continue
			}
			x, ok := e.cube.intersect(r.cube)
			if !ok {
				continue
			}
			if ex := gap(s, x, c.imp); ex != nil {
				add(r.Pos, r.ID, "determinism", SevError, "make their when clauses exclude each other, declare the combination impossible, or use hitPolicy: first",
					"rows %s (line %d) and %s (line %d) both match, e.g. when %s", e.ID, e.Pos.Line, r.ID, r.Pos.Line, s.describe(ex, c.mentioned(e.cube, r.cube)))
			}
		}
	}
	cover := append([]cube(nil), c.imp...)
	rel := make([]bool, len(s.Facts))
	for _, r := range t.Rows {
		cover = append(cover, r.cube)
		c.mark(rel, r.cube)
	}
	if ex := gap(s, s.fullCube(), cover); ex != nil {
		add(t.Pos, "", "completeness", SevError, "add a row for it (a last row without when is the default) or declare the combination impossible",
			"no row gives a verdict when %s", s.describe(ex, rel))
	}
}

// checkDecisionRegistry compares the facts a decision table reads with what
// its registry observes.
func checkDecisionRegistry(t *DecisionTable, catalogs map[string]*Catalog, out *Findings) {
	cat, ok := catalogs[t.Registry]
	if t.Registry == "" || !ok || cat == nil {
		*out = append(*out, Finding{Pos: t.Pos, Severity: SevWarning, Check: "registry", Table: t.Name,
			Message: fmt.Sprintf("no registry %q is known; the facts of decision table %s are not checked", t.Registry, t.Name),
			Hint:    "set spec.registry to one of: " + strings.Join(sortedKeys(catalogs), ", ")})
		return
	}
	for _, f := range t.Facts {
		if _, ok := cat.Lookup(EntryFact, f.Name); !ok {
			*out = append(*out, Finding{Pos: f.Pos, Severity: SevError, Check: "registry", Table: t.Name,
				Message: fmt.Sprintf("fact %s has no observer in registry %s", f.Name, cat.Name),
				Hint:    "register its observer in Go with Registry.Bool or Registry.Enum, or remove the fact"})
		}
	}
}

// decisionLogKey finds the log of the decisions made during one firing.
type decisionLogKey struct{}

// decisionLog collects the traces of the decisions an action makes, so
// they are published with the row's own trace once its result landed.
type decisionLog struct {
	mu     sync.Mutex
	traces []Trace
}

// withDecisionLog returns a context whose decisions are collected.
func withDecisionLog(ctx context.Context) (context.Context, *decisionLog) {
	l := &decisionLog{}
	return context.WithValue(ctx, decisionLogKey{}, l), l
}

func (l *decisionLog) take() []Trace {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.traces
	l.traces = nil
	return out
}

// Decider binds a decision table to a registry: it observes one item's
// facts and gives its verdict. It is safe for concurrent use.
type Decider[E any] struct {
	table     *DecisionTable
	observers []observer[E]
	now       func() time.Time
}

// NewDecider binds every fact of the table to the registry and refuses a
// registry without an observer the table needs.
func NewDecider[E any](t *DecisionTable, reg *Registry[E]) (*Decider[E], error) {
	d := &Decider[E]{table: t, now: time.Now}
	var missing []string
	for _, f := range t.Facts {
		o, ok := reg.observers[f.Name]
		if !ok {
			missing = append(missing, f.Name)
			continue
		}
		d.observers = append(d.observers, o)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("registry %s cannot decide table %s: no observer for fact %s", reg.name, t.Name, strings.Join(missing, ", "))
	}
	return d, nil
}

// Table returns the decision table.
func (d *Decider[E]) Table() *DecisionTable { return d.table }

// Decision is one verdict with the row that gave it and the facts it read.
type ItemDecision struct {
	Row   *DecisionRow
	Facts Facts
}

// Verdict is the verdict's name.
func (i ItemDecision) Verdict() string { return i.Row.Verdict }

// Decide observes the item and returns the row that gives its verdict,
// without recording it (for a look ahead: what would this item get).
func (d *Decider[E]) Decide(env E) (ItemDecision, error) {
	f := d.table.NewFacts()
	for i, o := range d.observers {
		v := o.value(env)
		vi := d.table.Facts[i].ValueIndex(v)
		if vi < 0 {
			return ItemDecision{}, fmt.Errorf("observer %s returned %q, not one of %s", o.entry.Name, v, strings.Join(d.table.Facts[i].valueNames(), ", "))
		}
		f.v[i] = uint8(vi)
	}
	row, err := d.table.Decide(f)
	if err != nil {
		return ItemDecision{}, err
	}
	return ItemDecision{Row: row, Facts: f}, nil
}

// Record notes a verdict acted on: its trace (table, row, verdict, the
// object the controller reconciles, and a note naming the item) is
// published with the trace of the transition-table row whose action made
// the decision, once that row's result landed.
func (d *Decider[E]) Record(ctx context.Context, object string, dec ItemDecision, note string) {
	l, _ := ctx.Value(decisionLogKey{}).(*decisionLog)
	if l == nil {
		return
	}
	tr := Trace{Set: d.table.traceSet(), Table: d.table.Name, Row: dec.Row.ID, Object: object,
		Action: dec.Row.Verdict, Outcome: Done, Message: note, Time: d.now()}
	l.mu.Lock()
	l.traces = append(l.traces, tr)
	l.mu.Unlock()
}

// SetClock replaces the clock used for trace times (tests).
func (d *Decider[E]) SetClock(now func() time.Time) { d.now = now }
