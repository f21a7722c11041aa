// Command krtt checks, renders and explains KRTT transition tables
// (Kubernetes Reconciler Transition Tables).
//
//	krtt lint [--catalog FILE] FILE|DIR...
//	krtt render --format markdown|mermaid|dot [--table NAME] FILE|DIR...
//	krtt decide [--catalog FILE] --table FILE|DIR --state S --fact name=value... [--name TABLE] [-o json]
//	krtt docs --out DIR [--coverage FILE] FILE|DIR...
//	krtt init --module PATH --krtt DIR [DIR]
//	krtt create controller NAME --kind KIND
package main

import (
	"errors"
	"fmt"
	"github.com/krtt-dev/krtt/actions"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krtt-dev/krtt/engine"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitCode ends a command with a status and nothing more to print.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// usageError is a mistake in the command line; krtt exits with 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// run executes krtt with the arguments and returns the exit status: 0 on
// success, 1 when the tables have errors or no row fires, 2 on a usage
// error.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var code exitCode
	var usage usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "krtt: %v\n", err)
		fmt.Fprintf(stderr, "run 'krtt help' for usage\n")
		return 2
	default:
		fmt.Fprintf(stderr, "krtt: %v\n", err)
		return 1
	}
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "krtt",
		Short: "Check, render and explain KRTT transition tables",
		Long: `krtt works with KRTT transition tables: YAML files whose rows read
Observed Status | Desired Spec | Trigger / Condition | Reconciliation Action | Resulting Status
next to the states, facts and actions a controller runs them with.
See docs/table-format.md for the format.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&catalogFile, "catalog", "",
		"check and describe tables with the registries of a catalog file (JSON or YAML, written by engine.WriteCatalogFile) instead of krtt's own")
	root.AddCommand(lintCmd(stdout), renderCmd(stdout, stderr), decideCmd(stdout, stderr), docsCmd(stdout, stderr))
	root.AddCommand(explainCmd(stdout, stderr), rolloutCmd(stdout))
	root.AddCommand(initCmd(stdout), createCmd(stdout))
	root.AddCommand(describeCmd(stdout))
	return root
}

// unknownRegistry reports whether a table set names a registry the
// catalogs lack.
func unknownRegistry(fs engine.Findings) bool {
	for _, f := range fs {
		if f.Check == "registry" && strings.HasPrefix(f.Message, "no registry ") {
			return true
		}
	}
	return false
}

// catalogFile is --catalog: a catalog file a controller binary wrote.
var catalogFile string

// catalogs are the registries tables are checked and described with: the
// ones of --catalog, else those krtt's own controllers are built with.
func catalogs() (map[string]*engine.Catalog, error) {
	if catalogFile == "" {
		return actions.Catalogs(), nil
	}
	return engine.ReadCatalogFile(catalogFile)
}

// needPaths checks that a command got at least one file or directory.
func needPaths(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usagef("%s needs at least one FILE or DIR", cmd.Name())
	}
	return nil
}

// load loads tables and prints the loader's findings to w when it fails.
func load(w io.Writer, paths []string) (*engine.Library, error) {
	lib, fs := engine.LoadPaths(paths...)
	if lib == nil || fs.HasErrors() {
		for _, f := range fs {
			fmt.Fprintln(w, f)
		}
		fmt.Fprintf(w, "krtt: the tables did not load (%d errors); run krtt lint for details\n", len(fs.Errors()))
		return nil, exitCode(1)
	}
	return lib, nil
}

// loadChecked loads tables and checks them with the catalogs, as the
// controller that runs them would refuse them: findings are printed to w,
// and errors refuse the tables while warnings do not.
func loadChecked(w io.Writer, cats map[string]*engine.Catalog, paths []string) (*engine.Library, error) {
	lib, err := load(w, paths)
	if err != nil {
		return nil, err
	}
	fs := engine.Check(lib, cats)
	for _, f := range fs {
		fmt.Fprintln(w, f)
	}
	if fs.HasErrors() {
		where := strings.Join(paths, " ")
		return nil, fmt.Errorf("the tables in %s have %d errors; krtt lint %s shows them", where, len(fs.Errors()), lintArgs(where))
	}
	return lib, nil
}

// lintArgs is the krtt lint command line that shows the findings of
// tables checked with the catalogs in use.
func lintArgs(paths string) string {
	if catalogFile != "" {
		return "--catalog " + catalogFile + " " + paths
	}
	return paths
}

// pickTables returns every table of the library, or the named one.
func pickTables(lib *engine.Library, name string) ([]*engine.Table, error) {
	if name == "" {
		return lib.Tables(), nil
	}
	if t := lib.Table(name); t != nil {
		return []*engine.Table{t}, nil
	}
	return nil, usagef("no table %q; loaded: %s", name, strings.Join(tableNames(lib), ", "))
}

func tableNames(lib *engine.Library) []string {
	var out []string
	for _, t := range lib.Tables() {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// lintCmd: krtt lint FILE|DIR...
func lintCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE|DIR...",
		Short: "Load and check tables; exit 1 when there are errors",
		Long: `lint loads the tables and runs every check on them: schema and
references, determinism, masking, completeness, reachability, results and the
registries krtt knows. It prints one line per finding, then a summary. The
exit status is 0 when there are no errors (warnings are allowed), 1 otherwise.

krtt knows the registries of its own controllers. A controller built on
krtt has its own: its binary writes them to a catalog file
(engine.WriteCatalogFile), and --catalog FILE checks its tables' facts,
actions, guards and status fields against them.`,
		Args: needPaths,
		RunE: func(cmd *cobra.Command, args []string) error {
			cats, err := catalogs()
			if err != nil {
				return err
			}
			lib, fs := engine.LoadPaths(args...)
			all := append(engine.Findings(nil), fs...)
			if lib != nil && !fs.HasErrors() {
				all = append(all, engine.Check(lib, cats)...)
			}
			all.Sort()
			for _, f := range all {
				fmt.Fprintln(stdout, f)
			}
			tables, rows := 0, 0
			if lib != nil {
				for _, t := range lib.Tables() {
					tables++
					rows += len(t.Rows)
				}
				for _, d := range lib.Decisions {
					tables++
					rows += len(d.Rows)
				}
			}
			errs := len(all.Errors())
			fmt.Fprintf(stdout, "%d tables, %d rows: %d errors, %d warnings\n", tables, rows, errs, len(all)-errs)
			if catalogFile == "" && unknownRegistry(all) {
				fmt.Fprintln(stdout, "krtt knows only its own registries; for a controller of yours, write its catalog file (engine.WriteCatalogFile) and pass --catalog FILE")
			}
			if errs > 0 {
				return exitCode(1)
			}
			return nil
		},
	}
}
