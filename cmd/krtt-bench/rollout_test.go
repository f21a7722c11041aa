package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestRolloutCheckHoldsTheLimits(t *testing.T) {
	within := Rollout{PeakMachines: 33, MostMachines: 33, MinAvailable: 30, FewestAvailable: 30}
	if err := within.check(); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	over := within
	over.PeakMachines, over.peakAt = 34, "m-34(...)"
	if err := over.check(); err == nil || !strings.Contains(err.Error(), "34 Machines at once") || !strings.Contains(err.Error(), "m-34") {
		t.Errorf("34 of at most 33: %v", err)
	}
	under := within
	under.MinAvailable = 29
	if err := under.check(); err == nil || !strings.Contains(err.Error(), "only 29 available") {
		t.Errorf("29 of at least 30: %v", err)
	}
}

func TestRolloutReport(t *testing.T) {
	r := result("krtt-rollout", 0, 0, 0, 12)
	r.CreateToRunning, r.DeleteToGone = nil, nil
	r.Rollout = &Rollout{MaxSurge: 3, CreateSeconds: 9.5, WallSeconds: 41.25, Replaced: 30,
		PeakMachines: 33, MostMachines: 33, MinAvailable: 30, FewestAvailable: 30, WatchEvents: 812}
	rep := Report{Mode: modeRollout, N: 30, PodsPerNode: 3, Results: []Result{r}}
	var buf bytes.Buffer
	writeTable(&buf, rep)
	out := buf.String()
	for _, want := range []string{"maxSurge 3, maxUnavailable 0", "requests/Machine replaced",
		"| krtt-rollout | 30 | 9.5s | 41.2s | 33 (≤ 33) | 30 (≥ 30) | 812 |", "| 12.0 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "create→Running wall") {
		t.Errorf("the rollout table has the lifecycle's columns:\n%s", out)
	}
	// Past its limits the rollout fails, but its figures cover all of it.
	broke := r
	broke.Rollout = &Rollout{WallSeconds: 40, PeakMachines: 34, MostMachines: 33, MinAvailable: 30, FewestAvailable: 30, WatchEvents: 800}
	broke.Complete, broke.Error = false, broke.Rollout.check().Error()
	buf.Reset()
	writeTable(&buf, Report{Mode: modeRollout, N: 30, Results: []Result{broke}})
	if got := buf.String(); strings.Contains(got, "until the failure") || !strings.Contains(got, "| 34 (≤ 33) |") ||
		!strings.Contains(got, "krtt-rollout did not finish: 34 Machines at once") {
		t.Errorf("a rollout past its limits:\n%s", got)
	}

	buf.Reset()
	if err := writeJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mode    string `json:"mode"`
		Results []struct {
			Rollout map[string]any `json:"rollout"`
		} `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Mode != "rollout" || len(doc.Results) != 1 {
		t.Fatalf("JSON: %s", buf.String())
	}
	for k, want := range map[string]float64{"wallSeconds": 41.25, "peakMachines": 33, "mostMachines": 33, "minAvailable": 30, "fewestAvailable": 30, "replaced": 30} {
		if got, _ := doc.Results[0].Rollout[k].(float64); got != want {
			t.Errorf("rollout.%s = %v, want %v", k, doc.Results[0].Rollout[k], want)
		}
	}
}

func TestValidateRollout(t *testing.T) {
	o := options{n: 30, workers: 1, concurrency: 1, output: "text", instances: 1, mode: modeRollout, maxSurge: 3}
	if err := validate(o); err != nil {
		t.Errorf("-mode rollout: %v", err)
	}
	for name, mut := range map[string]func(*options){
		"a peer":          func(o *options) { o.peer = "capi" },
		"no surge nor un": func(o *options) { o.maxSurge = 0 },
		"an unknown mode": func(o *options) { o.mode = "rollback" },
		"instances":       func(o *options) { o.instances = 2 },
	} {
		bad := o
		mut(&bad)
		if err := validate(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
