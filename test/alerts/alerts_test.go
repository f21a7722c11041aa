// Package alerts tests config/prometheus's alerts and config/grafana's
// dashboard with Prometheus's own PromQL engine and parser. It is a module
// of its own so the operator does not depend on Prometheus.
//
// Every alert has cases: series (promqltest's load notation) and what its
// expression returns at an instant, including cases where it must return
// nothing. The metric names the alerts and the dashboard read are kept in
// testdata/used-metrics.txt (go test -update rewrites it), which
// test/security checks against the operator's metrics registry.
package alerts

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite testdata/used-metrics.txt")

var root = filepath.Join("..", "..")

// alertCases are promqltest scripts per alert; {{expr}} stands for the
// alert's expression. Series are loaded at 1m steps from time 0.
var alertCases = map[string]string{
	"KrttMachineDeletionStepStuck": `
load 1m
  krtt_machine_deletion_step_seconds{pod="a", namespace="ns", name="m1", state="WaitingForPreTerminateHook"} 800+60x5
  krtt_machine_deletion_step_seconds{pod="b", namespace="ns", name="m1", state="WaitingForPreTerminateHook"} 790+60x5
  krtt_machine_deletion_step_seconds{pod="a", namespace="ns", name="m2", state="DrainingNode"} 5000x5
  krtt_machine_deletion_step_seconds{pod="a", namespace="ns", name="m3", state="WaitingForInfrastructureDeletion"} 10+60x5

eval instant at 1m {{expr}}

eval instant at 2m {{expr}}
  {namespace="ns", name="m1", state="WaitingForPreTerminateHook"} 920
`,
	"KrttMachineDrainHeld": `
load 1m
  krtt_machine_deletion_step_seconds{pod="a", namespace="ns", name="m1", state="DrainingNode"} 1700+60x5
  krtt_machine_deletion_step_seconds{pod="a", namespace="ns", name="m2", state="WaitingForPreTerminateHook"} 9000x5

eval instant at 1m {{expr}}

eval instant at 2m {{expr}}
  {namespace="ns", name="m1"} 1820
`,
	"KrttMachineSetDeletionStuck": `
load 1m
  krtt_machineset_deletion_step_seconds{pod="a", namespace="ns", name="s1", state="WaitingForMachines"} 1780+60x5

eval instant at 0m {{expr}}

eval instant at 1m {{expr}}
  {namespace="ns", name="s1", state="WaitingForMachines"} 1840
`,
	"KrttMachinesFailed": `
load 1m
  krtt_machines{pod="a", phase="Failed"} 0 0 2 2
  krtt_machines{pod="b", phase="Failed"} 0 0 2 2
  krtt_machines{pod="a", phase="Running"} 5 5 5 5

eval instant at 1m {{expr}}

eval instant at 2m {{expr}}
  {} 2
`,
	// W01 fires every 30s per Machine while the cluster does not answer.
	"KrttWorkloadClusterUnreachable": `
load 30s
  krtt_transitions_total{pod="a", controller="machine", table="machine-workload-cluster", row="W01", outcome="InProgress"} 0x20 1+1x20 41x20
  krtt_transitions_total{pod="a", controller="machine", table="machine-normal", row="N01", outcome="Done"} 0+1x60

eval instant at 9m {{expr}}

eval instant at 15m {{expr}}
  {row="W01"} 10

eval instant at 30m {{expr}}
`,
	"KrttImpossibleFacts": `
load 5m
  krtt_impossible_facts_total{pod="a", controller="machine", impossible="unreachableNeedsNode"} 0 0 1 1
  krtt_impossible_facts_total{pod="a", controller="cluster", impossible="x"} 3 3 3 3

eval instant at 5m {{expr}}

eval instant at 15m {{expr}}
  {controller="machine", impossible="unreachableNeedsNode"} 1
`,
	"KrttReconcileErrors": `
load 1m
  krtt_reconcile_errors_total{pod="a", controller="machine", table="machine-deletion", row="D05"} 0x10 1+1x10
  krtt_reconcile_errors_total{pod="a", controller="cluster", table="cluster-status", row="K02"} 4x20

eval instant at 10m {{expr}}

eval instant at 20m {{expr}}
  {controller="machine", table="machine-deletion", row="D05"} 0.011111111111111112
`,
	"KrttTransitionsUnwritten": `
load 1m
  krtt_transitions_total{pod="a", controller="machine", table="machine-normal", row="N01", outcome="Unwritten"} 0+1x10 10+30x10
  krtt_transitions_total{pod="a", controller="machine", table="machine-normal", row="N01", outcome="Done"} 0+100x20

eval instant at 10m {{expr}}

eval instant at 20m {{expr}}
  {controller="machine"} 0.4666666666666666
`,
}

type alertRule struct {
	rulefmt.Rule
	group string
}

func loadRules(t *testing.T) []alertRule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Kind string    `yaml:"kind"`
		Spec yaml.Node `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Kind != "PrometheusRule" {
		t.Fatalf("alerts.yaml is a %q, want a PrometheusRule", pr.Kind)
	}
	// A PrometheusRule's spec is a Prometheus rule file: validate it as
	// Prometheus would load it.
	spec, err := yaml.Marshal(&pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatalf("alerts.yaml: %v", errs)
	}
	var out []alertRule
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out = append(out, alertRule{Rule: r, group: g.Name})
		}
	}
	return out
}

func TestAlerts(t *testing.T) {
	rules := loadRules(t)
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Alert == "" {
			t.Errorf("group %s: a recording rule (%s); only alerts belong here", r.group, r.Record)
			continue
		}
		seen[r.Alert] = true
		for _, k := range []string{"severity"} {
			if r.Labels[k] == "" {
				t.Errorf("%s has no %s label", r.Alert, k)
			}
		}
		if r.Annotations["summary"] == "" {
			t.Errorf("%s has no summary", r.Alert)
		}
		script, ok := alertCases[r.Alert]
		if !ok {
			t.Errorf("%s has no cases in alertCases", r.Alert)
			continue
		}
		t.Run(r.Alert, func(t *testing.T) {
			if strings.Count(script, "eval instant") < 2 || !hasEmptyEval(script) {
				t.Fatal("want at least one case where the alert fires and one where it does not")
			}
			promqltest.RunTest(t, strings.ReplaceAll(script, "{{expr}}", r.Expr), promqltest.NewTestEngine(t, false, 0, 100000))
		})
	}
	for name := range alertCases {
		if !seen[name] {
			t.Errorf("alertCases has %s, which alerts.yaml does not", name)
		}
	}
}

// hasEmptyEval reports whether some eval expects no result (an eval line
// followed by a blank line or the end).
func hasEmptyEval(script string) bool {
	lines := strings.Split(strings.TrimSpace(script), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "eval ") && (i+1 == len(lines) || strings.TrimSpace(lines[i+1]) == "") {
			return true
		}
	}
	return false
}

// dashboardExprs are the queries of every panel of the Grafana dashboard.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "config", "grafana", "krtt-operator.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, tg := range p.Targets {
			out[fmt.Sprintf("panel %q target %d", p.Title, i)] = tg.Expr
		}
	}
	return out
}

// TestUsedMetrics parses every alert and dashboard query and checks the
// metric names they read against testdata/used-metrics.txt.
func TestUsedMetrics(t *testing.T) {
	exprs := dashboardExprs(t)
	for _, r := range loadRules(t) {
		exprs["alert "+r.Alert] = r.Expr
	}
	p := parser.NewParser(parser.Options{})
	used := map[string]bool{}
	for where, e := range exprs {
		expr, err := p.ParseExpr(e)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		for _, sel := range parser.ExtractSelectors(expr) {
			name := ""
			for _, m := range sel {
				if m.Name == model.MetricNameLabel && m.Type == 0 {
					name = m.Value
				}
			}
			if name == "" {
				t.Errorf("%s: a selector without a metric name: %v", where, sel)
				continue
			}
			used[name] = true
		}
	}
	var names []string
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	file := filepath.Join("testdata", "used-metrics.txt")
	want := strings.Join(names, "\n") + "\n"
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is stale (go test -update rewrites it); the queries read:\n%s", file, want)
	}
	if !slices.Contains(names, "krtt_machines") {
		t.Error("no query reads krtt_machines: the parse found nothing?")
	}
}
