package features

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	gherkin "github.com/cucumber/gherkin/go/v26"
	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/harness"
)

// rowTagPrefix starts the tags that name the rows a scenario means to fire:
// @row:<table>:<row id>.
const rowTagPrefix = "@row:"

// coverage records which rows fired for the objects (Machines, MachineSets)
// of which scenario.
// Scenarios are told apart by namespace: every scenario has its own.
type coverage struct {
	h *harness.Harness

	mu sync.Mutex
	// scenario label ("features/x.feature:LINE name") by namespace.
	label map[string]string
	// rows fired per namespace, as "table:row".
	byNS map[string]map[string]bool

	locMu sync.Mutex
	locs  map[string]map[string]int // file → "name\x00steps" → line
}

func newCoverage(h *harness.Harness) *coverage {
	return &coverage{h: h, label: map[string]string{}, byNS: map[string]map[string]bool{}, locs: map[string]map[string]int{}}
}

func rowKey(table, row string) string { return table + ":" + row }

func (c *coverage) record(tr engine.Trace) {
	ns, _, ok := strings.Cut(tr.Object, "/")
	if !ok || tr.Row == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byNS[ns] == nil {
		c.byNS[ns] = map[string]bool{}
	}
	c.byNS[ns][rowKey(tr.Table, tr.Row)] = true
}

// tableRows is a table's name and its row ids: a transition table of the
// set, or a decision table the set's controller consults.
type tableRows struct {
	name string
	rows []string
}

// coverable lists every table whose rows must fire: of every set the
// operator runs (Machine, MachineSet), its transition tables, then the
// decision tables it consults.
func coverable(sets actions.TableSets) []tableRows {
	var out []tableRows
	for _, c := range actions.Controllers {
		out = append(out, setTables(sets[c.Name])...)
	}
	return out
}

func setTables(set *engine.TableSet) []tableRows {
	var out []tableRows
	for _, t := range set.Tables {
		tr := tableRows{name: t.Name}
		for _, r := range t.Rows {
			tr.rows = append(tr.rows, r.ID)
		}
		out = append(out, tr)
	}
	for _, d := range set.Decisions {
		tr := tableRows{name: d.Name}
		for _, r := range d.Rows {
			tr.rows = append(tr.rows, r.ID)
		}
		out = append(out, tr)
	}
	return out
}

// known reports whether "table:row" names a row of the loaded tables.
func (c *coverage) known(key string) bool {
	for _, t := range coverable(c.h.Sets) {
		for _, id := range t.rows {
			if rowKey(t.name, id) == key {
				return true
			}
		}
	}
	return false
}

// begin registers a scenario's namespace.
func (c *coverage) begin(ns string, sc *godog.Scenario) {
	l := c.locate(sc)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.label[ns] = l
}

// fired reports whether table:row fired for a Machine in ns.
func (c *coverage) fired(ns, key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byNS[ns][key]
}

// firedIn lists the rows that fired in ns, sorted.
func (c *coverage) firedIn(ns string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k := range c.byNS[ns] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tagged returns the table:row keys a scenario's @row: tags name.
func tagged(sc *godog.Scenario) []string {
	var out []string
	for _, t := range sc.Tags {
		if k, ok := strings.CutPrefix(t.Name, rowTagPrefix); ok {
			out = append(out, k)
		}
	}
	return out
}

// locate returns "features/<file>:<line> <name>" for a scenario; for an
// outline the line is that of its Examples row.
func (c *coverage) locate(sc *godog.Scenario) string {
	file := filepath.Base(sc.Uri)
	line := c.line(sc.Uri, sc)
	return fmt.Sprintf("features/%s:%d %s", file, line, sc.Name)
}

func pickleKey(name string, steps []*messages.PickleStep) string {
	var b strings.Builder
	b.WriteString(name)
	for _, s := range steps {
		b.WriteString("\x00")
		b.WriteString(s.Text)
	}
	return b.String()
}

func (c *coverage) line(uri string, sc *godog.Scenario) int {
	c.locMu.Lock()
	defer c.locMu.Unlock()
	m, ok := c.locs[uri]
	if !ok {
		m = map[string]int{}
		c.locs[uri] = m
		if f, err := os.Open(uri); err == nil {
			ids := &messages.Incrementing{}
			doc, err := gherkin.ParseGherkinDocument(f, ids.NewId)
			_ = f.Close()
			if err == nil && doc.Feature != nil {
				lines := map[string]int{}
				var walk func(children []*messages.FeatureChild, rules []*messages.RuleChild)
				addScenario := func(s *messages.Scenario) {
					lines[s.Id] = int(s.Location.Line)
					for _, ex := range s.Examples {
						for _, row := range ex.TableBody {
							lines[row.Id] = int(row.Location.Line)
						}
					}
				}
				walk = func(children []*messages.FeatureChild, rules []*messages.RuleChild) {
					for _, ch := range children {
						if ch.Scenario != nil {
							addScenario(ch.Scenario)
						}
						if ch.Rule != nil {
							walk(nil, ch.Rule.Children)
						}
					}
					for _, ch := range rules {
						if ch.Scenario != nil {
							addScenario(ch.Scenario)
						}
					}
				}
				walk(doc.Feature.Children, nil)
				for _, p := range gherkin.Pickles(*doc, uri, ids.NewId) {
					if n := len(p.AstNodeIds); n > 0 {
						m[pickleKey(p.Name, p.Steps)] = lines[p.AstNodeIds[n-1]]
					}
				}
			}
		}
	}
	return m[pickleKey(sc.Name, sc.Steps)]
}

// coverageReport is, per table, per row, the scenarios in which it fired.
type coverageReport struct {
	tables []tableRows
	hits   map[string]map[string][]string
}

func (c *coverage) report() *coverageReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &coverageReport{tables: coverable(c.h.Sets), hits: map[string]map[string][]string{}}
	for _, t := range r.tables {
		r.hits[t.name] = map[string][]string{}
		for _, id := range t.rows {
			var where []string
			for ns, rows := range c.byNS {
				l, ok := c.label[ns]
				if ok && rows[rowKey(t.name, id)] {
					where = append(where, l)
				}
			}
			sort.Strings(where)
			r.hits[t.name][id] = where
		}
	}
	return r
}

func (r *coverageReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %5s %8s  %s\n", "TABLE", "ROWS", "COVERED", "MISSING")
	for _, t := range r.tables {
		covered := 0
		var missing []string
		for _, id := range t.rows {
			if len(r.hits[t.name][id]) > 0 {
				covered++
			} else {
				missing = append(missing, id)
			}
		}
		m := strings.Join(missing, " ")
		if m == "" {
			m = "-"
		}
		fmt.Fprintf(&b, "%-24s %5d %8d  %s\n", t.name, len(t.rows), covered, m)
	}
	return b.String()
}

func (r *coverageReport) missingCount() int {
	n := 0
	for _, t := range r.tables {
		for _, id := range t.rows {
			if len(r.hits[t.name][id]) == 0 {
				n++
			}
		}
	}
	return n
}

func (r *coverageReport) missingList() string {
	var out []string
	for _, t := range r.tables {
		for _, id := range t.rows {
			if len(r.hits[t.name][id]) == 0 {
				out = append(out, "  "+t.name+":"+id)
			}
		}
	}
	return strings.Join(out, "\n")
}

// writeJSON writes {"table": {"ROW": ["features/f.feature:LINE name", ...]}};
// rows that never fired get an empty list.
func (r *coverageReport) writeJSON(path string) error {
	out := map[string]map[string][]string{}
	for _, t := range r.tables {
		out[t.name] = map[string][]string{}
		for _, id := range t.rows {
			where := r.hits[t.name][id]
			if where == nil {
				where = []string{}
			}
			out[t.name][id] = where
		}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
