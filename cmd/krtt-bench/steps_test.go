package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseSteps(t *testing.T) {
	got, err := parseSteps("1000, 5000,10000")
	if err != nil || len(got) != 3 || got[0] != 1000 || got[1] != 5000 || got[2] != 10000 {
		t.Errorf("parseSteps = %v, %v; want [1000 5000 10000]", got, err)
	}
	if got, err := parseSteps(""); err != nil || got != nil {
		t.Errorf("parseSteps(\"\") = %v, %v; want no steps", got, err)
	}
	for _, bad := range []string{"1000,x", "0", "1000,,5000", "-5"} {
		if _, err := parseSteps(bad); err == nil || !strings.Contains(err.Error(), "-steps") {
			t.Errorf("parseSteps(%q) = %v; want an error naming -steps", bad, err)
		}
	}
}

// Per-Machine figures divide by each step's N, and CPU per Machine is
// compared with the first complete step; an incomplete step keeps its
// error and has no per-Machine figures.
func TestStepsPerMachine(t *testing.T) {
	reps := []*Report{
		{N: 1000, Results: []Result{{Controller: "krtt", Complete: true, CPUSeconds: 20, PeakRSSMiB: 100,
			CreateToRunning: &Half{WallSeconds: 30}, DeleteToGone: &Half{WallSeconds: 40}, RequestsPerMachineTotal: 23}}},
		{N: 10000, Results: []Result{{Controller: "krtt", Complete: true, CPUSeconds: 240, PeakRSSMiB: 600,
			CreateToRunning: &Half{WallSeconds: 300}, DeleteToGone: &Half{WallSeconds: 400}, RequestsPerMachineTotal: 23}}},
		{N: 20000, Results: []Result{{Controller: "krtt", Error: "deadline passed: 12000 of 20000 Running"}}},
	}
	steps := stepsOf(reps)
	if s := steps[0]; s.CPUMillisPerMachine != 20 || s.CPUPerMachineVsFirst != 1 || s.RSSKiBPerMachine != 102.4 {
		t.Errorf("step 1000 = %+v; want 20 ms, 1×, 102.4 KiB per Machine", s)
	}
	if s := steps[1]; s.CPUMillisPerMachine != 24 || s.CPUPerMachineVsFirst != 1.2 || s.RSSKiBPerMachine != 61.4 {
		t.Errorf("step 10000 = %+v; want 24 ms, 1.2×, 61.4 KiB per Machine", s)
	}
	if s := steps[2]; s.CPUMillisPerMachine != 0 || s.CPUPerMachineVsFirst != 0 {
		t.Errorf("incomplete step = %+v; want no per-Machine figures", s)
	}
	var out bytes.Buffer
	writeStepsTable(&out, StepsReport{PodsPerNode: 3, Steps: steps})
	for _, want := range []string{"| 1000 | 30.0s | 40.0s | 23.0 |", "| 24.0 ms | 1.20× | 600 MiB | 61 KiB |", "| 20000 | — | — | did not finish: deadline passed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
