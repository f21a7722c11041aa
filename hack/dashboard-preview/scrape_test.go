package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
)

func openDB(t *testing.T) *tsdb.DB {
	t.Helper()
	db, err := tsdb.Open(filepath.Join(t.TempDir(), "tsdb"), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// scrapeBody is one exposition of a counter, a gauge per phase (Pending
// only while n < 3) and a histogram.
func scrapeBody(n int) string {
	var b strings.Builder
	b.WriteString("# HELP krtt_transitions_total Rows fired.\n# TYPE krtt_transitions_total counter\n")
	fmt.Fprintf(&b, "krtt_transitions_total{table=\"machine-normal\",row=\"N01\",outcome=\"Done\"} %d\n", 100+30*n)
	b.WriteString("# TYPE krtt_machines gauge\n")
	fmt.Fprintf(&b, "krtt_machines{phase=\"Running\"} %d\n", n)
	if n < 3 {
		b.WriteString("krtt_machines{phase=\"Pending\"} 2\n")
	}
	b.WriteString("# TYPE controller_runtime_reconcile_time_seconds histogram\n")
	fmt.Fprintf(&b, "controller_runtime_reconcile_time_seconds_bucket{controller=\"machine\",le=\"0.1\"} %d\n", 10*n)
	fmt.Fprintf(&b, "controller_runtime_reconcile_time_seconds_bucket{controller=\"machine\",le=\"1\"} %d\n", 20*n)
	fmt.Fprintf(&b, "controller_runtime_reconcile_time_seconds_bucket{controller=\"machine\",le=\"+Inf\"} %d\n", 20*n)
	fmt.Fprintf(&b, "controller_runtime_reconcile_time_seconds_sum{controller=\"machine\"} %d\n", 5*n)
	fmt.Fprintf(&b, "controller_runtime_reconcile_time_seconds_count{controller=\"machine\"} %d\n", 20*n)
	return b.String()
}

func TestIngestAndRangeQuery(t *testing.T) {
	db := openDB(t)
	sc := &Scraper{Store: db, Job: "krtt-operator", Instance: "127.0.0.1:9000"}
	t0 := time.Unix(1_700_000_000, 0)
	ctx := context.Background()
	for i := range 4 {
		if _, err := sc.Ingest(ctx, []byte(scrapeBody(i)), t0.Add(time.Duration(i)*10*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if sc.Scrapes != 4 || sc.Seen("krtt_machines") != 4 || sc.Seen("krtt_reconcile_errors_total") != 0 ||
		sc.Seen("controller_runtime_reconcile_time_seconds_bucket") != 4 {
		t.Errorf("scrapes %d, seen krtt_machines %d", sc.Scrapes, sc.Seen("krtt_machines"))
	}
	// A body that does not parse appends nothing.
	if _, err := sc.Ingest(ctx, []byte("krtt_machines{phase=\"Running\" 3\n"), t0.Add(35*time.Second)); err == nil {
		t.Error("malformed body: no error")
	}
	if sc.Scrapes != 4 {
		t.Errorf("a failed ingest counted: %d scrapes", sc.Scrapes)
	}

	w := Window{Start: t0, End: t0.Add(30 * time.Second), Step: 10 * time.Second, ScrapeInterval: 10 * time.Second}
	eng := NewEngine()
	p := Panel{Targets: []Target{
		{RefID: "A", Expr: `max by (phase) (krtt_machines)`, LegendFormat: "{{phase}}"},
		{RefID: "B", Expr: `sum by (job, instance) (rate(krtt_transitions_total[$__rate_interval]))`, LegendFormat: "{{job}} {{instance}}"},
		{RefID: "C", Expr: `histogram_quantile(0.5, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket[30s])))`},
		{RefID: "D", Expr: `sum(krtt_machines)`, Instant: true},
	}}
	res := Evaluate(ctx, eng, db, p, w, nil)
	if len(res) != 4 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Target.RefID, r.Err)
		}
	}

	// A: Pending was in the first three scrapes only; its staleness
	// marker ends it at the fourth rather than five minutes later.
	a := map[string][]Point{}
	for _, s := range res[0].Series {
		a[s.Name] = s.Points
	}
	if fmt.Sprint(a["Running"]) != fmt.Sprint([]Point{{t0.UnixMilli(), 0}, {t0.UnixMilli() + 10000, 1}, {t0.UnixMilli() + 20000, 2}, {t0.UnixMilli() + 30000, 3}}) {
		t.Errorf("Running = %v", a["Running"])
	}
	if len(a["Pending"]) != 3 || a["Pending"][2].T != t0.UnixMilli()+20000 {
		t.Errorf("Pending = %v, want three points ending at +20s", a["Pending"])
	}

	// B: 30 transitions every 10s is 3/s (the 40s window is extrapolated
	// from the 30s of samples), with the target's labels.
	if len(res[1].Series) != 1 || res[1].Series[0].Name != "krtt-operator 127.0.0.1:9000" {
		t.Fatalf("B = %+v", res[1].Series)
	}
	if v, ok := res[1].Series[0].Last(); !ok || math.Abs(v-3) > 1e-9 {
		t.Errorf("rate = %v, want 3", v)
	}
	if res[1].Expr != `sum by (job, instance) (rate(krtt_transitions_total[40s]))` {
		t.Errorf("B evaluated %q", res[1].Expr)
	}

	// C: half the observations are at or under 0.1s, so the median is at
	// the top of that bucket.
	if v, ok := res[2].Series[0].Last(); !ok || math.Abs(v-0.1) > 1e-9 {
		t.Errorf("median = %v, want 0.1", v)
	}
	if got := res[2].Metrics; len(got) != 1 || got[0] != "controller_runtime_reconcile_time_seconds_bucket" {
		t.Errorf("C metrics = %v", got)
	}

	// D: an instant query at the window's end.
	if len(res[3].Series) != 1 || len(res[3].Series[0].Points) != 1 || res[3].Series[0].Points[0].V != 3 {
		t.Errorf("D = %+v", res[3].Series)
	}
	if !labels.Equal(res[3].Series[0].Labels, labels.EmptyLabels()) {
		t.Errorf("D labels = %v", res[3].Series[0].Labels)
	}
}

func TestScrapeOverHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
			t.Errorf("Accept = %q", r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprint(w, scrapeBody(1))
	}))
	defer srv.Close()
	sc := &Scraper{Store: openDB(t)}
	n, err := sc.Scrape(context.Background(), srv.URL, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Errorf("%d samples, want 8", n)
	}

	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html></html>")
	}))
	defer html.Close()
	if _, err := sc.Scrape(context.Background(), html.URL, time.Unix(1_700_000_010, 0)); err == nil || !strings.Contains(err.Error(), "content type") {
		t.Errorf("HTML page: err = %v", err)
	}
}

// TestEvaluateShippedDashboard evaluates every query of the shipped
// dashboard over a storage with a little of every metric it reads: each
// must substitute, parse and run.
func TestEvaluateShippedDashboard(t *testing.T) {
	d, err := LoadDashboard(filepath.Join("..", "..", "config", "grafana", "krtt-operator.json"))
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	sc := &Scraper{Store: db, Job: "krtt-operator", Instance: "x:1"}
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 5 {
		if _, err := sc.Ingest(context.Background(), []byte(scrapeBody(i)), t0.Add(time.Duration(i)*3*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	w := Window{Start: t0, End: t0.Add(12 * time.Second), Step: 3 * time.Second, ScrapeInterval: 3 * time.Second}
	eng := NewEngine()
	panels, targets := 0, 0
	for _, p := range d.AllPanels() {
		panels++
		for _, r := range Evaluate(context.Background(), eng, db, p, w, d.DashboardVariables()) {
			targets++
			if r.Err != nil {
				t.Errorf("panel %q %s: %v", p.Title, r.Target.RefID, r.Err)
			}
			if len(r.Metrics) == 0 {
				t.Errorf("panel %q %s: no metric names found in %q", p.Title, r.Target.RefID, r.Expr)
			}
		}
	}
	if panels < 10 || targets < panels {
		t.Errorf("%d panels, %d targets", panels, targets)
	}
}

func TestNoDataReason(t *testing.T) {
	seen := map[string]int{"krtt_machine_deletion_step_seconds": 40}
	f := func(n string) int { return seen[n] }
	got := NoDataReason([]TargetResult{{Metrics: []string{"krtt_reconcile_errors_total"}}}, f, 40)
	if got != "No krtt_reconcile_errors_total series in any of the 40 scrapes: the operator reported none during this run." {
		t.Errorf("never seen: %q", got)
	}
	got = NoDataReason([]TargetResult{{Metrics: []string{"krtt_machine_deletion_step_seconds"}}}, f, 40)
	if !strings.Contains(got, "had series") || !strings.Contains(got, "none that the query selects") {
		t.Errorf("seen, not selected: %q", got)
	}
}
