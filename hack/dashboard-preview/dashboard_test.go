package main

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"namespace": "ns1", "job": "krtt", "__rate_interval": "12s", "datasource": "preview"}
	cases := []struct{ in, want string }{
		{`rate(x_total{namespace="$namespace"}[$__rate_interval])`, `rate(x_total{namespace="ns1"}[12s])`},
		{`x{namespace=~"${namespace}", job="[[job]]"}`, `x{namespace=~"ns1", job="krtt"}`},
		{`x{namespace=~"${namespace:regex}"}`, `x{namespace=~"ns1"}`},
		// $1 in label_replace and a regex anchor are not variables.
		{`label_replace(x, "n", "$1", "name", "(.*)")`, `label_replace(x, "n", "$1", "name", "(.*)")`},
		{`x{name=~"^m.*$"}`, `x{name=~"^m.*$"}`},
		{`max by (phase) (krtt_machines)`, `max by (phase) (krtt_machines)`},
	}
	for _, c := range cases {
		got, err := Substitute(c.in, vars)
		if err != nil {
			t.Errorf("Substitute(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Substitute(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	_, err := Substitute(`x{pod="$pod", a="${zone}", n="$namespace"}`, vars)
	if err == nil || !strings.Contains(err.Error(), "pod, zone") {
		t.Errorf("unknown variables: err = %v, want one naming pod, zone", err)
	}
}

func TestBuiltins(t *testing.T) {
	start := time.Unix(1000, 0)
	w := Window{Start: start, End: start.Add(2 * time.Minute), Step: 3 * time.Second, ScrapeInterval: 3 * time.Second}
	b := w.Builtins()
	for k, want := range map[string]string{
		"__interval": "3s", "__interval_ms": "3000", "__rate_interval": "12s",
		"__range": "2m", "__range_s": "120", "__range_ms": "120000",
	} {
		if b[k] != want {
			t.Errorf("$%s = %q, want %q", k, b[k], want)
		}
	}
	// A step longer than three scrape intervals: the step plus one.
	w.Step = 30 * time.Second
	if got := w.Builtins()["__rate_interval"]; got != "33s" {
		t.Errorf("$__rate_interval with a 30s step = %q, want 33s", got)
	}
	w.Step = 1500 * time.Millisecond
	if got := w.Builtins()["__interval"]; got != "1s500ms" {
		t.Errorf("$__interval of 1.5s = %q, want 1s500ms", got)
	}
}

func TestDashboardVariables(t *testing.T) {
	var d Dashboard
	d.Templating.List = []Variable{
		{Name: "datasource", Type: "datasource", Query: "prometheus"},
		{Name: "namespace", Type: "query"},
		{Name: "pod", Type: "custom"},
	}
	d.Templating.List[2].Current.Value = []any{"a.1", "b"}
	v := d.DashboardVariables()
	if v["datasource"] != "preview" || v["namespace"] != ".*" || v["pod"] != `a\.1|b` {
		t.Errorf("variables = %v", v)
	}
}

func TestAllPanelsExpandsCollapsedRows(t *testing.T) {
	d := Dashboard{Panels: []Panel{
		{Title: "a"},
		{Title: "row", Type: "row", Panels: []Panel{{Title: "b"}, {Title: "c"}}},
		{Title: "d"},
	}}
	var got []string
	for _, p := range d.AllPanels() {
		got = append(got, p.Title)
	}
	if strings.Join(got, ",") != "a,row,b,c,d" {
		t.Errorf("panels = %v", got)
	}
}

func TestLegendName(t *testing.T) {
	ls := labels.FromStrings("namespace", "ns", "name", "m1", "state", "DrainingNode")
	cases := []struct{ format, want string }{
		{"{{namespace}}/{{name}} {{state}}", "ns/m1 DrainingNode"},
		{"{{ name }}", "m1"},
		{"{{missing}}x", "x"},
		{"", `{name="m1", namespace="ns", state="DrainingNode"}`},
		{"__auto", `{name="m1", namespace="ns", state="DrainingNode"}`},
	}
	for _, c := range cases {
		if got := LegendName(c.format, ls); got != c.want {
			t.Errorf("LegendName(%q) = %q, want %q", c.format, got, c.want)
		}
	}
	if got := LegendName("", labels.EmptyLabels()); got != "value" {
		t.Errorf("LegendName of no labels = %q", got)
	}
}
