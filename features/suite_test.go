// Package features holds the behaviour specs of the krtt controllers
// (Machine, MachineSet), written in Gherkin and run against a real
// kube-apiserver and etcd with the operator in-process (test/framework/harness).
// Every row of every table of every set must fire in at least one scenario;
// TestFeatures fails otherwise.
package features

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cucumber/godog"
	"github.com/spf13/pflag"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/krtt-dev/krtt/test/framework/harness"
)

var opts = godog.Options{
	Format: "progress",
	Strict: true,
	// Scenarios use their own namespaces; those that restart the operator
	// are tagged @serial and run alone (see exclusive in steps_test.go).
	Concurrency: 2,
	Paths:       []string{"."},
	Output:      os.Stdout,
}

func init() {
	godog.BindCommandLineFlags("godog.", &opts)
}

// TestMain parses the godog flags (for example --godog.format=pretty,
// --godog.tags=@row:machine-errors:E08, or feature paths as arguments) next
// to the go test flags.
func TestMain(m *testing.M) {
	pflag.Parse()
	if err := pflag.ParseSkippedFlags(os.Args[1:], flag.CommandLine); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if args := pflag.Args(); len(args) > 0 {
		opts.Paths = args
	}
	os.Exit(m.Run())
}

// TestFeatures runs every *.feature file in this directory against one
// harness and checks that every table row is exercised.
func TestFeatures(t *testing.T) {
	h, err := harness.StartAlone()
	if err != nil {
		t.Fatalf("start harness: %v", err)
	}
	defer func() {
		if err := h.Stop(); err != nil {
			t.Errorf("stop harness: %v", err)
		}
	}()

	cov := newCoverage(h)
	h.Subscribe(cov.record)

	o := opts
	o.TestingT = t
	if len(o.Paths) == 0 {
		o.Paths = []string{"."}
	}
	suite := godog.TestSuite{
		Name: "krtt-machine",
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			registerSteps(sc, h, cov)
		},
		Options: &o,
	}
	status := suite.Run()
	if status != 0 {
		t.Errorf("godog exited with status %d", status)
	}

	// Rows may fire a little after a scenario's last step (for example N01
	// once a Machine is gone); coverage is computed over everything recorded.
	report := cov.report()
	fmt.Fprintf(os.Stdout, "\nRow coverage (every row of every table of every set the operator runs):\n%s", report.String())
	if os.Getenv("KRTT_WRITE_COVERAGE") == "1" {
		if err := report.writeJSON("coverage.json"); err != nil {
			t.Errorf("write coverage.json: %v", err)
		}
	}
	// The actions marked Pure or WritesThrough kept their word in every
	// scenario; an audit that saw no write-through write is not wired.
	if v := h.Audit.Violations(); len(v) > 0 {
		t.Errorf("%d writes broke their action's marker:\n%s", len(v), strings.Join(v, "\n"))
	}
	through := h.Audit.WritesThrough()
	fmt.Fprintf(os.Stdout, "Writes of write-through actions (audited): %s\n", strings.Join(through, ", "))
	if len(through) == 0 {
		t.Error("the write audit saw no write of a write-through action: it does not see the operator's requests")
	}
	if n := report.missingCount(); n > 0 {
		t.Errorf("%d table rows never fired in any scenario:\n%s", n, report.missingList())
	}
	// An observation the tables declare impossible is an observer's bug
	// (the alert KrttImpossibleFacts pages on it): no scenario may make one.
	if hits, err := impossibleFacts(); err != nil {
		t.Errorf("read krtt_impossible_facts_total: %v", err)
	} else if len(hits) > 0 {
		t.Errorf("observations fell into combinations the tables declare impossible (krtt_impossible_facts_total):\n%s", strings.Join(hits, "\n"))
	}
}

// impossibleFacts lists the non-zero krtt_impossible_facts_total series of
// the in-process operator as "controller impossible: count".
func impossibleFacts() ([]string, error) {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range families {
		if f.GetName() != "krtt_impossible_facts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if n := m.GetCounter().GetValue(); n > 0 {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				out = append(out, fmt.Sprintf("%s %s: %v", labels["controller"], labels["impossible"], n))
			}
		}
	}
	return out, nil
}
