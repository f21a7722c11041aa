package main

import (
	"errors"
	"fmt"
	"github.com/krtt-dev/krtt/actions"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/test/framework/badtables"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// runMainEnv makes the test binary run the operator's main instead of the
// tests, so the test sees exactly what a user starting the binary sees.
const runMainEnv = "KRTT_OPERATOR_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The operator refuses to start with a --tables directory that has a
// finding, before it looks for a cluster, and prints the same file:line:col
// findings as the loader and `krtt lint` for every fixture of the catalog.
func TestOperatorRefusesBadTables(t *testing.T) {
	cases, err := badtables.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if len(c.Want) == 0 {
				t.Fatalf("%s has no findings to expect", badtables.GoldenFile(c))
			}
			operatorRefuses(t, c.Dir, c.Want)
		})
	}
	t.Run("huge_file", func(t *testing.T) {
		dir := t.TempDir()
		want, err := badtables.Huge(dir)
		if err != nil {
			t.Fatal(err)
		}
		operatorRefuses(t, dir, []string{want})
	})
}

// operatorRefuses starts the operator on dir and wants exactly the error
// findings want, paths relative to dir.
func operatorRefuses(t *testing.T, dir string, want []string) {
	t.Helper()
	out := refusedOutput(t, dir)
	if got := badtables.Errors(out, dir); !slices.Equal(got, want) {
		t.Errorf("--- got\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// refusedOutput starts the operator on dir (the test binary re-run as the
// operator, so nothing is built per case), wants exit status 1 saying the
// tables were refused, and returns what it printed.
func refusedOutput(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--tables", dir, "--metrics-bind-address=0", "--health-probe-bind-address=0")
	// No cluster at all: the tables must be refused before a config is needed.
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("want exit status 1, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "the tables have lint findings") {
		t.Errorf("output does not say why it stopped:\n%s", out)
	}
	return string(out)
}

// --tables DIR runs every controller's tables from DIR, the Cluster and
// MachineSet sets as well as the Machine set: a copy of the shipped tables
// with one row of either broken is refused before a cluster is needed, with
// the file and line of the broken row.
func TestOperatorRefusesBrokenSetInTablesDir(t *testing.T) {
	for _, tc := range []struct {
		name, file, row, when string
	}{
		{"cluster", filepath.Join("cluster", "cluster.yaml"), "K02", "when: {clusterFound: true, workloadCluster: Connected}"},
		{"machineset", filepath.Join("machineset", "normal.yaml"), "", "when: {machineSetFound: false}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(localcp.RepoRoot(), "transitions"))); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.file)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			before, _, found := strings.Cut(string(raw), tc.when)
			if !found {
				t.Fatalf("%s has no %q to break", tc.file, tc.when)
			}
			line := strings.Count(before, "\n") + 1
			broken := strings.Replace(string(raw), tc.when, strings.TrimSuffix(tc.when, "}")+", noSuchFact: true}", 1)
			if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
			out := refusedOutput(t, dir)
			want := fmt.Sprintf("%s:%d:", path, line)
			if !strings.Contains(out, want) || !strings.Contains(out, `unknown fact "noSuchFact"`) {
				t.Errorf("output does not name %s and the unknown fact:\n%s", want, out)
			}
		})
	}
}

// The sets --tables DIR loads come from DIR: a Cluster table set whose
// description was changed there is the one the operator gets.
func TestLoadSetsReadsEveryControllerFromDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(localcp.RepoRoot(), "transitions"))); err != nil {
		t.Fatal(err)
	}
	for _, c := range actions.Controllers {
		path := filepath.Join(dir, c.Name, c.Name+".yaml")
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(raw), "  description: >-\n", "  description: >-\n    FROM-DIR\n", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sets, err := actions.LoadSets(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range actions.Controllers {
		if s := sets[c.Name]; s == nil || !strings.HasPrefix(s.Description, "FROM-DIR") {
			t.Errorf("set %s was not loaded from %s", c.Name, dir)
		}
	}
}

// A --additional-sync-machine-labels or -annotations expression that is not
// a regular expression stops the operator before it looks for a cluster,
// naming the flag and each bad expression.
func TestOperatorRefusesBadSyncExpression(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--additional-sync-machine-labels", "^tier$,a[", "--additional-sync-machine-annotations", "(b",
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("want exit status 2, got %v\n%s", err, out)
	}
	for _, want := range []string{`--additional-sync-machine-labels "a[" is not a regular expression`, `--additional-sync-machine-annotations "(b" is not a regular expression`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not say %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), `"^tier$"`) {
		t.Errorf("a good expression was named as bad:\n%s", out)
	}
}
