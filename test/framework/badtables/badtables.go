// Package badtables lists the malformed table fixtures under
// test/framework/badtables/testdata/bad and what each must be refused with, so the loader test
// (package tables), `krtt lint` (cmd/krtt) and `krtt-operator --tables`
// (cmd/krtt-operator) check the same catalog.
package badtables

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// Case is one malformed table set: a directory holding machine.yaml, and the
// error findings it must produce, one per line, with paths relative to Dir.
type Case struct {
	Name string
	Dir  string
	// Row is the row every finding must name, or "" when the problem is not
	// in a row (a YAML syntax error, the document's kind or apiVersion, a
	// state no row reaches, a combination no row covers).
	Row string
	// Want holds the error lines (left out: the cut-down set leaves most of
	// the registry unused, which lint reports as warnings, and most of the
	// registry's facts undeclared, which Errors drops; see cutDown).
	Want []string
}

// rows names the row each fixture's findings are about.
var rows = map[string]string{
	"anchor_alias":         "", // two rows: the anchor in R02, the alias in R04
	"bad_condition_status": "R03",
	"bad_duration":         "R02",
	"deadend":              "",
	"duplicate_id":         "R02",
	"gap":                  "",
	"merge_key":            "", // the anchor in R02, the merge key and alias in R03
	"missing_columns":      "R04",
	"overlap":              "R04",
	"repeated_field":       "R04",
	"syntax":               "",
	"unknown_action":       "R02",
	"unknown_fact":         "R02",
	"unknown_field":        "R02",
	"unknown_state":        "R03",
	"unknown_value":        "R03",
	"unreachable":          "",
	"wrong_apiversion":     "",
	"wrong_kind":           "",
	"wrong_type":           "R01",
}

// Root is test/framework/badtables/testdata.
func Root() string {
	return filepath.Join(localcp.RepoRoot(), "test", "framework", "badtables", "testdata")
}

// GoldenFile is where a case's expected findings are kept.
func GoldenFile(c Case) string { return filepath.Join(c.Dir, "want.golden") }

// Cases reads every fixture under test/framework/badtables/testdata/bad with its golden. It
// fails when a fixture directory is not listed above, or the reverse.
func Cases() ([]Case, error) {
	dirs, err := filepath.Glob(filepath.Join(Root(), "bad", "*"))
	if err != nil {
		return nil, err
	}
	var out []Case
	seen := map[string]bool{}
	for _, d := range dirs {
		name := filepath.Base(d)
		row, ok := rows[name]
		if !ok {
			return nil, fmt.Errorf("fixture %s is not listed in test/framework/badtables", name)
		}
		seen[name] = true
		c := Case{Name: name, Dir: d, Row: row}
		b, err := os.ReadFile(GoldenFile(c))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		c.Want = Lines(string(b))
		out = append(out, c)
	}
	for name := range rows {
		if !seen[name] {
			return nil, fmt.Errorf("fixture test/framework/badtables/testdata/bad/%s is missing", name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Huge writes a table file just over engine.MaxFileBytes into dir (it is
// generated, not kept in the repository) and returns the line it must be
// refused with, relative to dir.
func Huge(dir string) (string, error) {
	var b strings.Builder
	b.WriteString("apiVersion: krtt.dev/v1alpha1\nkind: TableSet\nmetadata:\n  name: machine\nspec:\n  description: >-\n")
	for b.Len() <= engine.MaxFileBytes {
		b.WriteString("    a description that goes on and on and on and on and on and on and on and on\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "machine.yaml"), []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("machine.yaml:1:1: error schema: file is %d bytes, more than the %d-byte limit for a table file; "+
		"split the tables over several files, or check that this is the file you meant", b.Len(), engine.MaxFileBytes), nil
}

// Lines splits output into its non-empty lines.
func Lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// cutDown is the error every fixture gets for each fact of the Machine
// registry it does not declare: each is a cut-down Machine set, so a
// golden of its own problem leaves them out.
const cutDown = " but no table declares it; "

// Errors keeps the error findings of lint-style output, with dir's path
// (as the tool printed it) taken off the front so goldens do not depend on
// where the test runs.
func Errors(output, dir string) []string {
	var out []string
	for _, l := range Lines(output) {
		if !strings.Contains(l, ": error ") || strings.Contains(l, cutDown) {
			continue
		}
		out = append(out, strings.TrimPrefix(l, dir+string(filepath.Separator)))
	}
	return out
}
