package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krtt-dev/krtt/engine"
	krttexplain "github.com/krtt-dev/krtt/engine/explain"
)

// decideCmd: krtt decide [--catalog FILE] --table FILE|DIR --state S --fact name=value... [--name TABLE] [-o json]
func decideCmd(stdout, stderr io.Writer) *cobra.Command {
	var paths, facts []string
	var state, name, output string
	cmd := &cobra.Command{
		Use:   "decide --table FILE|DIR (--state STATE | --name DECISION-TABLE) --fact name=value... [--name TABLE] [-o text|json]",
		Short: "Show which row fires for a state and facts, and why the others do not",
		Long: `decide loads the tables, builds the facts from --fact name=value and asks
the set which row fires in --state, exactly as the controller would. It prints
that row's five KRTT columns, its actions and the result for each outcome
(then, inProgress, onFailure), then, for every other row of the state, the
first fact that rules it out, or that its table was not consulted.

Every fact a row of the state reads must be given; facts no row of the state
reads may be left out and default to their first value. A guard is a fact
named guard:NAME (or just NAME) with value true or false.

--name picks the set when several are loaded: the name of a set or of one of
its tables. The exit status is 0 when a row fires and 1 when none does.

The fired row's actions are described as the registry's catalog describes
them: krtt's own, or those of --catalog FILE (the catalog a controller built
on krtt writes, engine.WriteCatalogFile). With --catalog the tables are first
checked with it, as krtt lint --catalog FILE does: errors refuse them,
warnings are printed to stderr. Without it the tables are taken as they are.

With --name naming a decision table (krtt decide --table transitions --name
pod-verdict --fact force=true ...) there is no --state: the facts of one item
decide. Facts may be left out as long as no row before the deciding one reads
them; decide prints the row that gives the verdict and why each other row
does not, or which facts an earlier row still needs.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths = append(paths, args...)
			if len(paths) == 0 {
				return usagef("decide needs --table FILE|DIR")
			}
			if output != "text" && output != "json" {
				return usagef("unknown -o %q: use text or json", output)
			}
			cats, err := catalogs()
			if err != nil {
				return err
			}
			// Without --catalog the tables are taken as they are, so a set
			// still being written (rows that overlap, an unknown registry)
			// can be asked; with one they are checked as the controller
			// that wrote it would check them.
			var lib *engine.Library
			if catalogFile != "" {
				lib, err = loadChecked(stderr, cats, paths)
			} else {
				lib, err = load(stderr, paths)
			}
			if err != nil {
				return err
			}
			if dt := lib.Decision(name); dt != nil {
				// A decision table is stateless: facts alone decide.
				if state != "" {
					return usagef("%s is a decision table: it has no states, leave out --state", dt.Name)
				}
				return decideItem(stdout, dt, facts, output)
			}
			if state == "" {
				return usagef("decide needs --state (or --name naming a decision table)")
			}
			set, err := pickSet(lib, name)
			if err != nil {
				return err
			}
			rep, err := decide(set, state, facts, cats[set.Registry])
			if err != nil {
				return err
			}
			if err := emitReport(stdout, output, rep, func() { writeDecision(stdout, rep) }); err != nil {
				return err
			}
			if rep.Decision == nil {
				return exitCode(1)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&paths, "table", nil, "table file or directory to load (repeatable; arguments are loaded too)")
	cmd.Flags().StringVar(&state, "state", "", "the state the object is in")
	cmd.Flags().StringArrayVar(&facts, "fact", nil, "a fact as name=value (repeatable)")
	cmd.Flags().StringVar(&name, "name", "", "the set, or a table of the set, to decide with when several are loaded; or a decision table")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// pickSet chooses the set to decide with.
func pickSet(lib *engine.Library, name string) (*engine.TableSet, error) {
	if name != "" {
		if s := lib.TableSet(name); s != nil {
			return s, nil
		}
		if t := lib.Table(name); t != nil {
			return t.Set(), nil
		}
		return nil, usagef("no set or table %q; tables: %s", name, strings.Join(tableNames(lib), ", "))
	}
	if len(lib.Sets) == 1 {
		return lib.Sets[0], nil
	}
	var sets []string
	for _, s := range lib.Sets {
		sets = append(sets, s.Name)
	}
	return nil, usagef("%d sets loaded (%s); pick one with --name", len(lib.Sets), strings.Join(sets, ", "))
}

// decideReport is the result of krtt decide; -o json prints it as is. The
// row that fires and the other rows are reported in the same model as krtt
// explain's (engine/explain), so tools read both the same way.
type decideReport struct {
	Set   string            `json:"set"`
	State string            `json:"state"`
	Facts map[string]string `json:"facts"`
	// Defaulted lists facts no row of the state reads that were not given
	// and took their first value.
	Defaulted []string `json:"defaulted,omitempty"`
	// Decision is the row that fires; null when none does.
	Decision *krttexplain.FiredRow `json:"decision"`
	// Error says why no row fires.
	Error  string                 `json:"error,omitempty"`
	Others []krttexplain.OtherRow `json:"others"`
	// Actions describes the fired row's actions as the registry's catalog
	// does (--catalog, else krtt's own), so the reader need not look the
	// names up in Go; absent when the catalog does not know them.
	Actions map[string]string `json:"actions,omitempty"`

	factsString string
}

// decide builds the facts, fires the set and explains the other rows; cat
// (nil when unknown) describes the actions.
func decide(set *engine.TableSet, stateName string, given []string, cat *engine.Catalog) (*decideReport, error) {
	st := set.State(stateName)
	if st == nil {
		var names []string
		for _, s := range set.States {
			names = append(names, s.Name)
		}
		return nil, usagef("set %s has no state %q; states: %s", set.Name, stateName, strings.Join(names, ", "))
	}
	f := set.NewFacts()
	for _, kv := range given {
		name, value, ok := strings.Cut(kv, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return nil, usagef("--fact %q: write name=value", kv)
		}
		if set.Fact(name) == nil && set.Fact(engine.GuardFactPrefix+name) != nil {
			name = engine.GuardFactPrefix + name
		}
		if err := f.Set(name, value); err != nil {
			if set.Fact(name) == nil {
				return nil, usagef("--fact %s: %v; facts: %s", kv, err, strings.Join(factNames(set), ", "))
			}
			return nil, usagef("--fact %s: %v", kv, err)
		}
	}
	// Facts a row of the state reads must be given; the rest default.
	relevant := map[string]bool{}
	for _, t := range set.Tables {
		for _, r := range t.Rows {
			if !r.AppliesIn(st) {
				continue
			}
			for _, m := range r.When {
				relevant[m.Fact] = true
			}
			for _, g := range r.Guards {
				relevant[engine.GuardFactPrefix+g] = true
			}
		}
	}
	rep := &decideReport{Set: set.Name, State: st.Name}
	var missing []string
	for _, name := range f.Missing() {
		fact := set.Fact(name)
		if relevant[name] {
			vals := make([]string, len(fact.Values))
			for i, v := range fact.Values {
				vals[i] = v.Name
			}
			missing = append(missing, fmt.Sprintf("  --fact %s=%s", name, strings.Join(vals, "|")))
			continue
		}
		if err := f.Set(name, fact.Values[0].Name); err != nil {
			return nil, err
		}
		rep.Defaulted = append(rep.Defaulted, name+"="+fact.Values[0].Name)
	}
	if len(missing) > 0 {
		return nil, usagef("rows of state %s read facts that were not given:\n%s", st.Name, strings.Join(missing, "\n"))
	}
	rep.Facts = f.Map()
	rep.factsString = f.String()

	d, err := set.Decide(context.Background(), st.Name, f)
	if err != nil && !errors.Is(err, engine.ErrNoDecision) {
		// A table loaded without checks can have overlapping rows.
		rep.Error = err.Error()
	} else if err != nil {
		rep.Error = fmt.Sprintf("no row of set %s matches in state %s", set.Name, st.Name)
	}
	if d != nil {
		rep.Decision = krttexplain.Fired(d)
		for _, a := range rep.Decision.Do {
			if cat == nil {
				break
			}
			if e, ok := cat.Lookup(engine.EntryAction, a); ok && e.Description != "" {
				if rep.Actions == nil {
					rep.Actions = map[string]string{}
				}
				rep.Actions[a] = e.Description
			}
		}
	}
	// Each other row names the first fact that rules it out.
	rep.Others = krttexplain.OtherRows(set, st, f, d, 1)
	return rep, nil
}

func factNames(set *engine.TableSet) []string {
	var out []string
	for _, f := range set.Facts {
		out = append(out, f.Name)
	}
	return out
}

func writeDecision(w io.Writer, rep *decideReport) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("set %s, state %s, facts: %s\n", rep.Set, rep.State, rep.factsString)
	if len(rep.Defaulted) > 0 {
		p("defaulted (no row of the state reads them): %s\n", strings.Join(rep.Defaulted, " "))
	}
	p("\n")
	if d := rep.Decision; d != nil {
		p("fires: table %s row %s (%s:%d)\n", d.Table, d.Row, d.File, d.Line)
		for _, l := range d.Columns.Lines() {
			p("  %s\n", l)
		}
		p("\n")
		if len(d.Do) > 0 {
			p("  do: %s\n", strings.Join(d.Do, ", "))
			for _, a := range d.Do {
				if desc, ok := rep.Actions[a]; ok {
					p("      %s: %s\n", a, desc)
				}
			}
		} else {
			p("  do: nothing\n")
		}
		for _, o := range d.Outcomes {
			res := o.Summary(rep.State)
			p("  %s\n", res.Line())
			for _, l := range res.Details() {
				p("      %s\n", l)
			}
		}
	} else {
		p("no row fires: %s\n", rep.Error)
	}
	if len(rep.Others) > 0 {
		p("\nother rows of state %s:\n", rep.State)
		for _, o := range rep.Others {
			p("  %s %s (line %d): %s\n", o.Table, o.Row, o.Line, o.Reason)
		}
	}
}

// emitReport prints a decision report as indented JSON (-o json) or as the
// text its writer makes.
func emitReport(stdout io.Writer, output string, rep any, text func()) error {
	if output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	text()
	return nil
}
