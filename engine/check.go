package engine

import (
	"cmp"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Check runs the static checks on every set of a loaded library: rows of a
// hitPolicy unique table never overlap (determinism), no row is hidden by
// earlier rows or tables (masking), every non-terminal state has a row for
// every possible assignment (completeness), every state is reachable and can
// reach a terminal state (reachability), the registry implements what the
// tables use (registry) and results make sense (result).
//
// catalogs maps registry names to what the Go side registered. With a nil
// map the registry checks are skipped; with a non-nil map a set whose
// registry is missing from it gets a warning.
//
// The checks reason over cubes (per-fact value sets) and never enumerate
// every assignment, so they stay fast for tables with dozens of facts.
// Findings come back sorted by file, line and column.
func Check(lib *Library, catalogs map[string]*Catalog) Findings {
	var out Findings
	if lib == nil {
		return out
	}
	for _, s := range lib.Sets {
		c := newSetChecker(s, &out)
		c.impossibleRows()
		c.determinism()
		c.masking()
		c.completeness()
		c.reachability()
		c.results()
	}
	for _, d := range lib.Decisions {
		checkDecision(d, &out)
		if catalogs != nil {
			checkDecisionRegistry(d, catalogs, &out)
		}
	}
	if catalogs != nil {
		checkRegistries(lib, catalogs, &out)
	}
	out.Sort()
	return out
}

// setChecker holds what the checks of one set share.
type setChecker struct {
	s   *TableSet
	out *Findings
	imp []cube
	// never marks rows already reported as never firing, so the masking
	// checks do not report them again.
	never map[*Row]bool
}

func newSetChecker(s *TableSet, out *Findings) *setChecker {
	c := &setChecker{s: s, out: out, never: map[*Row]bool{}}
	for _, im := range s.Impossible {
		if im.cube != nil {
			c.imp = append(c.imp, im.cube)
		}
	}
	return c
}

func (c *setChecker) add(f Finding) { *c.out = append(*c.out, f) }

// setTable is the Table field for findings about the set as a whole: the
// table's name when the set is a standalone table, empty otherwise.
func setTable(s *TableSet) string {
	if len(s.Tables) == 1 && s.Tables[0].Name == s.Name && s.Tables[0].Pos == s.Pos {
		return s.Name
	}
	return ""
}

// setLabel names the set in messages.
func setLabel(s *TableSet) string {
	if setTable(s) != "" {
		return "table " + s.Name
	}
	return "set " + s.Name
}

// rowRef names a row with its line, e.g. "C1 (line 40)".
func rowRef(r *Row) string { return fmt.Sprintf("%s (line %d)", r.ID, r.Pos.Line) }

// qualifiedRowRef adds the table when the row belongs to another table.
func qualifiedRowRef(r *Row, than *Table) string {
	if r.table != than {
		return fmt.Sprintf("%s/%s (line %d)", r.table.Name, r.ID, r.Pos.Line)
	}
	return rowRef(r)
}

// rowStates returns the row's states without repeats, in set order.
func (c *setChecker) rowStates(r *Row) []int {
	seen := make([]bool, len(c.s.States))
	for _, i := range r.fromIdx {
		seen[i] = true
	}
	var out []int
	for i, ok := range seen {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

func (c *setChecker) stateList(idx []int) string {
	names := make([]string, len(idx))
	for i, x := range idx {
		names[i] = c.s.States[x].Name
	}
	if len(names) == 1 {
		return "state " + names[0]
	}
	return "states " + strings.Join(names, ", ")
}

// mentioned marks the facts any of the cubes constrains.
func (c *setChecker) mentioned(cubes ...cube) []bool {
	rel := make([]bool, len(c.s.Facts))
	for _, cb := range cubes {
		c.mark(rel, cb)
	}
	return rel
}

func (c *setChecker) mark(rel []bool, cb cube) {
	for i, m := range cb {
		if m != fullMask(c.s.Facts[i]) {
			rel[i] = true
		}
	}
}

// impossibleRows reports rows whose every combination is declared
// impossible: they can never fire whatever the table's hit policy.
func (c *setChecker) impossibleRows() {
	if len(c.imp) == 0 {
		return
	}
	for _, t := range c.s.Tables {
		for _, r := range t.Rows {
			if gap(c.s, r.cube, c.imp) != nil {
				continue
			}
			var names []string
			for _, im := range c.s.Impossible {
				if _, ok := im.cube.intersect(r.cube); ok {
					names = append(names, im.Name)
				}
			}
			c.never[r] = true
			c.add(Finding{Pos: r.Pos, Severity: SevError, Check: "masking", Table: t.Name, Row: r.ID,
				Message: fmt.Sprintf("row %s can never fire: every combination its when matches is declared impossible (%s)", r.ID, strings.Join(names, ", ")),
				Hint:    "fix the row's when clause or the impossible declaration, or delete the row"})
		}
	}
}

// determinism proves that no two rows of a hitPolicy unique table match the
// same possible assignment in a state they share.
func (c *setChecker) determinism() {
	s := c.s
	for _, t := range s.Tables {
		if t.HitPolicy == HitFirst {
			continue
		}
		for i, a := range t.Rows {
			if c.never[a] {
				continue
			}
			for _, b := range t.Rows[i+1:] {
				if c.never[b] {
					continue
				}
				shared := sharedStates(a, b)
				if len(shared) == 0 {
					continue
				}
				x, ok := a.cube.intersect(b.cube)
				if !ok {
					continue
				}
				ex := gap(s, x, c.imp)
				if ex == nil {
					continue
				}
				c.add(Finding{Pos: b.Pos, Severity: SevError, Check: "determinism", Table: t.Name, Row: b.ID,
					Message: fmt.Sprintf("rows %s and %s both match in %s, e.g. when %s",
						rowRef(a), rowRef(b), c.stateList(shared), s.describe(ex, c.mentioned(a.cube, b.cube))),
					Hint: "make their when clauses exclude each other, declare the combination impossible, or use hitPolicy: first"})
			}
		}
	}
}

// sharedStates lists the states both rows apply in, in set order.
func sharedStates(a, b *Row) []int {
	var out []int
	for _, i := range a.fromIdx {
		dup := false
		for _, o := range out {
			dup = dup || o == i
		}
		if dup {
			continue
		}
		for _, j := range b.fromIdx {
			if i == j {
				out = append(out, i)
				break
			}
		}
	}
	sort.Ints(out)
	return out
}

// masking reports rows that can never fire because, in every state they
// apply to, earlier rows of a hitPolicy first table (an error) or rows of
// tables consulted earlier in the set (a warning) match first.
func (c *setChecker) masking() {
	s := c.s
	for ti, t := range s.Tables {
		for ri, r := range t.Rows {
			if c.never[r] {
				continue
			}
			states := c.rowStates(r)
			if len(states) == 0 {
				continue
			}
			// Within the table (hitPolicy first only).
			if t.HitPolicy == HitFirst && ri > 0 {
				masked := true
				var blockers []*Row
				for _, st := range states {
					cover := append([]cube(nil), c.imp...)
					for _, e := range t.Rows[:ri] {
						if e.AppliesIn(s.States[st]) {
							cover = append(cover, e.cube)
							if c.overlaps(e, r) {
								blockers = appendRow(blockers, e)
							}
						}
					}
					if gap(s, r.cube, cover) != nil {
						masked = false
						break
					}
				}
				if masked {
					c.never[r] = true
					c.add(Finding{Pos: r.Pos, Severity: SevError, Check: "masking", Table: t.Name, Row: r.ID,
						Message: fmt.Sprintf("row %s can never fire: %s match first in %s", r.ID, rowList(blockers, t), c.stateList(states)),
						Hint:    "move the row above them, narrow their when clauses, or delete it"})
					continue
				}
			}
			if ti == 0 {
				continue
			}
			// Across the set: tables consulted before this one.
			masked := true
			var blockers []*Row
			for _, st := range states {
				cover := append([]cube(nil), c.imp...)
				for _, et := range s.Tables[:ti] {
					for _, e := range et.Rows {
						if e.AppliesIn(s.States[st]) {
							cover = append(cover, e.cube)
							if c.overlaps(e, r) {
								blockers = appendRow(blockers, e)
							}
						}
					}
				}
				if t.HitPolicy == HitFirst {
					for _, e := range t.Rows[:ri] {
						if e.AppliesIn(s.States[st]) {
							cover = append(cover, e.cube)
						}
					}
				}
				if gap(s, r.cube, cover) != nil {
					masked = false
					break
				}
			}
			if masked {
				c.never[r] = true
				c.add(Finding{Pos: r.Pos, Severity: SevWarning, Check: "masking", Table: t.Name, Row: r.ID,
					Message: fmt.Sprintf("row %s can never fire: in %s, tables consulted earlier in %s match first: %s",
						r.ID, c.stateList(states), setLabel(s), strings.TrimPrefix(strings.TrimPrefix(rowList(blockers, t), "rows "), "row ")),
					Hint: "delete the row, narrow those rows, or list table " + t.Name + " earlier in the set's spec.tables"})
			}
		}
	}
}

// overlaps reports whether two rows share a possible assignment.
func (c *setChecker) overlaps(a, b *Row) bool {
	x, ok := a.cube.intersect(b.cube)
	return ok && gap(c.s, x, c.imp) != nil
}

func appendRow(rows []*Row, r *Row) []*Row {
	for _, x := range rows {
		if x == r {
			return rows
		}
	}
	return append(rows, r)
}

func rowList(rows []*Row, than *Table) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = qualifiedRowRef(r, than)
	}
	if len(parts) == 1 {
		return "row " + parts[0]
	}
	return "rows " + strings.Join(parts, ", ")
}

// completeness proves that in every non-terminal state some row of the set
// matches every possible assignment.
func (c *setChecker) completeness() {
	s := c.s
	full := s.fullCube()
	for _, st := range s.States {
		if st.Terminal || st.Abstract {
			continue
		}
		var first *Table
		cover := append([]cube(nil), c.imp...)
		rel := make([]bool, len(s.Facts))
		for _, t := range s.Tables {
			for _, r := range t.Rows {
				if r.AppliesIn(st) {
					if first == nil {
						first = t
					}
					cover = append(cover, r.cube)
					c.mark(rel, r.cube)
				}
			}
		}
		if first == nil {
			c.add(Finding{Pos: st.Pos, Severity: SevError, Check: "completeness", Table: setTable(s),
				Message: fmt.Sprintf("no row applies in non-terminal state %s", st.Name),
				Hint:    fmt.Sprintf("add rows with from: [%s] (or \"*\"), or mark the state terminal: true", st.Name)})
			continue
		}
		ex := gap(s, full, cover)
		if ex == nil {
			continue
		}
		c.add(Finding{Pos: first.Pos, Severity: SevError, Check: "completeness", Table: first.Name,
			Message: fmt.Sprintf("in state %s (line %d) no row matches when %s", st.Name, st.Pos.Line, s.describe(ex, rel)),
			Hint:    "add a row for it or declare the combination impossible"})
	}
}

// reachability checks the state graph: every state is reachable from the
// initial state and can reach a terminal state.
func (c *setChecker) reachability() {
	s := c.s
	n := len(s.States)
	if n == 0 {
		return
	}
	succ := make([][]int, n)
	pred := make([][]int, n)
	edge := make(map[[2]int]bool)
	for _, t := range s.Tables {
		for _, r := range t.Rows {
			for _, from := range r.fromIdx {
				for _, res := range r.Results() {
					to := from
					if res.State != "" {
						i, ok := s.stateIndex[res.State]
						if !ok {
							continue
						}
						to = i
					}
					if to == from || edge[[2]int{from, to}] {
						continue
					}
					edge[[2]int{from, to}] = true
					succ[from] = append(succ[from], to)
					pred[to] = append(pred[to], from)
				}
			}
		}
	}
	if init, ok := s.stateIndex[s.InitialState]; ok {
		roots := []int{init}
		// The controller enters the unknown state by itself, for objects
		// whose persisted state the tables do not know.
		if u, ok := s.stateIndex[s.UnknownState]; ok {
			roots = append(roots, u)
		}
		seen := walk(n, roots, succ)
		for i, st := range s.States {
			if !seen[i] && !st.Abstract {
				c.add(Finding{Pos: st.Pos, Severity: SevError, Check: "reachability", Table: setTable(s),
					Message: fmt.Sprintf("state %s is not reachable from initialState %s", st.Name, s.InitialState),
					Hint:    "add a row whose result (then, inProgress or onFailure) enters it, or remove the state"})
			}
		}
	}
	var terminals []int
	var names []string
	for i, st := range s.States {
		if st.Terminal {
			terminals = append(terminals, i)
			names = append(names, st.Name)
		}
	}
	if len(terminals) == 0 {
		c.add(Finding{Pos: s.Pos, Severity: SevError, Check: "reachability", Table: setTable(s),
			Message: fmt.Sprintf("%s has no terminal state", setLabel(s)),
			Hint:    "mark the state in which the object is finished (e.g. deleted) with terminal: true"})
		return
	}
	done := walk(n, terminals, pred)
	for i, st := range s.States {
		if !done[i] && !st.Abstract {
			c.add(Finding{Pos: st.Pos, Severity: SevError, Check: "reachability", Table: setTable(s),
				Message: fmt.Sprintf("dead end: from state %s no row leads on to a terminal state (%s)", st.Name, strings.Join(names, ", ")),
				Hint:    "add a row that leads from it towards a terminal state, or make it terminal"})
		}
	}
}

// walk returns the nodes reachable from the roots along next.
func walk(n int, roots []int, next [][]int) []bool {
	seen := make([]bool, n)
	stack := append([]int(nil), roots...)
	for _, r := range roots {
		seen[r] = true
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range next[x] {
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return seen
}

// results checks each row's results for branches used against their
// purpose: retry in then of a row that runs actions (then is the branch for
// their success; failures go to onFailure). A row without actions always
// takes then, so retry there is how it asks for back-off. A warning result
// must give the person it calls words to read: a condition (its reason and
// message make the Event), actions whose message the Event carries, or
// status values it writes (a failure reason and message).
func (c *setChecker) results() {
	for _, t := range c.s.Tables {
		for _, r := range t.Rows {
			for _, res := range []struct {
				name string
				r    *Result
			}{{"then", &r.Then}, {"inProgress", r.InProgress}, {"onFailure", r.OnFailure}} {
				if res.r != nil && res.r.EventReason != "" && !res.r.Warning {
					c.add(Finding{Pos: res.r.Pos, Severity: SevError, Check: "result", Table: t.Name, Row: r.ID,
						Message: fmt.Sprintf("row %s gives %s an eventReason (%s) without warning: true; only a Warning Event takes it", r.ID, res.name, res.r.EventReason),
						Hint:    "add warning: true, or drop eventReason"})
				}
				if res.r != nil && res.r.Quiet && res.r.Warning {
					c.add(Finding{Pos: res.r.Pos, Severity: SevError, Check: "result", Table: t.Name, Row: r.ID,
						Message: fmt.Sprintf("row %s marks %s both warning: true and quiet: true; what needs a person is always told", r.ID, res.name),
						Hint:    "drop one of the two"})
				}
				if res.r == nil || !res.r.Warning {
					continue
				}
				if len(res.r.Conditions) == 0 && len(r.Do) == 0 && len(res.r.Status) == 0 {
					c.add(Finding{Pos: res.r.Pos, Severity: SevError, Check: "result", Table: t.Name, Row: r.ID,
						Message: fmt.Sprintf("row %s marks %s warning: true but gives no condition, status value or action, so its Warning Event says nothing", r.ID, res.name),
						Hint:    "add a condition whose reason and message tell the person what happened and what to do"})
				}
				if res.r.StatusUnchanged {
					c.add(Finding{Pos: res.r.Pos, Severity: SevError, Check: "result", Table: t.Name, Row: r.ID,
						Message: fmt.Sprintf("row %s marks %s both warning: true and statusUnchanged: true; a result that records nothing is told by no Event", r.ID, res.name),
						Hint:    "drop one of the two"})
				}
			}
			if r.Then.Retry && len(r.Do) > 0 {
				c.add(Finding{Pos: r.Then.Pos, Severity: SevWarning, Check: "result", Table: t.Name, Row: r.ID,
					Message: fmt.Sprintf("row %s sets retry: true in then, but then is the branch for the success of %s", r.ID, strings.Join(r.Do, ", ")),
					Hint:    "drop retry (use requeueAfter to look again later), or move it to onFailure"})
			}
		}
	}
}

// registryUse collects what the sets naming one registry use.
type registryUse struct {
	first   *TableSet
	facts   map[string]bool
	actions map[string]bool
	guards  map[string]bool
	status  map[string]bool
	// countFrom: the hooks states' waits name; requeueAt those rows'
	// results name.
	countFrom map[string]bool
	requeueAt map[string]bool
}

// checkRegistries compares what the tables use with what the registries
// implement. Unused registrations are judged over all sets sharing a
// registry.
func checkRegistries(lib *Library, catalogs map[string]*Catalog, out *Findings) {
	add := func(f Finding) { *out = append(*out, f) }
	uses := map[string]*registryUse{}
	var order []string
	for _, s := range lib.Sets {
		cat, ok := catalogs[s.Registry]
		if s.Registry == "" || !ok || cat == nil {
			msg := fmt.Sprintf("%s names no registry (spec.registry); actions and facts not checked", setLabel(s))
			if s.Registry != "" {
				msg = fmt.Sprintf("no registry %q is known; actions and facts of %s not checked", s.Registry, setLabel(s))
			}
			add(Finding{Pos: s.Pos, Severity: SevWarning, Check: "registry", Table: setTable(s),
				Message: msg, Hint: "set spec.registry to one of: " + strings.Join(sortedKeys(catalogs), ", ")})
			continue
		}
		u := uses[s.Registry]
		if u == nil {
			u = &registryUse{first: s, facts: map[string]bool{}, actions: map[string]bool{}, guards: map[string]bool{}, status: map[string]bool{}, countFrom: map[string]bool{}, requeueAt: map[string]bool{}}
			uses[s.Registry] = u
			order = append(order, s.Registry)
		}
		var actionNames []string
		for _, e := range cat.Entries {
			if e.Kind == EntryAction {
				actionNames = append(actionNames, e.Name)
			}
		}
		for _, st := range s.States {
			if st.Wait == nil || st.Wait.CountFrom == "" {
				continue
			}
			u.countFrom[st.Wait.CountFrom] = true
			if _, ok := cat.Lookup(EntryCountFrom, st.Wait.CountFrom); !ok {
				add(Finding{Pos: st.Wait.Pos, Severity: SevError, Check: "registry", Table: setTable(s),
					Message: fmt.Sprintf("state %s: countFrom hook %s is not registered in registry %s", st.Name, st.Wait.CountFrom, cat.Name),
					Hint:    "register it in Go with Registry.CountFrom, or remove countFrom"})
			}
		}
		for _, f := range s.Facts {
			if f.Guard {
				continue
			}
			u.facts[f.Name] = true
			if w := s.timedOutWait(f.Name); w != nil {
				if _, ok := cat.Lookup(EntryFact, f.Name); ok {
					add(Finding{Pos: f.Pos, Severity: SevError, Check: "registry", Table: setTable(s),
						Message: fmt.Sprintf("fact %s is computed from a state's wait (timedOut) but registry %s also registers an observer for it", f.Name, cat.Name),
						Hint:    "remove the Go observer: the engine computes the fact from the wait's since and timeout"})
				}
				continue
			}
			if _, ok := cat.Lookup(EntryFact, f.Name); !ok {
				add(Finding{Pos: f.Pos, Severity: SevError, Check: "registry", Table: setTable(s),
					Message: fmt.Sprintf("fact %s has no observer in registry %s", f.Name, cat.Name),
					Hint:    "register its observer in Go with Registry.Bool or Registry.Enum, or remove the fact"})
			}
		}
		for _, sf := range s.StatusFields {
			u.status[sf.Name] = true
			if _, ok := cat.Lookup(EntryStatus, sf.Name); !ok {
				add(Finding{Pos: sf.Pos, Severity: SevError, Check: "registry", Table: setTable(s),
					Message: fmt.Sprintf("status field %s has no setter in registry %s", sf.Name, cat.Name),
					Hint:    "register one in Go with Registry.StatusField, or remove the field"})
			}
		}
		for _, e := range cat.Entries {
			if e.Kind == EntrySummary && len(s.Conditions) > 0 && s.conditionType(e.Name) == nil {
				add(Finding{Pos: s.Pos, Severity: SevError, Check: "registry", Table: setTable(s),
					Message: fmt.Sprintf("registry %s summarises condition %s, which the set does not declare", cat.Name, e.Name),
					Hint:    "declare it under spec.conditions"})
			}
		}
		for _, t := range s.Tables {
			for _, r := range t.Rows {
				for _, res := range []*Result{&r.Then, r.InProgress, r.OnFailure} {
					if res == nil || res.RequeueAt == "" {
						continue
					}
					u.requeueAt[res.RequeueAt] = true
					if _, ok := cat.Lookup(EntryRequeueAt, res.RequeueAt); !ok {
						add(Finding{Pos: res.Pos, Severity: SevError, Check: "registry", Table: t.Name, Row: r.ID,
							Message: fmt.Sprintf("requeueAt hook %s is not registered in registry %s", res.RequeueAt, cat.Name),
							Hint:    "register it in Go with Registry.RequeueAt, or use requeueAfter"})
					}
				}
				for _, g := range r.Guards {
					u.guards[g] = true
					if _, ok := cat.Lookup(EntryGuard, g); !ok {
						add(Finding{Pos: r.Pos, Severity: SevError, Check: "registry", Table: t.Name, Row: r.ID,
							Message: fmt.Sprintf("unknown guard %q: registry %s has no such guard", g, cat.Name),
							Hint:    "register it in Go with Registry.Guard, or express the condition as a fact"})
					}
				}
				var waits []string
				offered := map[string]bool{"detail": true}
				known := true
				for _, a := range r.Do {
					u.actions[a] = true
					e, ok := cat.Lookup(EntryAction, a)
					if !ok {
						known = false
						add(Finding{Pos: r.Pos, Severity: SevError, Check: "registry", Table: t.Name, Row: r.ID,
							Message: fmt.Sprintf("unknown action %q: registry %s has no such action", a, cat.Name),
							Hint:    suggest(a, actionNames, "actions", "Registry.Action")})
						continue
					}
					if e.MayWait {
						waits = append(waits, a)
					}
					for _, name := range e.Offers {
						offered[name] = true
					}
				}
				if known {
					checkPlaceholders(r, t.Name, offered, add)
				}
				if len(waits) > 0 && r.InProgress == nil {
					add(Finding{Pos: r.Pos, Severity: SevError, Check: "registry", Table: t.Name, Row: r.ID,
						Message: fmt.Sprintf("row %s runs %s, which may report InProgress, but has no inProgress result", r.ID, strings.Join(waits, ", ")),
						Hint:    "add inProgress: with the condition to show and a requeueAfter while it waits"})
				}
			}
		}
	}
	checkFactDeclarations(lib, catalogs, out)
	for _, name := range order {
		u := uses[name]
		s := u.first
		for _, e := range catalogs[name].Entries {
			if e.Kind == EntryFact {
				// A fact registered in Go without a declaration is an error
				// (checkFactDeclarations), not an unused registration.
				continue
			}
			var used bool
			switch e.Kind {
			case EntryFact:
				used = u.facts[e.Name]
			case EntryAction:
				used = u.actions[e.Name]
			case EntryGuard:
				used = u.guards[e.Name]
			case EntryStatus:
				used = u.status[e.Name]
			case EntryCountFrom:
				used = u.countFrom[e.Name]
			case EntryRequeueAt:
				used = u.requeueAt[e.Name]
			default:
				used = true
			}
			if used {
				continue
			}
			add(Finding{Pos: s.Pos, Severity: SevWarning, Check: "registry", Table: setTable(s),
				Message: fmt.Sprintf("%s %s is registered in registry %s but no table uses it", e.Kind, e.Name, name),
				Hint:    "remove the registration, or use it in a table"})
		}
	}
}

// placeholder is a named part of a condition message: {detail}, or a
// detail an action offers.
var placeholder = regexp.MustCompile(`\{([A-Za-z][A-Za-z0-9]*)\}`)

// checkPlaceholders refuses a condition message naming a detail none of
// its row's actions offers: it would reach the object as written, braces
// and all.
func checkPlaceholders(r *Row, table string, offered map[string]bool, add func(Finding)) {
	names := make([]string, 0, len(offered))
	for n := range offered {
		names = append(names, "{"+n+"}")
	}
	sort.Strings(names)
	for _, res := range []*Result{&r.Then, r.InProgress, r.OnFailure} {
		if res == nil {
			continue
		}
		for _, c := range res.Conditions {
			for _, m := range placeholder.FindAllStringSubmatch(c.Message, -1) {
				if offered[m[1]] {
					continue
				}
				add(Finding{Pos: c.Pos, Severity: SevError, Check: "registry", Table: table, Row: r.ID,
					Message: fmt.Sprintf("condition %s's message uses %s, which none of the row's actions (%s) offers; it can use %s",
						c.Type, m[0], cmp.Or(strings.Join(r.Do, ", "), "none"), strings.Join(names, ", ")),
					Hint: "offer it from an action with engine.Offers and Outcome.With, or write the words in the message"})
			}
		}
	}
}

// checkFactDeclarations holds each fact of a registry to one declaration:
// the tables declare it (name, domain, description) exactly once among the
// sets and decision tables naming the registry, and Go registers only its
// observer. A fact registered in Go that no table declares has no domain
// and no description, and nothing would read it; a second declaration
// would give it two descriptions, maybe two domains.
func checkFactDeclarations(lib *Library, catalogs map[string]*Catalog, out *Findings) {
	type decl struct {
		pos   Pos
		table string
	}
	declared := map[string]map[string]decl{}
	declare := func(registry, table string, f *Fact) {
		if f.Guard || catalogs[registry] == nil {
			return
		}
		byName := declared[registry]
		if byName == nil {
			byName = map[string]decl{}
			declared[registry] = byName
		}
		if first, dup := byName[f.Name]; dup {
			*out = append(*out, Finding{Pos: f.Pos, Severity: SevError, Check: "registry", Table: table,
				Message: fmt.Sprintf("fact %s of registry %s is declared twice: here and at %s:%d (%s)", f.Name, registry, first.pos.File, first.pos.Line, first.table),
				Hint:    "declare a fact once; tables sharing a registry share its declaration through one set"})
			return
		}
		byName[f.Name] = decl{pos: f.Pos, table: table}
	}
	for _, s := range lib.Sets {
		for _, f := range s.Facts {
			declare(s.Registry, setTable(s), f)
		}
	}
	for _, d := range lib.Decisions {
		for _, f := range d.Facts {
			declare(d.Registry, d.Name, f)
		}
	}
	for _, name := range sortedKeys(catalogs) {
		byName, used := declared[name]
		if !used {
			// No table names the registry; the registry check says so.
			continue
		}
		pos, table := Pos{}, ""
		for _, s := range lib.Sets {
			if s.Registry == name {
				pos, table = s.Pos, setTable(s)
				break
			}
		}
		if table == "" {
			for _, d := range lib.Decisions {
				if d.Registry == name {
					pos, table = d.Pos, d.Name
					break
				}
			}
		}
		for _, e := range catalogs[name].Entries {
			if e.Kind != EntryFact {
				continue
			}
			if _, ok := byName[e.Name]; !ok {
				*out = append(*out, Finding{Pos: pos, Severity: SevError, Check: "registry", Table: table,
					Message: fmt.Sprintf("fact %s has an observer in registry %s but no table declares it", e.Name, name),
					Hint:    "declare it (type, values, description) under the facts of the set or decision table naming the registry, or remove its registration"})
			}
		}
	}
}

// suggest builds the hint for an unknown name: the close registered names,
// or all of them.
func suggest(name string, known []string, what, register string) string {
	if dym := didYouMean(name, known); dym != "" {
		return dym
	}
	switch {
	case len(known) == 0:
		return fmt.Sprintf("the registry has no %s yet; register it in Go with %s", what, register)
	case len(known) > 12:
		return fmt.Sprintf("register it in Go with %s; registered %s include %s, ...", register, what, strings.Join(known[:12], ", "))
	default:
		return fmt.Sprintf("register it in Go with %s; registered %s: %s", register, what, strings.Join(known, ", "))
	}
}

// didYouMean returns "did you mean X?" naming the known names close to
// name, or "" when none is.
func didYouMean(name string, known []string) string {
	var near []string
	for _, k := range known {
		if k != name && isClose(name, k) {
			near = append(near, k)
		}
	}
	if len(near) == 0 {
		return ""
	}
	return "did you mean " + strings.Join(near, " or ") + "?"
}

// withDidYouMean prefixes a hint with the close names, if any.
func withDidYouMean(name string, known []string, hint string) string {
	if dym := didYouMean(name, known); dym != "" {
		return dym + " " + hint
	}
	return hint
}

// isClose reports whether two names differ by case, containment or a few
// edits.
func isClose(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la == lb || (len(la) >= 3 && strings.Contains(lb, la)) || (len(lb) >= 3 && strings.Contains(la, lb)) {
		return true
	}
	limit := max(1, min(len(la), len(lb))/3)
	return editDistance(la, lb) <= limit
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment): insertions, deletions, substitutions and adjacent swaps.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// gap returns an assignment inside region that no cube of cover contains,
// or nil when cover covers region. It answers the same question as
// uncovered but chooses its splits for speed: it splits on the fact the
// most live cubes constrain (the root of a decision-table-like cover) and
// branches on groups of values no live cube tells apart, so a complete
// cover of n rows is usually proven in about n steps rather than a number
// exponential in the facts.
func gap(set *TableSet, region cube, cover []cube) []uint8 {
	r := append(cube(nil), region...)
	return gapRec(set, r, cover, make([]int, len(region)))
}

func gapRec(set *TableSet, region cube, cover []cube, count []int) []uint8 {
	live := make([]cube, 0, len(cover))
	for _, c := range cover {
		meets, contains := true, true
		for i, m := range region {
			x := c[i] & m
			if x == 0 {
				meets = false
				break
			}
			if x != m {
				contains = false
			}
		}
		if !meets {
			continue
		}
		if contains {
			return nil
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return region.pick()
	}
	clear(count)
	for _, c := range live {
		for i, m := range region {
			if c[i]&m != m {
				count[i]++
			}
		}
	}
	split := 0
	for i, n := range count {
		if n > count[split] {
			split = i
		}
	}
	saved := region[split]
	defer func() { region[split] = saved }()
	rest := saved
	for rest != 0 {
		// The values of rest that every live cube treats like the lowest.
		low := rest & -rest
		class := rest
		for _, c := range live {
			if c[split]&low != 0 {
				class &= c[split]
			} else {
				class &^= c[split]
			}
		}
		rest &^= class
		region[split] = class
		if ex := gapRec(set, region, live, count); ex != nil {
			return ex
		}
	}
	return nil
}
