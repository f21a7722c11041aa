package main

import (
	"bytes"
	"strings"
	"testing"
)

const apiServerMetrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="DELETE",version="v1"} 3000
apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="DELETE",version="v1"} 1000
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="eviction",verb="POST",version="v1"} 3000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="cluster.krtt.dev",resource="machines",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 1500
apiserver_request_total{code="409",component="apiserver",dry_run="",group="cluster.krtt.dev",resource="machines",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 20
apiserver_request_total{code="200",component="apiserver",dry_run="",group="cluster.krtt.dev",resource="machines",scope="resource",subresource="status",verb="PATCH",version="v1beta1"} 500
`

func TestParseAPIServerRequests(t *testing.T) {
	got, err := parseAPIServerRequests(strings.NewReader(apiServerMetrics))
	if err != nil {
		t.Fatal(err)
	}
	want := requestCounts{
		"delete pods":                                3000,
		"delete pods 404":                            1000,
		"post pods/eviction":                         3000,
		"patch machines.cluster.krtt.dev/status":     2000, // both versions
		"patch machines.cluster.krtt.dev/status 409": 20,
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if _, err := parseAPIServerRequests(strings.NewReader("# no counter\n")); err == nil {
		t.Error("metrics without apiserver_request_total: no error")
	}
}

func TestAPIServerRequestsPerPhase(t *testing.T) {
	before := requestCounts{"delete pods": 100, "post pods/eviction": 0}
	after := requestCounts{"delete pods": 3100, "post pods/eviction": 3000, "get nodes": 101}
	got := kindsPerMachine(before, after, 1000)
	// 0.101 GETs per Machine round to 0.1; nothing rounds to 0 here, but a
	// kind that did not move is left out.
	if len(got) != 3 || got["delete pods"] != 3 || got["post pods/eviction"] != 3 || got["get nodes"] != 0.1 {
		t.Fatalf("per Machine = %v", got)
	}
	if got := kindsPerMachine(requestCounts{"get nodes": 1}, requestCounts{"get nodes": 2}, 1000); len(got) != 0 {
		t.Errorf("a kind that rounds to 0 per Machine is kept: %v", got)
	}

	runs := []Result{
		{Controller: "krtt", PhaseCPU: []PhaseCPU{{Phase: "delete → gone", WallSeconds: 40, Cores: 2, CPUSeconds: map[string]float64{"krtt": 10},
			APIServerRequestsPerMachine: map[string]float64{"delete pods": 4, "post pods/eviction": 3, "get nodes": 0.02}}}},
		{Controller: "krtt", PhaseCPU: []PhaseCPU{{Phase: "delete → gone", WallSeconds: 50, Cores: 2, CPUSeconds: map[string]float64{"krtt": 12},
			APIServerRequestsPerMachine: map[string]float64{"delete pods": 3, "post pods/eviction": 3, "get nodes": 0.02}}}},
	}
	m := meanResult(runs).PhaseCPU[0].APIServerRequestsPerMachine
	if m["delete pods"] != 3.5 || m["post pods/eviction"] != 3 {
		t.Errorf("mean per Machine = %v", m)
	}
	var buf bytes.Buffer
	writePhaseCPU(&buf, []Result{meanResult(runs)})
	want := "kube-apiserver answered, krtt delete → gone, from every client: 6.5 per Machine: 3.50 delete pods, 3.00 post pods/eviction, 0.02 in smaller kinds.\n"
	if !strings.HasSuffix(buf.String(), want) {
		t.Errorf("report\n %q, want it to end with\n %q", buf.String(), want)
	}
}
