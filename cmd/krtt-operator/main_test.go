package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/internal/badtables"
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
// finding, before it looks for a cluster, and prints file:line:col and row.
func TestOperatorRefusesBadTables(t *testing.T) {
	cases, err := badtables.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"overlap", "anchor_alias", "syntax"} {
		var c badtables.Case
		for _, cc := range cases {
			if cc.Name == name {
				c = cc
			}
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "--tables", c.Dir, "--metrics-bind-address=0", "--health-probe-bind-address=0")
			// No cluster at all: the tables must be refused before a config is needed.
			cmd.Env = append(os.Environ(), runMainEnv+"=1", "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("want exit status 1, got %v\n%s", err, out)
			}
			for _, want := range c.Want {
				if !strings.Contains(string(out), filepath.Join(c.Dir, want)) {
					t.Errorf("output lacks %q:\n%s", filepath.Join(c.Dir, want), out)
				}
			}
			if !strings.Contains(string(out), "the tables have lint findings") {
				t.Errorf("output does not say why it stopped:\n%s", out)
			}
		})
	}
}
