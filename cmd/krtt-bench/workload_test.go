package main

import (
	"bytes"
	"strings"
	"testing"
)

// Requests are split by client-go's host label: what did not go to the
// management cluster's API server went to a workload cluster.
func TestRequestsSplitByHost(t *testing.T) {
	metrics := `# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 10
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 4
rest_client_requests_total{code="200",host="127.0.0.1:7001",method="GET"} 6
rest_client_requests_total{code="201",host="127.0.0.1:7002",method="POST"} 2
rest_client_requests_total{code="200",host="127.0.0.1:7002",method="PATCH"} 1
`
	byHost, err := parseRequestsByHost(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	total, workload := byHost.total(), byHost.except("127.0.0.1:6443")
	for _, tc := range []struct {
		name      string
		got, want requestCounts
	}{
		{"total", total, requestCounts{"GET": 16, "POST": 6, "PATCH": 1}},
		{"workload", workload, requestCounts{"GET": 6, "POST": 2, "PATCH": 1}},
	} {
		if len(tc.got) != len(tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
		for m, v := range tc.want {
			if tc.got[m] != v {
				t.Errorf("%s[%s] = %v, want %v", tc.name, m, tc.got[m], v)
			}
		}
	}
	if h, err := hostOf("https://127.0.0.1:6443"); err != nil || h != "127.0.0.1:6443" {
		t.Errorf("hostOf = %q, %v", h, err)
	}
}

// With workload clusters the table says so and every request cell reads
// total (management + workload).
func TestTableSplitsWorkloadRequests(t *testing.T) {
	rep := Report{N: 200, WorkloadClusters: 5, Results: []Result{{Controller: "krtt", Complete: true,
		RequestsPerMachine: map[string]float64{"GET": 2, "POST": 16}, RequestsPerMachineTotal: 18,
		WorkloadRequestsPerMachine: map[string]float64{"GET": 0.5, "POST": 3}, WorkloadRequestsPerMachineTotal: 3.5}}}
	var buf bytes.Buffer
	writeTable(&buf, rep)
	out := buf.String()
	for _, want := range []string{"spread over 5 Clusters", "| 2.0 (1.5 + 0.5) |", "| 16.0 (13.0 + 3.0) |", "| 18.0 (14.5 + 3.5) |", "total (management + workload)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for qps, want := range map[float64]string{-1: "krtt's workload clients without a client-side limit", 20: "krtt's --workload-client-qps 20"} {
		rep.WorkloadClientQPS = &qps
		buf.Reset()
		writeTable(&buf, rep)
		if !strings.Contains(buf.String(), want) {
			t.Errorf("with --workload-client-qps %g the table does not say %q:\n%s", qps, want, buf.String())
		}
	}
}
