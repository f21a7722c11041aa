package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/engine/render"
)

// renderCmd: krtt render --format markdown|mermaid|dot|stateless [--table NAME] FILE|DIR...
func renderCmd(stdout, stderr io.Writer) *cobra.Command {
	var format, table, coverage string
	cmd := &cobra.Command{
		Use:   "render [--format markdown|mermaid|dot|stateless] [--table NAME] FILE|DIR...",
		Short: "Render tables as a Markdown page, a Mermaid state diagram or a Graphviz graph",
		Args:  needPaths,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "markdown", "md", "mermaid", "dot", "stateless":
			default:
				return usagef("unknown --format %q: use markdown, mermaid, dot or stateless", format)
			}
			cats, err := catalogs()
			if err != nil {
				return err
			}
			lib, err := load(stderr, args)
			if err != nil {
				return err
			}
			tables, err := pickTables(lib, table)
			if err != nil {
				return err
			}
			cov, err := readCoverage(coverage)
			if err != nil {
				return err
			}
			warnCoverage(stderr, lib, cov)
			var b bytes.Buffer
			for i, t := range tables {
				if i > 0 {
					b.WriteString("\n")
				}
				switch format {
				case "mermaid":
					if len(tables) > 1 {
						fmt.Fprintf(&b, "%%%% table %s\n", t.Name)
					}
					err = render.Mermaid(&b, t)
				case "dot":
					err = render.Dot(&b, t)
				case "stateless":
					_, err = b.WriteString(t.CompiledGraph())
				default:
					err = render.Markdown(&b, t, cats[t.Set().Registry], renderOptions(cov, t))
				}
				if err != nil {
					return err
				}
			}
			_, err = stdout.Write(b.Bytes())
			return err
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "markdown", "output format: markdown, mermaid, dot, or stateless (the compiled machine's own graph, with the state hierarchy)")
	cmd.Flags().StringVarP(&table, "table", "t", "", "render only the named table")
	cmd.Flags().StringVar(&coverage, "coverage", "", "JSON file mapping table → row → scenario links (markdown only)")
	return cmd
}

// docsCmd: krtt docs --out DIR [--coverage FILE] FILE|DIR...
func docsCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, coverage, features string
	cmd := &cobra.Command{
		Use:   "docs --out DIR [--coverage FILE | --features DIR] FILE|DIR...",
		Short: "Write a Markdown page per table and an index README.md",
		Long: `docs writes DIR/<table>.md for every table (the same page as
krtt render --format markdown) and DIR/README.md listing the tables with their
row counts. --coverage names a JSON file of the form
  {"table": {"rowID": ["features/x.feature:42 scenario name", ...]}}
whose links fill in each page's Scenarios column. --features DIR reads the
@row:<table>:<row> tags of DIR/*.feature instead.`,
		Args: needPaths,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("docs needs --out DIR")
			}
			cats, err := catalogs()
			if err != nil {
				return err
			}
			lib, err := load(stderr, args)
			if err != nil {
				return err
			}
			cov, err := readCoverage(coverage)
			if err != nil {
				return err
			}
			if features != "" {
				if coverage != "" {
					return usagef("give --coverage or --features, not both")
				}
				if cov, err = coverageFromFeatures(features, out); err != nil {
					return err
				}
			}
			warnCoverage(stderr, lib, cov)
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			tables := lib.Tables()
			for _, t := range tables {
				var b bytes.Buffer
				if err := render.Markdown(&b, t, cats[t.Set().Registry], renderOptions(cov, t)); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(out, pageName(t)), b.Bytes(), 0o644); err != nil {
					return err
				}
			}
			for _, d := range lib.Decisions {
				var b bytes.Buffer
				if err := render.DecisionMarkdown(&b, d, renderDecisionOptions(cov, d)); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(out, pageFile(d.Name)), b.Bytes(), 0o644); err != nil {
					return err
				}
			}
			var b bytes.Buffer
			writeIndex(&b, lib, cov)
			if err := os.WriteFile(filepath.Join(out, "README.md"), b.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %d table pages and README.md to %s\n", len(tables)+len(lib.Decisions), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "directory to write the pages to (created if missing)")
	cmd.Flags().StringVar(&coverage, "coverage", "", "JSON file mapping table → row → scenario links")
	cmd.Flags().StringVar(&features, "features", "", "directory of .feature files whose @row tags give the scenario links")
	return cmd
}

// coverageFile maps table name → row id → scenario links.
type coverageFile map[string]map[string][]string

func readCoverage(path string) (coverageFile, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cov coverageFile
	if err := json.Unmarshal(data, &cov); err != nil {
		return nil, fmt.Errorf("%s: %v (want {\"table\": {\"row\": [\"file:line scenario\", ...]}})", path, err)
	}
	if cov == nil {
		cov = coverageFile{}
	}
	return cov, nil
}

// warnCoverage reports links to tables and rows that do not exist, which
// usually means a row was renamed.
func warnCoverage(w io.Writer, lib *engine.Library, cov coverageFile) {
	for _, tn := range sortedKeys(cov) {
		if d := lib.Decision(tn); d != nil {
			for _, id := range sortedKeys(cov[tn]) {
				if d.Row(id) == nil {
					fmt.Fprintf(w, "krtt: warning: coverage names row %q of table %s, which does not exist\n", id, tn)
				}
			}
			continue
		}
		t := lib.Table(tn)
		if t == nil {
			fmt.Fprintf(w, "krtt: warning: coverage names table %q, which was not loaded\n", tn)
			continue
		}
		for _, id := range sortedKeys(cov[tn]) {
			if t.Row(id) == nil {
				fmt.Fprintf(w, "krtt: warning: coverage names row %q of table %s, which does not exist\n", id, tn)
			}
		}
	}
}

// renderOptions gives a table its coverage; with a coverage file every
// table gets a Scenarios column, even when no scenario covers it.
func renderOptions(cov coverageFile, t *engine.Table) render.Options {
	if cov == nil {
		return render.Options{}
	}
	rows := cov[t.Name]
	if rows == nil {
		rows = map[string][]string{}
	}
	return render.Options{Coverage: rows}
}

// renderDecisionOptions gives a decision table its coverage, as
// renderOptions does for a transition table.
func renderDecisionOptions(cov coverageFile, d *engine.DecisionTable) render.Options {
	if cov == nil {
		return render.Options{}
	}
	rows := cov[d.Name]
	if rows == nil {
		rows = map[string][]string{}
	}
	return render.Options{Coverage: rows}
}

// pageName is the file a table's page is written to.
func pageName(t *engine.Table) string { return pageFile(t.Name) }

func pageFile(table string) string {
	return strings.NewReplacer("/", "_", `\`, "_", " ", "_").Replace(table) + ".md"
}

func writeIndex(b *bytes.Buffer, lib *engine.Library, cov coverageFile) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	tables := lib.Tables()
	rows := 0
	for _, t := range tables {
		rows += len(t.Rows)
	}
	p("# KRTT tables\n\n")
	p("Generated by `krtt docs`; edit the YAML tables, not these pages.\n\n")
	p("%d tables, %d rows. Within a set, tables are consulted in the order shown: the first table with a matching row decides.\n\n", len(tables), rows)
	p("| Table | Title | Set | Order | Rows |")
	if cov != nil {
		p(" Rows with scenarios |")
	}
	p("\n|:---|:---|:---|:---|---:|")
	if cov != nil {
		p("---:|")
	}
	p("\n")
	for _, s := range lib.Sets {
		for i, t := range s.Tables {
			p("| [%s](%s) | %s | `%s` | %d of %d | %d |", t.Name, pageName(t), cell(t.Title), s.Name, i+1, len(s.Tables), len(t.Rows))
			if cov != nil {
				covered := 0
				for _, r := range t.Rows {
					if len(cov[t.Name][r.ID]) > 0 {
						covered++
					}
				}
				p(" %d of %d |", covered, len(t.Rows))
			}
			p("\n")
		}
	}
	if len(lib.Decisions) == 0 {
		return
	}
	p("\nDecision tables give one verdict per item (stateless, no states):\n\n")
	p("| Table | Title | Consulted by | Rows |")
	if cov != nil {
		p(" Rows with scenarios |")
	}
	p("\n|:---|:---|:---|---:|")
	if cov != nil {
		p("---:|")
	}
	p("\n")
	for _, d := range lib.Decisions {
		by := "-"
		if d.SetName != "" {
			by = "`" + d.SetName + "`"
		}
		p("| [%s](%s) | %s | %s | %d |", d.Name, pageFile(d.Name), cell(d.Title), by, len(d.Rows))
		if cov != nil {
			covered := 0
			for _, r := range d.Rows {
				if len(cov[d.Name][r.ID]) > 0 {
					covered++
				}
			}
			p(" %d of %d |", covered, len(d.Rows))
		}
		p("\n")
	}
}

func cell(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "|", `\|`))
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
