package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func secs(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

func TestPctIsNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Second
	}
	twoHundred := make([]time.Duration, 200)
	for i := range twoHundred {
		twoHundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value is every percentile", secs(7), 99, 7 * time.Second},
		{"p50 of 1..100", hundred, 50, 50 * time.Second},
		{"p95 of 1..100", hundred, 95, 95 * time.Second},
		{"p99 of 1..100", hundred, 99, 99 * time.Second},
		{"p100 is the maximum", hundred, 100, 100 * time.Second},
		{"p95 of 200 is rank 190", twoHundred, 95, 190 * time.Millisecond},
		{"p50 of 3 rounds the rank up", secs(1, 2, 3), 50, 2 * time.Second},
		{"p99 of 4 is the maximum", secs(1, 2, 3, 4), 99, 4 * time.Second},
	} {
		if got := pct(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: pct(%v) = %s, want %s", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestDurationsSortsAndSkipsMissing(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	names := []string{"a", "b", "c"}
	start := []time.Time{t0, t0.Add(time.Second), t0}
	end := map[string]time.Time{"a": t0.Add(5 * time.Second), "b": t0.Add(3 * time.Second)}
	got := durations(names, start, end)
	want := secs(2, 5)
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("durations = %v, want %v", got, want)
	}
}

const metricsBefore = `# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 10
rest_client_requests_total{code="404",host="127.0.0.1:6443",method="GET"} 2
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 4
rest_client_requests_total_other{method="GET"} 1000
workqueue_adds_total{name="machine"} 7
`

const metricsAfter = `rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 210
rest_client_requests_total{code="404",host="127.0.0.1:6443",method="GET"} 2
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 404
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 301 1700000000000
rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PATCH"} 99
`

func TestRequestAccounting(t *testing.T) {
	before, err := parseRequests(strings.NewReader(metricsBefore))
	if err != nil {
		t.Fatal(err)
	}
	if before["GET"] != 12 || before["POST"] != 4 || len(before) != 2 {
		t.Fatalf("before = %v, want GET 12 (both codes), POST 4, nothing from other metrics", before)
	}
	after, err := parseRequests(strings.NewReader(metricsAfter))
	if err != nil {
		t.Fatal(err)
	}
	per, total := perMachine(before, after, 200)
	want := map[string]float64{"GET": 1, "POST": 2, "PATCH": 2}
	if len(per) != len(want) {
		t.Fatalf("per Machine = %v, want %v", per, want)
	}
	for k, v := range want {
		if per[k] != v {
			t.Errorf("per Machine %s = %v, want %v", k, per[k], v)
		}
	}
	if total != 5 {
		t.Errorf("total per Machine = %v, want 5", total)
	}
	if got := verbs(per, map[string]float64{"WATCH": 1, "DELETE": 3}); strings.Join(got, ",") != "GET,POST,PATCH,DELETE,WATCH" {
		t.Errorf("verbs = %v, want the table order then the rest", got)
	}
}

func TestParseRequestsRefusesMetricsWithoutTheCounter(t *testing.T) {
	if _, err := parseRequests(strings.NewReader("workqueue_adds_total{name=\"x\"} 1\n")); err == nil {
		t.Fatal("want an error when rest_client_requests_total is missing (counting nothing would report 0 requests)")
	}
	if _, err := parseRequests(strings.NewReader(`rest_client_requests_total{method="GET"} many` + "\n")); err == nil || !strings.Contains(err.Error(), "many") {
		t.Fatalf("want an error naming the bad line, got %v", err)
	}
}

func TestParseStatCPU(t *testing.T) {
	// The command name holds a space and a ')' to show fields are counted
	// from the last ')'.
	line := "4242 (krtt op) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0 100 0 0"
	got, err := parseStatCPU(line)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3.25 {
		t.Fatalf("cpu = %v, want 3.25 (utime 250 + stime 75 ticks)", got)
	}
}

func result(name string, up, down float64, get, patch float64) Result {
	return Result{
		Controller:              name,
		CreateToRunning:         &Half{WallSeconds: up, P50Seconds: up / 2, P95Seconds: up * 0.9, P99Seconds: up},
		DeleteToGone:            &Half{WallSeconds: down, P50Seconds: down / 2, P95Seconds: down * 0.9, P99Seconds: down},
		RequestsPerMachine:      map[string]float64{"GET": get, "PATCH": patch},
		RequestsPerMachineTotal: get + patch,
		CPUSeconds:              10,
		CPUSecondsInclStart:     12,
		PeakRSSMiB:              100,
		Complete:                true,
	}
}

func TestCompareDividesPeerByBaseline(t *testing.T) {
	c := compare(result("krtt", 20, 30, 10, 20), result("capi", 30, 60, 5, 20))
	want := map[string]float64{
		"createToRunning.wallSeconds": 1.5,
		"deleteToGone.wallSeconds":    2,
		"deleteToGone.p50Seconds":     2,
		"requestsPerMachine.GET":      0.5,
		"requestsPerMachine.PATCH":    1,
		"requestsPerMachineTotal":     0.83,
		"cpuSeconds":                  1,
		"peakRSSMiB":                  1,
	}
	for fig, w := range want {
		got, ok := c.ratio(fig)
		if !ok || got != w {
			t.Errorf("ratio %s = %v (present %v), want %v", fig, got, ok, w)
		}
	}
	if c.Baseline != "krtt" || c.Peer != "capi" {
		t.Errorf("comparison is %s over %s, want capi over krtt", c.Peer, c.Baseline)
	}
}

func TestCompareLeavesOutWhatOneSideLacks(t *testing.T) {
	peer := result("capi", 30, 0, 5, 20)
	peer.DeleteToGone = nil
	peer.Complete = false
	peer.Error = "only 3 of 200 Machines gone"
	base := result("krtt", 20, 30, 0, 20)
	c := compare(base, peer)
	if _, ok := c.ratio("createToRunning.wallSeconds"); !ok {
		t.Error("the half both finished is compared")
	}
	for _, fig := range []string{"deleteToGone.wallSeconds", "requestsPerMachineTotal", "cpuSeconds", "peakRSSMiB", "requestsPerMachine.GET"} {
		if v, ok := c.ratio(fig); ok {
			t.Errorf("ratio %s = %v, want none (one side has no comparable figure)", fig, v)
		}
	}
}

func TestJSONShape(t *testing.T) {
	rep := Report{N: 200, PodsPerNode: 3, MachineConcurrency: 10, SimHeartbeatSeconds: 60, APIServerVersion: "v1.37.0",
		Started: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Results: []Result{result("krtt", 20, 30, 10, 20), result("capi", 30, 60, 5, 20)}}
	rep.Comparison = compare(rep.Results[0], rep.Results[1])
	var buf bytes.Buffer
	if err := writeJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, buf.String())
	}
	for _, k := range []string{"n", "podsPerNode", "machineConcurrency", "simHeartbeatSeconds", "apiServerVersion", "started", "results", "comparison"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("report has no %q", k)
		}
	}
	results, _ := doc["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("results = %v, want 2", doc["results"])
	}
	r0, _ := results[0].(map[string]any)
	for _, k := range []string{"controller", "createToRunning", "deleteToGone", "requestsPerMachine", "requestsPerMachineTotal", "cpuSeconds", "cpuSecondsInclStart", "peakRSSMiB", "complete"} {
		if _, ok := r0[k]; !ok {
			t.Errorf("result has no %q", k)
		}
	}
	half, _ := r0["createToRunning"].(map[string]any)
	for _, k := range []string{"wallSeconds", "p50Seconds", "p95Seconds", "p99Seconds"} {
		if _, ok := half[k].(float64); !ok {
			t.Errorf("createToRunning has no number %q: %v", k, half)
		}
	}
	if get, _ := r0["requestsPerMachine"].(map[string]any)["GET"].(float64); get != 10 {
		t.Errorf("requestsPerMachine.GET = %v, want 10", get)
	}
	comp, _ := doc["comparison"].(map[string]any)
	ratios, _ := comp["ratios"].([]any)
	if len(ratios) == 0 {
		t.Fatal("comparison has no ratios")
	}
	first, _ := ratios[0].(map[string]any)
	for _, k := range []string{"figure", "baseline", "peer", "peerOverBaseline"} {
		if _, ok := first[k]; !ok {
			t.Errorf("ratio has no %q: %v", k, first)
		}
	}
}

func TestTableHasARowPerControllerAndTheRatios(t *testing.T) {
	rep := Report{N: 200, PodsPerNode: 3, MachineConcurrency: 10, SimHeartbeatSeconds: 60, APIServerVersion: "v1.37.0",
		Results: []Result{result("krtt", 20, 30, 10, 20), result("capi", 30, 60, 5, 20)}}
	rep.Results[1].RequestsPerMachine["DELETE"] = 1
	rep.Comparison = compare(rep.Results[0], rep.Results[1])
	var buf bytes.Buffer
	writeTable(&buf, rep)
	lines := map[string]string{}
	for _, l := range strings.Split(buf.String(), "\n") {
		if f := strings.Split(l, " | "); len(f) > 1 {
			lines[strings.TrimPrefix(f[0], "| ")] = l
		}
	}
	head := lines["controller"]
	if !strings.Contains(head, "DELETE/Machine") || !strings.Contains(head, "GET/Machine") {
		t.Errorf("header lacks a verb one side used: %s", head)
	}
	if l := lines["krtt"]; !strings.Contains(l, "| 20.0s |") || !strings.Contains(l, "| 30.0s |") {
		t.Errorf("krtt row: %q", l)
	}
	ratio := lines["capi ÷ krtt"]
	if !strings.Contains(ratio, "| 1.50× |") || !strings.Contains(ratio, "| 2.00× |") || !strings.Contains(ratio, "| 0.50× |") {
		t.Errorf("ratio row: %q", ratio)
	}
	// krtt sent no DELETE: no ratio for it.
	if n := strings.Count(ratio, "—"); n != 1 {
		t.Errorf("ratio row has %d dashes, want 1 (DELETE): %q", n, ratio)
	}
}

func TestPollPredicates(t *testing.T) {
	running := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": "Running"}}}
	pending := &unstructured.Unstructured{Object: map[string]any{}}
	if !phaseIs("Running")(running) || phaseIs("Running")(pending) || phaseIs("Running")(nil) {
		t.Error("phaseIs(Running) wants a listed object in phase Running")
	}
	if !absent(nil) || absent(running) {
		t.Error("absent wants the object not listed")
	}
	if phaseOf(pending) != "no phase yet" || phaseOf(nil) != "not found" || phaseOf(running) != "Running" {
		t.Error("phaseOf")
	}
	if got := summary(map[string]int{"Provisioning": 2, "Pending": 5, "Deleting": 2}); got != "Pending: 5, Deleting: 2, Provisioning: 2" {
		t.Errorf("summary = %q", got)
	}
}

func TestCAPIRefusesAnUnversionedAPIServer(t *testing.T) {
	err := capiCanRun("v0.0.0-master+$Format:%H$", capiOptions{manager: "/nonexistent", crds: "/nonexistent"})
	if err == nil || !strings.Contains(err.Error(), "v1.20.0") || !strings.Contains(err.Error(), "make kube-apiserver-version") {
		t.Fatalf("want an error naming the minimum version and the fix, got %v", err)
	}
	err = capiCanRun("v1.37.0", capiOptions{manager: "/nonexistent/capi-manager", crds: "/nonexistent"})
	if err == nil || !strings.Contains(err.Error(), "make bench-peer") {
		t.Fatalf("a recent API server passes; then the missing manager binary is reported, got %v", err)
	}
}

func TestCompareSkipsABaselineThatRoundsToZero(t *testing.T) {
	c := compare(result("krtt", 20, 30, 0.02, 20), result("capi", 30, 60, 4.1, 20))
	if v, ok := c.ratio("requestsPerMachine.GET"); ok {
		t.Errorf("GET ratio = %v against a baseline shown as 0.0, want none", v)
	}
	if _, ok := c.ratio("requestsPerMachine.PATCH"); !ok {
		t.Error("PATCH is compared")
	}
}

func TestParseKinds(t *testing.T) {
	got, err := parseKinds(strings.NewReader(metricsBefore + `krtt_api_requests_total{resource="machines.cluster.krtt.dev",subresource="status",verb="patch"} 7
krtt_api_requests_total{resource="events.events.k8s.io",subresource="",verb="create"} 3
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"patch machines.cluster.krtt.dev/status": 7, "create events.events.k8s.io": 3}
	if len(got) != len(want) || got["patch machines.cluster.krtt.dev/status"] != 7 || got["create events.events.k8s.io"] != 3 {
		t.Errorf("parseKinds = %v, want %v", got, want)
	}
	none, err := parseKinds(strings.NewReader(metricsBefore))
	if err != nil || len(none) != 0 {
		t.Errorf("a controller without the counter gave %v, %v; want nothing and no error", none, err)
	}
}

func TestParseRows(t *testing.T) {
	got, err := parseRows(strings.NewReader(metricsBefore + `krtt_transitions_total{controller="machine",outcome="Done",row="N13",table="machine-normal"} 4
krtt_transitions_total{controller="machine",outcome="InProgress",row="D05",table="machine-deletion"} 9
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["machine machine-normal N13 Done"] != 4 || got["machine machine-deletion D05 InProgress"] != 9 {
		t.Errorf("parseRows = %v, want N13 Done 4 and D05 InProgress 9", got)
	}
}

func TestParseReconciles(t *testing.T) {
	got, err := parseReconciles(strings.NewReader(metricsBefore + `controller_runtime_reconcile_total{controller="machine",result="success"} 120
controller_runtime_reconcile_total{controller="machine",result="requeue_after"} 30
controller_runtime_reconcile_total{controller="machine",result="error"} 0
controller_runtime_reconcile_total{controller="cluster",result="success"} 7
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["machine success"] != 120 || got["machine requeue_after"] != 30 || got["cluster success"] != 7 {
		t.Errorf("parseReconciles = %v, want machine success 120, requeue_after 30, cluster success 7 (no zero entries)", got)
	}
}
