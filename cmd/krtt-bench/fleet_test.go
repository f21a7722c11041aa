package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// -instances K without workload clusters: K self-hosted Clusters, one per
// instance; with workload clusters, those are the Clusters and instance i
// gets every Kth; workersOf counts what round-robin gives each.
func TestFleetLayout(t *testing.T) {
	if got := layFleet(nil, 1); len(got) != 0 {
		t.Errorf("one instance, no workload clusters: %v, want the flavour's one Cluster", got)
	}
	two := layFleet(nil, 2)
	if len(two) != 2 || two[0].filter != "instance-0" || two[1].filter != "instance-1" || two[0].workload != nil || two[0].name == two[1].name {
		t.Errorf("two instances: %+v, want two self-hosted Clusters, one labelled for each", two)
	}
	ws := []*workload{{cluster: "wc-0"}, {cluster: "wc-1"}, {cluster: "wc-2"}}
	spread := layFleet(ws, 2)
	for i, want := range []struct{ name, filter string }{{"wc-0", "instance-0"}, {"wc-1", "instance-1"}, {"wc-2", "instance-0"}} {
		if spread[i].name != want.name || spread[i].filter != want.filter || spread[i].workload != ws[i] {
			t.Errorf("Cluster %d = %+v, want %s for %s", i, spread[i], want.name, want.filter)
		}
	}
	if got := layFleet(ws, 1); got[0].filter != "" || len(got) != 3 {
		t.Errorf("one instance over workload clusters: %+v, want 3 unlabelled Clusters", got)
	}

	b := &bench{o: options{n: 7}, clusters: spread}
	// Machines 0..6 go to wc-0, wc-1, wc-2, wc-0, …: instance-0 gets 0, 2, 3, 5, 6.
	if a, c := b.workersOf("instance-0"), b.workersOf("instance-1"); a != 5 || c != 2 {
		t.Errorf("workersOf = %d and %d, want 5 and 2", a, c)
	}
	if all := b.workersOf(""); all != 7 {
		t.Errorf("an unfiltered controller manages %d, want all 7", all)
	}
}

func TestValidateInstances(t *testing.T) {
	ok := options{n: 10, workers: 1, concurrency: 1, output: "text", instances: 2, mode: modeMachines}
	if err := validate(ok); err != nil {
		t.Errorf("-instances 2: %v", err)
	}
	for name, o := range map[string]options{
		"none":           {n: 10, workers: 1, concurrency: 1, output: "text", instances: 0, mode: modeMachines},
		"with a peer":    {n: 10, workers: 1, concurrency: 1, output: "text", instances: 2, peer: "capi", mode: modeMachines},
		"machinesets":    {n: 10, workers: 1, concurrency: 1, output: "text", instances: 2, mode: modeMachineSets},
		"too few wl cls": {n: 10, workers: 1, concurrency: 1, output: "text", instances: 3, workloadClusters: 2, mode: modeMachines},
	} {
		if err := validate(o); err == nil || !strings.Contains(err.Error(), "-instances") {
			t.Errorf("%s: %v, want an error naming -instances", name, err)
		}
	}
}

// Samples of several processes add up, host by host.
func TestSumOfSamples(t *testing.T) {
	got := sum([]sample{
		{requests: requestCounts{"GET": 1, "PATCH": 4}, kinds: requestCounts{"patch machines": 4}, byHost: hostRequests{"a": {"PATCH": 4}}, cpu: 1.5},
		{requests: requestCounts{"PATCH": 2}, kinds: requestCounts{"patch machines": 2}, byHost: hostRequests{"a": {"PATCH": 1}, "b": {"PATCH": 1}}, cpu: 2},
	})
	if got.requests["GET"] != 1 || got.requests["PATCH"] != 6 || got.kinds["patch machines"] != 6 ||
		got.byHost["a"]["PATCH"] != 5 || got.byHost["b"]["PATCH"] != 1 || got.cpu != 3.5 {
		t.Errorf("sum = %+v", got)
	}
}

// With instances the table says how many and lists each one's figures,
// and the JSON document carries them.
func TestReportShowsEachInstance(t *testing.T) {
	r := result("krtt", 20, 30, 10, 20)
	r.PeakRSSMiB = 120
	r.Instances = []Instance{
		{WatchFilter: "instance-0", Machines: 100, RequestsPerMachineTotal: 30.5, CPUSeconds: 8, CPUSecondsInclStart: 8.4, PeakRSSMiB: 61},
		{WatchFilter: "instance-1", Machines: 100, RequestsPerMachineTotal: 29.5, CPUSeconds: 7, CPUSecondsInclStart: 7.3, PeakRSSMiB: 59},
	}
	rep := Report{N: 200, Clusters: 2, Instances: 2, Results: []Result{r}}
	var buf bytes.Buffer
	writeTable(&buf, rep)
	out := buf.String()
	for _, want := range []string{"spread over 2 self-hosted Clusters, 2 operator instances",
		"krtt instance --watch-filter instance-0 (100 Machines): 30.5 requests/Machine, CPU 8.0s (8.4s), peak RSS 61 MiB",
		"krtt instance --watch-filter instance-1 (100 Machines): 29.5 requests/Machine",
		"| 120 MiB |", "the sum of"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := writeJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Instances int `json:"instances"`
		Results   []struct {
			Instances []map[string]any `json:"instances"`
		} `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Instances != 2 || len(doc.Results) != 1 || len(doc.Results[0].Instances) != 2 {
		t.Fatalf("JSON: %s", buf.String())
	}
	for _, k := range []string{"watchFilter", "machines", "requestsPerMachineTotal", "cpuSeconds", "peakRSSMiB"} {
		if _, ok := doc.Results[0].Instances[0][k]; !ok {
			t.Errorf("instance has no %q: %v", k, doc.Results[0].Instances[0])
		}
	}
}
