package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/rest"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

func TestPlanRuns(t *testing.T) {
	for _, tc := range []struct {
		peer, order string
		want        [][]string
	}{
		{"capi", "both", [][]string{{"krtt", "capi"}, {"capi", "krtt"}}},
		{"capi", "", [][]string{{"krtt", "capi"}, {"capi", "krtt"}}},
		{"capi", "krtt-first", [][]string{{"krtt", "capi"}}},
		{"capi", "capi-first", [][]string{{"capi", "krtt"}}},
		// Alone, krtt has no order: one run, whatever was asked.
		{"", "both", [][]string{{"krtt"}}},
		{"", "krtt-first", [][]string{{"krtt"}}},
	} {
		got, err := planRuns(tc.peer, tc.order)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("planRuns(%q, %q) = %v, %v; want %v", tc.peer, tc.order, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ peer, order string }{{"", "capi-first"}, {"capi", "random"}, {"", "random"}} {
		if got, err := planRuns(tc.peer, tc.order); err == nil || !strings.Contains(err.Error(), "-order") {
			t.Errorf("planRuns(%q, %q) = %v, %v; want an error naming -order", tc.peer, tc.order, got, err)
		}
	}
	if err := validate(options{n: 1, workers: 1, concurrency: 1, output: "text", instances: 1, order: "capi-first"}); err == nil {
		t.Error("validate accepts -order capi-first without a peer")
	}
	if got := runLabel([]string{"capi", "krtt"}); got != "capi-first" {
		t.Errorf("runLabel = %q", got)
	}
}

// twoRuns are the runs of -order both: krtt first, then capi first, with
// different figures so a mean and a ratio of the means can be told from
// any one run's.
func twoRuns() []*Report {
	k1, c1 := result("krtt", 10, 20, 1, 10), result("capi", 30, 60, 3, 30)
	c2, k2 := result("capi", 50, 100, 5, 40), result("krtt", 20, 30, 3, 20)
	k1.CPUSeconds, k2.CPUSeconds, c1.CPUSeconds, c2.CPUSeconds = 4, 6, 10, 20
	k1.RequestsPerMachine["DELETE"] = 3 // run 2 sent none
	t0 := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	return []*Report{
		{N: 50, Started: t0, Results: []Result{k1, c1}},
		{N: 50, Started: t0.Add(time.Hour), Results: []Result{c2, k2}},
	}
}

func TestMeansOfBothOrdersAndTheirRatios(t *testing.T) {
	rep := combine(twoRuns(), orderBoth)
	if rep.Order != "both" || len(rep.Runs) != 2 || rep.Runs[0].Order != "krtt-first" || rep.Runs[1].Order != "capi-first" {
		t.Fatalf("order %q, runs %+v", rep.Order, rep.Runs)
	}
	if len(rep.Results) != 2 || rep.Results[0].Controller != "krtt" || rep.Results[1].Controller != "capi" {
		t.Fatalf("mean results: %+v", rep.Results)
	}
	k, c := rep.Results[0], rep.Results[1]
	if k.RunsInMean != 2 || !k.Complete {
		t.Errorf("krtt mean: runs %d, complete %v", k.RunsInMean, k.Complete)
	}
	if *k.CreateToRunning != (Half{WallSeconds: 15, P50Seconds: 7.5, P95Seconds: 13.5, P99Seconds: 15}) {
		t.Errorf("krtt create→Running mean = %+v", *k.CreateToRunning)
	}
	if k.DeleteToGone.WallSeconds != 25 || c.DeleteToGone.WallSeconds != 80 {
		t.Errorf("delete→gone means = %v, %v; want 25, 80", k.DeleteToGone.WallSeconds, c.DeleteToGone.WallSeconds)
	}
	if k.CPUSeconds != 5 || c.CPUSeconds != 15 {
		t.Errorf("CPU means = %v, %v; want 5, 15", k.CPUSeconds, c.CPUSeconds)
	}
	// A verb one run did not send counts as 0 in that run.
	if want := map[string]float64{"GET": 2, "PATCH": 15, "DELETE": 1.5}; !reflect.DeepEqual(k.RequestsPerMachine, want) {
		t.Errorf("krtt requests mean = %v, want %v", k.RequestsPerMachine, want)
	}
	// Ratios divide the means, not the runs' ratios: create 40/15, which
	// differs from the mean of 30/10 and 50/20.
	for fig, want := range map[string]float64{
		"createToRunning.wallSeconds": 2.67,
		"deleteToGone.wallSeconds":    3.2,
		"cpuSeconds":                  3,
		"requestsPerMachine.PATCH":    2.33,
	} {
		if got, ok := rep.Comparison.ratio(fig); !ok || got != want {
			t.Errorf("ratio of the means %s = %v (present %v), want %v", fig, got, ok, want)
		}
	}
	// Each run keeps its own ratios, krtt the baseline whichever ran first.
	if got, _ := rep.Runs[1].Comparison.ratio("createToRunning.wallSeconds"); got != 2.5 || rep.Runs[1].Comparison.Baseline != "krtt" {
		t.Errorf("run 2: %s ÷ %s create ratio %v, want capi ÷ krtt 2.5", rep.Runs[1].Comparison.Peer, rep.Runs[1].Comparison.Baseline, got)
	}
}

func TestMeanLeavesOutAHalfOneRunDidNotFinish(t *testing.T) {
	runs := twoRuns()
	failed := &runs[1].Results[0] // capi, run 2
	failed.DeleteToGone, failed.Complete, failed.Error = nil, false, "only 3 of 50 Machines gone"
	rep := combine(runs, orderBoth)
	c := rep.Results[1]
	if c.DeleteToGone != nil || c.CreateToRunning == nil {
		t.Errorf("capi mean: create %v, delete %v; want a create mean and no delete mean", c.CreateToRunning, c.DeleteToGone)
	}
	if c.Complete || !strings.Contains(c.Error, "run 2: only 3 of 50") {
		t.Errorf("capi mean: complete %v, error %q", c.Complete, c.Error)
	}
	for _, fig := range []string{"deleteToGone.wallSeconds", "cpuSeconds"} {
		if v, ok := rep.Comparison.ratio(fig); ok {
			t.Errorf("ratio %s = %v from an incomplete mean", fig, v)
		}
	}
}

func TestOneRunIsReportedAsItRan(t *testing.T) {
	runs := twoRuns()[1:]
	rep := combine(runs, orderPeerFirst)
	if rep.Order != "capi-first" || rep.Runs != nil || rep.Results[0].Controller != "capi" || rep.Results[0].RunsInMean != 0 {
		t.Fatalf("order %q, runs %v, results %+v", rep.Order, rep.Runs, rep.Results)
	}
	if rep.Comparison.Baseline != "krtt" {
		t.Errorf("baseline %s, want krtt whichever ran first", rep.Comparison.Baseline)
	}
	alone := combine([]*Report{{N: 50, Results: []Result{result("krtt", 10, 20, 1, 10)}}}, orderBoth)
	if alone.Order != "" || alone.Comparison != nil {
		t.Errorf("krtt alone: order %q, comparison %v", alone.Order, alone.Comparison)
	}
}

func TestReportOfBothOrders(t *testing.T) {
	rep := combine(twoRuns(), orderBoth)
	var buf bytes.Buffer
	if err := writeJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Order string
		Runs  []struct {
			Order      string
			Results    []map[string]any
			Comparison map[string]any
		}
		Results    []map[string]any
		Comparison struct{ Ratios []Ratio }
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Order != "both" || len(doc.Runs) != 2 || len(doc.Runs[0].Results) != 2 || doc.Runs[1].Comparison == nil {
		t.Errorf("JSON runs: %s", buf.String())
	}
	if len(doc.Results) != 2 || doc.Results[0]["runsInMean"] != 2.0 || len(doc.Comparison.Ratios) == 0 {
		t.Errorf("JSON means: %s", buf.String())
	}

	buf.Reset()
	writeTable(&buf, rep)
	out := buf.String()
	for _, want := range []string{
		"Run 1 of 2, krtt first (on a fresh kube-apiserver, started 2026-11-25T18:00:00Z):",
		"Run 2 of 2, capi first",
		"Mean of the 2 runs (each figure averaged; the ratios divide the means):",
		"| krtt (mean of 2) | 50 | 15.0s |",
		"| capi ÷ krtt |  | 2.67× |",
		// Run 2's own ratio row.
		"| capi ÷ krtt |  | 2.50× |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The DELETE column is there for every table, run 2's included.
	if n := strings.Count(out, "DELETE/Machine"); n != 3 {
		t.Errorf("%d headers with DELETE/Machine, want 3:\n%s", n, out)
	}
}

// A phase's profiles come from the controller's pprof endpoint,
// kube-apiserver's /debug/pprof, etcd's and the bench's own: here the test
// process's own for the controller, served the way each serves it, and a
// fixed profile for the others.
func TestPhaseProfileWritesCPUAndHeap(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// One process can run one CPU profile at a time: the other processes'
	// endpoints answer a profile of their own. kube-apiserver's host ends
	// in a slash, as a kubeconfig's may.
	api := http.NewServeMux()
	api.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000,
			Sample: []*profile.Sample{{Value: []int64{1, 10_000_000}}},
		}
		if err := p.Write(w); err != nil {
			t.Error(err)
		}
	})
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()

	dir := t.TempDir()
	b := &bench{profileDir: dir, cp: &localcp.ControlPlane{Config: &rest.Config{Host: apiSrv.URL + "/"}},
		etcdPprof: apiSrv.URL + "/debug/pprof", ownPprof: apiSrv.URL + "/debug/pprof"}
	res := &Result{}
	ps := procs{{name: "krtt-operator", pprof: srv.URL + "/debug/pprof"}}
	ctx := context.Background()
	prof, err := startPhaseProfile(ctx, b, ps, "create", res)
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.end(ctx); err != nil {
		t.Fatal(err)
	}
	if err := prof.end(ctx); err != nil {
		t.Fatalf("a second end: %v", err)
	}
	want := []string{"krtt-heap-create-start.pb.gz", "krtt-cpu-create.pb.gz", "krtt-heap-create-end.pb.gz",
		"krtt-kube-apiserver-cpu-create.pb.gz", "krtt-etcd-cpu-create.pb.gz", "krtt-bench-cpu-create.pb.gz"}
	var got []string
	for _, p := range res.Profiles {
		got = append(got, filepath.Base(p))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("profiles %v, want %v", got, want)
	}
	for file, sampleType := range map[string]string{"krtt-cpu-create.pb.gz": "cpu", "krtt-heap-create-end.pb.gz": "inuse_space",
		"krtt-kube-apiserver-cpu-create.pb.gz": "cpu", "krtt-etcd-cpu-create.pb.gz": "cpu", "krtt-bench-cpu-create.pb.gz": "cpu"} {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		_ = f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var types []string
		for _, st := range p.SampleType {
			types = append(types, st.Type)
		}
		if !strings.Contains(strings.Join(types, " "), sampleType) {
			t.Errorf("%s has sample types %v, want %s", file, types, sampleType)
		}
	}

	// Cluster API's manager is profiled under its own name.
	capiRes := &Result{}
	prof, err = startPhaseProfile(ctx, &bench{profileDir: dir}, procs{{name: capiProcName, pprof: srv.URL + "/debug/pprof"}}, "delete", capiRes)
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.end(ctx); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, p := range capiRes.Profiles {
		got = append(got, filepath.Base(p))
	}
	if want := []string{"capi-heap-delete-start.pb.gz", "capi-cpu-delete.pb.gz", "capi-heap-delete-end.pb.gz"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Cluster API's profiles %v, want %v", got, want)
	}

	// Without -profile, or for a process without the endpoint, nothing.
	if p, err := startPhaseProfile(ctx, &bench{}, ps, "create", res); p != nil || err != nil {
		t.Errorf("without -profile: %v, %v", p, err)
	}
	if p, err := startPhaseProfile(ctx, b, procs{{}}, "create", res); p != nil || err != nil {
		t.Errorf("a process without pprof: %v, %v", p, err)
	}
	// An endpoint that is not pprof's is an error, not an empty profile.
	bad := httptest.NewServer(http.NotFoundHandler())
	defer bad.Close()
	if _, err := startPhaseProfile(ctx, b, procs{{pprof: bad.URL}}, "delete", &Result{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a 404 endpoint: %v", err)
	}
}

// The bench profiles itself through its own loopback endpoint, as it does
// the other processes, and the endpoint is gone once stopped.
func TestServeOwnPprof(t *testing.T) {
	base, stop, err := serveOwnPprof()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prof, err := fetchProfile(ctx, http.DefaultClient, base+"/profile?seconds=1")
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if len(prof.SampleType) < 2 || prof.SampleType[1].Type != "cpu" {
		t.Errorf("sample types %v, want samples and cpu", prof.SampleType)
	}
	stop()
	if _, err := fetchProfile(ctx, http.DefaultClient, base+"/profile?seconds=1"); err == nil {
		t.Error("the endpoint still answers after stop")
	}
}
