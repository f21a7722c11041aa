package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/krtt-dev/krtt/engine"
)

// Options adjusts Markdown.
type Options struct {
	// Coverage maps a row id to the scenarios that exercise it, each a
	// link such as "features/machine_deletion.feature:42 a pre-drain hook
	// holds the drain". When non-nil the page gets a Scenarios column in
	// the KRTT table and a scenario list under every row; rows without an
	// entry are shown as uncovered.
	Coverage map[string][]string
}

// Markdown writes a documentation page for one table: its header, the
// KRTT table with the five human columns, the machine-checkable part of
// every row, a Mermaid state diagram and a glossary of the vocabulary the
// table uses. cat, when non-nil, supplies descriptions of actions and
// guards. The output depends only on its inputs.
func Markdown(w io.Writer, t *engine.Table, cat *engine.Catalog, opts Options) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	s := t.Set()

	// Header.
	if t.Title != "" {
		p("# %s — %s\n\n", t.Name, t.Title)
	} else {
		p("# %s\n\n", t.Name)
	}
	if t.Description != "" {
		p("%s\n\n", strings.TrimSpace(t.Description))
	}
	p("| | |\n|:---|:---|\n")
	p("| Table | %s |\n", mdCell(mdCode(t.Name)))
	if t.Source != "" {
		p("| Source | %s |\n", mdCell(t.Source))
	}
	if t.Pos.File != "" {
		p("| Defined in | %s |\n", mdCell(mdCode(mdPos(t.Pos))))
	}
	p("| Hit policy | %s |\n", mdCell(mdHitPolicy(t.HitPolicy)))
	pos, n := setPosition(t)
	// A standalone table's set is its own, made from the same document.
	standalone := len(s.Tables) == 1 && s.Name == t.Name && s.Pos == t.Pos
	if standalone {
		p("| Set | %s: the table forms a set of its own |\n", mdCell(mdCode(s.Name)))
	} else {
		p("| Set | %s |\n", mdCell(mdCode(s.Name)))
	}
	p("| Order in set | %s |\n", mdCell(mdOrder(t, pos, n)))
	if s.Registry != "" {
		p("| Registry | %s |\n", mdCell(mdCode(s.Registry)))
	}
	if s.InitialState != "" {
		p("| Initial state | %s |\n", mdCell(mdCode(s.InitialState)))
	}
	p("| Rows | %d |\n\n", len(t.Rows))
	if s.Description != "" && !standalone {
		p("Set %s: %s\n\n", mdCode(s.Name), strings.TrimSpace(s.Description))
	}

	// KRTT table.
	p("## KRTT — Kubernetes Reconciler Transition Table\n\n")
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = []string{r.ID, r.Observed, mdOrDash(r.Desired), r.Trigger, r.Action, r.Resulting}
	}
	p("%s", mdRowsTable([]string{"Row", "Observed Status", "Desired Spec", "Trigger / Condition", "Reconciliation Action", "Resulting Status"},
		rows, opts.Coverage))

	// Machine-checkable rows.
	p("## Machine-checkable rows\n\n")
	for _, r := range t.Rows {
		if r.Trigger != "" {
			p("### %s — %s\n\n", r.ID, mdOneLine(r.Trigger))
		} else {
			p("### %s\n\n", r.ID)
		}
		if r.Pos.File != "" {
			p("- **Defined at:** %s\n", mdCode(mdPos(r.Pos)))
		}
		if r.Cites != "" {
			p("- **Cites:** %s\n", mdOneLine(r.Cites))
		}
		p("- **From:** %s\n", mdFrom(r))
		p("- **When:** %s\n", mdWhen(r.When))
		if len(r.Guards) > 0 {
			p("- **Guards:** %s (each must hold)\n", mdCodeList(r.Guards))
		} else {
			p("- **Guards:** none\n")
		}
		if len(r.Do) > 0 {
			p("- **Do:** %s (in order; stops at the first that does not finish)\n", mdCodeList(r.Do))
		} else {
			p("- **Do:** nothing\n")
		}
		mdResult(&b, "Then", "every action done", &r.Then, "")
		waitAbsent := fmt.Sprintf("not given: stay in the current state and requeue after %s", engine.DefaultInProgressRequeue)
		failAbsent := "not given: stay in the current state and return the error so the work queue retries with back-off"
		if len(r.Do) == 0 {
			waitAbsent = "does not arise: the row runs no actions"
			failAbsent = waitAbsent
		}
		mdResult(&b, "In progress", "an action waits", r.InProgress, waitAbsent)
		mdResult(&b, "On failure", "an action failed", r.OnFailure, failAbsent)
		if opts.Coverage != nil {
			p("%s", mdScenariosItem(opts.Coverage[r.ID]))
		}
		p("\n")
	}

	// State diagram.
	p("## State diagram\n\n")
	p("Edges are labelled with the ids of the rows that take them; a row that keeps the state is a self-loop.\n\n")
	p("```mermaid\n")
	writeMermaid(&b, t)
	p("```\n\n")

	// Glossary.
	p("## Glossary\n\n")
	p("### States\n\n")
	p("| State | Sub-state of | Phase | Terminal | Description |\n|:---|:---|:---|:---|:---|\n")
	for _, st := range s.States {
		name := mdCode(st.Name)
		switch {
		case st.Name == s.InitialState:
			name += " (initial)"
		case st.Abstract:
			name += " (abstract: groups sub-states; rows for it apply in each)"
		case st.Name == s.UnknownState:
			name += " (for a status.state the tables do not know)"
		}
		if st.Quiet {
			name += " (quiet: entering it records no Event)"
		}
		term := "no"
		if st.Terminal {
			term = "yes"
		}
		parent := "-"
		if st.Parent != "" {
			parent = mdCode(st.Parent)
		}
		p("| %s | %s | %s | %s | %s |\n", mdCell(name), parent, mdCell(mdOrDash(st.Phase)), term, mdCell(mdOrDash(st.Description)))
	}
	p("\n")

	used := renderFactsUsed(t)
	p("### Facts\n\n")
	var unused []string
	wrote := false
	for _, f := range s.Facts {
		if f.Guard {
			continue
		}
		if !used[f.Name] {
			unused = append(unused, f.Name)
			continue
		}
		if !wrote {
			p("| Fact | Type | Values | Description |\n|:---|:---|:---|:---|\n")
			wrote = true
		}
		vals := make([]string, len(f.Values))
		for i, v := range f.Values {
			vals[i] = mdCode(v.Name)
			if v.Description != "" {
				vals[i] += ": " + mdOneLine(v.Description)
			}
		}
		p("| %s | %s | %s | %s |\n", mdCell(mdCode(f.Name)), f.Type, mdCell(strings.Join(vals, "\n")), mdCell(mdOrDash(f.Description)))
	}
	if !wrote {
		p("The rows of this table read no facts.\n")
	}
	p("\n")
	if len(unused) > 0 {
		p("The set also declares %s, which this table does not read.\n\n", mdCodeList(unused))
	}

	var imps []*engine.Impossible
	for _, im := range s.Impossible {
		for _, m := range im.When {
			if used[m.Fact] {
				imps = append(imps, im)
				break
			}
		}
	}
	if len(imps) > 0 {
		p("### Impossible combinations\n\n")
		p("No cluster produces these combinations, so the checks ignore them.\n\n")
		p("| Name | When | Description |\n|:---|:---|:---|\n")
		for _, im := range imps {
			p("| %s | %s | %s |\n", mdCell(mdCode(im.Name)), mdCell(mdWhen(im.When)), mdCell(mdOrDash(im.Description)))
		}
		p("\n")
	}

	guards, guardRows := renderNamesUsed(t, func(r *engine.Row) []string { return r.Guards })
	if len(guards) > 0 {
		p("### Guards\n\n")
		p("| Guard | Used by rows | Reads | Description |\n|:---|:---|:---|:---|\n")
		for _, g := range guards {
			reads, desc := "—", "—"
			if cat != nil {
				if e, ok := cat.Lookup(engine.EntryGuard, g); ok {
					if len(e.Reads) > 0 {
						reads = mdCodeList(e.Reads)
					}
					desc = mdOrDash(e.Description)
				} else {
					desc = "not in the catalog of registry " + mdCode(cat.Name)
				}
			}
			p("| %s | %s | %s | %s |\n", mdCell(mdCode(g)), mdCell(strings.Join(guardRows[g], ", ")), mdCell(reads), mdCell(desc))
		}
		p("\n")
	}

	actions, actionRows := renderNamesUsed(t, func(r *engine.Row) []string { return r.Do })
	p("### Actions\n\n")
	if len(actions) == 0 {
		p("The rows of this table run no actions.\n\n")
	} else {
		p("| Action | Used by rows | May wait | Description |\n|:---|:---|:---|:---|\n")
		for _, a := range actions {
			wait, desc := "—", "—"
			if cat != nil {
				if e, ok := cat.Lookup(engine.EntryAction, a); ok {
					wait = "no"
					if e.MayWait {
						wait = "yes"
					}
					desc = mdOrDash(e.Description)
				} else {
					desc = "not in the catalog of registry " + mdCode(cat.Name)
				}
			}
			p("| %s | %s | %s | %s |\n", mdCell(mdCode(a)), mdCell(strings.Join(actionRows[a], ", ")), wait, mdCell(desc))
		}
		p("\n")
	}

	fields, fieldRows := renderNamesUsed(t, func(r *engine.Row) []string {
		var out []string
		for _, res := range r.Results() {
			out = append(out, res.StatusOrder...)
		}
		return out
	})
	if len(fields) > 0 {
		p("### Status fields\n\n")
		p("| Field | Set by rows | Description |\n|:---|:---|:---|\n")
		for _, f := range fields {
			desc := "—"
			for _, sf := range s.StatusFields {
				if sf.Name == f {
					desc = mdOrDash(sf.Description)
				}
			}
			p("| %s | %s | %s |\n", mdCell(mdCode(f)), mdCell(strings.Join(fieldRows[f], ", ")), mdCell(desc))
		}
		p("\n")
	}

	out := strings.TrimRight(b.String(), "\n") + "\n"
	_, err := io.WriteString(w, out)
	return err
}

// Mermaid writes the table's transitions as a Mermaid
// stateDiagram-v2.
func Mermaid(w io.Writer, t *engine.Table) error {
	var b strings.Builder
	writeMermaid(&b, t)
	_, err := io.WriteString(w, b.String())
	return err
}

// Dot writes the table's transitions as a Graphviz digraph with the
// same edges as Mermaid.
func Dot(w io.Writer, t *engine.Table) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	s := t.Set()
	edges := diagramEdges(t)
	states := diagramStates(t, edges)
	p("digraph %s {\n", dotQuote(t.Name))
	p("  rankdir=LR;\n")
	p("  node [shape=box, style=rounded];\n")
	if t.Title != "" {
		p("  label=%s;\n  labelloc=t;\n", dotQuote(t.Title))
	}
	initial := s.State(s.InitialState)
	if initial != nil && states[initial.Index()] {
		p("  %s [shape=point, label=\"\"];\n", dotQuote("[*]"))
		p("  %s -> %s;\n", dotQuote("[*]"), dotQuote(initial.Name))
	}
	for _, st := range s.States {
		if !states[st.Index()] {
			continue
		}
		if st.Terminal {
			p("  %s [peripheries=2];\n", dotQuote(st.Name))
		} else {
			p("  %s;\n", dotQuote(st.Name))
		}
	}
	for _, e := range edges {
		attrs := "label=" + dotQuote(strings.Join(e.labels, ", "))
		if e.alt {
			attrs += ", style=dashed"
		}
		p("  %s -> %s [%s];\n", dotQuote(e.from.Name), dotQuote(e.to.Name), attrs)
	}
	p("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// diagramEdge is one arrow of a table's diagram: every row that goes from one
// state to another (or stays) for the same kind of outcome.
type diagramEdge struct {
	from, to *engine.State
	labels   []string
	// alt marks an edge taken on inProgress or onFailure.
	alt bool
}

// diagramEdges lists the diagram's edges in the order their first row
// appears: the then result of every row in every state it applies in (a
// self-loop when the state does not change), and inProgress and onFailure
// results that move to a state other than the current one and the one
// the then result leads to.
func diagramEdges(t *engine.Table) []*diagramEdge {
	var out []*diagramEdge
	index := map[[3]int]*diagramEdge{}
	add := func(from, to *engine.State, alt bool, label string) {
		k := [3]int{from.Index(), to.Index(), 0}
		if alt {
			k[2] = 1
		}
		e, ok := index[k]
		if !ok {
			e = &diagramEdge{from: from, to: to, alt: alt}
			index[k] = e
			out = append(out, e)
		}
		e.labels = append(e.labels, label)
	}
	for _, r := range t.Rows {
		for _, from := range r.FromStates() {
			to := from
			if r.Then.State != "" {
				if st := t.Set().State(r.Then.State); st != nil {
					to = st
				}
			}
			add(from, to, false, r.ID)
			for _, alt := range []struct {
				res  *engine.Result
				name string
			}{{r.InProgress, "inProgress"}, {r.OnFailure, "onFailure"}} {
				if alt.res == nil || alt.res.State == "" {
					continue
				}
				st := t.Set().State(alt.res.State)
				if st == nil || st == from || st == to {
					continue
				}
				add(from, st, true, r.ID+" "+alt.name)
			}
		}
	}
	return out
}

// diagramStates marks the states that appear on some edge.
func diagramStates(t *engine.Table, edges []*diagramEdge) []bool {
	in := make([]bool, len(t.Set().States))
	for _, e := range edges {
		in[e.from.Index()] = true
		in[e.to.Index()] = true
	}
	return in
}

func writeMermaid(b *strings.Builder, t *engine.Table) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	s := t.Set()
	edges := diagramEdges(t)
	states := diagramStates(t, edges)
	ids := mermaidIDs(s)
	p("stateDiagram-v2\n")
	for _, st := range s.States {
		if states[st.Index()] && ids[st.Index()] != st.Name {
			p("    state %s as %s\n", strconv.Quote(st.Name), ids[st.Index()])
		}
	}
	initial := s.State(s.InitialState)
	if initial != nil && states[initial.Index()] {
		p("    [*] --> %s\n", ids[initial.Index()])
	}
	for _, e := range edges {
		label := strings.Join(e.labels, ", ")
		if e.alt {
			label = "(" + label + ")"
		}
		p("    %s --> %s : %s\n", ids[e.from.Index()], ids[e.to.Index()], mermaidLabel(label))
	}
	for _, st := range s.States {
		if states[st.Index()] && st.Terminal {
			p("    %s --> [*]\n", ids[st.Index()])
		}
	}
}

// mermaidIDs gives every state an identifier Mermaid accepts: the name
// itself when it is one, otherwise a sanitized, unique form.
func mermaidIDs(s *engine.TableSet) []string {
	ids := make([]string, len(s.States))
	taken := map[string]bool{}
	for i, st := range s.States {
		if mermaidIdent(st.Name) {
			ids[i] = st.Name
			taken[st.Name] = true
		}
	}
	for i, st := range s.States {
		if ids[i] != "" {
			continue
		}
		var b strings.Builder
		for _, c := range st.Name {
			if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
				b.WriteRune(c)
			} else {
				b.WriteByte('_')
			}
		}
		id := "s_" + b.String()
		for n := 2; taken[id]; n++ {
			id = fmt.Sprintf("s_%s_%d", b.String(), n)
		}
		taken[id] = true
		ids[i] = id
	}
	return ids
}

func mermaidIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	// Words Mermaid reads as keywords.
	switch s {
	case "state", "note", "direction", "classDef", "class", "end":
		return false
	}
	return true
}

// mermaidLabel keeps a transition label on one line and free of the
// characters that end a Mermaid statement.
func mermaidLabel(s string) string {
	return strings.NewReplacer("\n", " ", ";", ",", "#", "no.", "%", " percent").Replace(s)
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// setPosition returns the table's 1-based position in its set and the
// number of tables there.
func setPosition(t *engine.Table) (int, int) {
	for i, o := range t.Set().Tables {
		if o == t {
			return i + 1, len(t.Set().Tables)
		}
	}
	return 0, len(t.Set().Tables)
}

func mdOrder(t *engine.Table, pos, n int) string {
	s := t.Set()
	if n <= 1 {
		return "1 of 1: the only table of its set"
	}
	var before, after []string
	for i, o := range s.Tables {
		switch {
		case i < pos-1:
			before = append(before, o.Name)
		case i > pos-1:
			after = append(after, o.Name)
		}
	}
	out := fmt.Sprintf("%d of %d", pos, n)
	var parts []string
	if len(before) > 0 {
		parts = append(parts, "consulted after "+mdCodeList(before)+", only when none of their rows matches")
	} else {
		parts = append(parts, "consulted first")
	}
	if len(after) > 0 {
		parts = append(parts, "before "+mdCodeList(after))
	}
	return out + ": " + strings.Join(parts, "; ")
}

func mdHitPolicy(hp engine.HitPolicy) string {
	switch hp {
	case engine.HitFirst:
		return mdCode(string(hp)) + ": when several rows match, the first in document order wins"
	default:
		return mdCode(string(engine.HitUnique)) + ": at most one row matches for any state and facts (krtt lint proves it)"
	}
}

func mdFrom(r *engine.Row) string {
	var parts []string
	for _, f := range r.From {
		if f == engine.Wildcard {
			var names []string
			for _, st := range r.Table().Set().States {
				if !st.Terminal && !st.Abstract {
					names = append(names, st.Name)
				}
			}
			parts = append(parts, mdCode(engine.Wildcard)+" (every non-terminal state: "+mdCodeList(names)+")")
			continue
		}
		set := r.Table().Set()
		if parent := set.State(f); parent != nil {
			var below []string
			for _, st := range set.States {
				if st != parent && st.Within(set, parent) && !st.Abstract && !st.Terminal {
					below = append(below, st.Name)
				}
			}
			if len(below) > 0 {
				parts = append(parts, mdCode(f)+" (and every state below it: "+mdCodeList(below)+")")
				continue
			}
		}
		parts = append(parts, mdCode(f))
	}
	return strings.Join(parts, ", ")
}

func mdWhen(when []engine.Match) string {
	if len(when) == 0 {
		return "any facts"
	}
	parts := make([]string, len(when))
	for i, m := range when {
		if len(m.Values) == 1 {
			parts[i] = mdCode(m.Fact) + " = " + mdCode(m.Values[0])
		} else {
			parts[i] = mdCode(m.Fact) + " in " + mdCodeList(m.Values)
		}
	}
	return strings.Join(parts, ", ")
}

// mdResult writes one outcome of a row as a list item with the
// conditions and status fields nested under it; absent is the text for a
// branch the row does not give.
func mdResult(b *strings.Builder, name, when string, res *engine.Result, absent string) {
	fmt.Fprintf(b, "- **%s** (%s): ", name, when)
	if res == nil {
		fmt.Fprintf(b, "%s\n", absent)
		return
	}
	fmt.Fprintf(b, "%s\n", mdResultSummary(res))
	for _, c := range res.Conditions {
		fmt.Fprintf(b, "  - condition %s\n", mdCondition(c))
	}
	for _, k := range res.StatusOrder {
		fmt.Fprintf(b, "  - status %s = %s\n", mdCode(k), mdCode(res.Status[k]))
	}
}

func mdResultSummary(res *engine.Result) string {
	var parts []string
	if res.State != "" {
		parts = append(parts, "go to "+mdCode(res.State))
	} else {
		parts = append(parts, "stay in the current state")
	}
	if res.RequeueAt != "" {
		parts = append(parts, "requeue at "+res.RequeueAt)
	}
	if res.RequeueAfter > 0 {
		parts = append(parts, "requeue after "+engine.ShortDuration(res.RequeueAfter))
	}
	if res.Retry {
		parts = append(parts, "return an error so the work queue retries with back-off")
	}
	if res.StatusUnchanged {
		parts = append(parts, "write nothing to status but these conditions")
	}
	if res.Quiet {
		parts = append(parts, "record no Event for the state change (the actions tell theirs)")
	}
	if res.Warning {
		if res.EventReason != "" {
			parts = append(parts, "record a Warning Event "+res.EventReason+" (it needs a person)")
		} else {
			parts = append(parts, "record a Warning Event (it needs a person)")
		}
	}
	return strings.Join(parts, "; ")
}

func mdCondition(c engine.Condition) string {
	out := mdCode(c.Type) + " = " + mdCode(c.Status) + ", reason " + mdCode(c.Reason)
	if c.Message != "" {
		out += ", message " + strconv.Quote(c.Message)
	}
	return out
}

// renderFactsUsed marks the facts the table's rows read.
func renderFactsUsed(t *engine.Table) map[string]bool {
	used := map[string]bool{}
	for _, r := range t.Rows {
		for _, m := range r.When {
			used[m.Fact] = true
		}
	}
	return used
}

// renderNamesUsed collects names (actions, guards, status fields) in order of
// first use, with the rows that use each.
func renderNamesUsed(t *engine.Table, get func(*engine.Row) []string) ([]string, map[string][]string) {
	var names []string
	rows := map[string][]string{}
	for _, r := range t.Rows {
		seen := map[string]bool{}
		for _, n := range get(r) {
			if seen[n] {
				continue
			}
			seen[n] = true
			if _, ok := rows[n]; !ok {
				names = append(names, n)
			}
			rows[n] = append(rows[n], r.ID)
		}
	}
	return names, rows
}

// mdScenario renders "path:line title" with the location as code.
// mdRowsTable is the Markdown table of a table's rows (each row's first cell
// its id), with a Scenarios column and the coverage summary when coverage is
// known (non-nil). State and decision tables share it.
func mdRowsTable(header []string, rows [][]string, coverage map[string][]string) string {
	var b strings.Builder
	cov := coverage != nil
	if cov {
		header = append(header, "Scenarios")
	}
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString(":---|")
	}
	b.WriteString("\n")
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row[0]
		cells := make([]string, len(row), len(row)+1)
		for j := range row {
			cells[j] = mdCell(row[j])
		}
		if cov {
			cells = append(cells, mdScenariosCell(coverage[row[0]]))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	if cov {
		b.WriteString(mdCoverageSummary(ids, coverage))
	}
	return b.String()
}

// mdScenariosItem is the Scenarios item of a row's detail list.
func mdScenariosItem(links []string) string {
	if len(links) == 0 {
		return "- **Scenarios:** none covers this row\n"
	}
	out := "- **Scenarios:**\n"
	for _, l := range links {
		out += "  - " + mdScenario(l) + "\n"
	}
	return out
}

// mdScenariosCell is a row's scenarios column: a link per scenario that
// fires it, or a dash. State and decision tables share it.
func mdScenariosCell(links []string) string {
	parts := make([]string, len(links))
	for i, l := range links {
		parts[i] = mdScenario(l)
	}
	if len(parts) == 0 {
		parts = []string{"—"}
	}
	return mdCell(strings.Join(parts, "\n"))
}

// mdCoverageSummary says how many of the rows ids scenarios cover and names
// the others.
func mdCoverageSummary(ids []string, coverage map[string][]string) string {
	var missing []string
	for _, id := range ids {
		if len(coverage[id]) == 0 {
			missing = append(missing, mdCode(id))
		}
	}
	out := fmt.Sprintf("Scenarios cover %d of %d rows", len(ids)-len(missing), len(ids))
	if len(missing) > 0 {
		out += "; not covered: " + strings.Join(missing, ", ")
	}
	return out + ".\n\n"
}

func mdScenario(link string) string {
	link = strings.TrimSpace(link)
	loc, title, ok := strings.Cut(link, " ")
	if !ok {
		return mdCode(link)
	}
	title = strings.TrimSpace(title)
	// "path/file.feature:42 name" becomes a link to that line.
	if file, line, found := strings.Cut(loc, ":"); found && line != "" && strings.Trim(line, "0123456789") == "" {
		return fmt.Sprintf("[%s](%s#L%s)", strings.ReplaceAll(title, "]", "\\]"), file, line)
	}
	return mdCode(loc) + " " + title
}

func mdPos(p engine.Pos) string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "<br>")
}

func mdOneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func mdOrDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// mdCode renders s as a Markdown code span.
func mdCode(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return "`` " + s + " ``"
}

func mdCodeList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = mdCode(n)
	}
	return strings.Join(parts, ", ")
}
