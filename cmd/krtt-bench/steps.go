package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Scale steps (-steps 1000,5000,10000): krtt alone at each N, each on a
// fresh API server, so how its cost per Machine grows with the fleet reads
// off one table. A cost that is linear in the fleet keeps CPU per Machine
// flat; a scan of the fleet on every reconcile makes it grow with N.

// parseSteps reads -steps: fleet sizes, comma-separated, each at least 1,
// in the order given.
func parseSteps(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-steps %q: %q is not a number of Machines", s, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Step is one fleet size of a -steps run: the figures of krtt at that N
// and what they are per Machine.
type Step struct {
	N      int    `json:"n"`
	Result Result `json:"result"`
	// CPUMillisPerMachine is the operator's CPU over both halves divided by
	// N; CPUPerMachineVsFirst divides it by the first step's.
	CPUMillisPerMachine  float64 `json:"cpuMillisPerMachine"`
	CPUPerMachineVsFirst float64 `json:"cpuPerMachineVsFirst"`
	// RSSKiBPerMachine is the peak RSS divided by N (the operator's fixed
	// memory included, so it falls as N grows while memory is linear).
	RSSKiBPerMachine float64 `json:"rssKiBPerMachine"`
}

// StepsReport is the report of a -steps run.
type StepsReport struct {
	Mode        string    `json:"mode"`
	PodsPerNode int       `json:"podsPerNode"`
	Started     time.Time `json:"started"`
	Steps       []Step    `json:"steps"`
}

// stepsOf turns each N's report into its step, per-Machine figures
// included. A step that did not complete keeps its result (and its
// error) but no per-Machine figures: they would stop at the failure.
func stepsOf(reps []*Report) []Step {
	var out []Step
	var first float64
	for _, r := range reps {
		res := r.Results[0]
		st := Step{N: r.N, Result: res}
		if res.Complete && r.N > 0 {
			st.CPUMillisPerMachine = round2(res.CPUSeconds * 1000 / float64(r.N))
			st.RSSKiBPerMachine = round1(res.PeakRSSMiB * 1024 / float64(r.N))
			if first == 0 {
				first = st.CPUMillisPerMachine
			}
			if first > 0 {
				st.CPUPerMachineVsFirst = round2(st.CPUMillisPerMachine / first)
			}
		}
		out = append(out, st)
	}
	return out
}

// runSteps measures krtt at each N of steps, each on a fresh API server.
func runSteps(sigCtx context.Context, o options, root string, krtt flavour, steps []int, timeoutSet bool) error {
	var reps []*Report
	var runErr error
	started := time.Now().UTC().Round(time.Second)
	for i, n := range steps {
		if sigCtx.Err() != nil {
			break
		}
		on := o
		on.n = n
		if !timeoutSet {
			on.timeout = 2*time.Minute + time.Duration(n)*time.Second
		}
		logf("=== step %d of %d: N=%d, on a fresh API server", i+1, len(steps), n)
		r, err := runOnce(sigCtx, on, root, []flavour{krtt}, fmt.Sprintf("n%d", n))
		if err != nil {
			runErr = fmt.Errorf("step N=%d: %w", n, err)
			logf("%v", runErr)
			break
		}
		reps = append(reps, r)
		if res := r.Results[0]; res.Error != "" {
			runErr = errors.Join(runErr, fmt.Errorf("step N=%d did not finish: %s", n, res.Error))
		}
	}
	if len(reps) == 0 {
		return errors.Join(runErr, sigCtx.Err())
	}
	rep := StepsReport{Mode: o.mode, PodsPerNode: o.podsPerNode, Started: started, Steps: stepsOf(reps)}
	if o.output == "json" {
		if err := writeJSON(os.Stdout, rep); err != nil {
			return err
		}
	} else {
		writeStepsTable(os.Stdout, rep)
	}
	return errors.Join(runErr, sigCtx.Err())
}

// writeStepsTable prints one row per N.
func writeStepsTable(w io.Writer, rep StepsReport) {
	_, _ = fmt.Fprintf(w, "\nScale steps: krtt alone, %d Pods per Node, each N on a fresh kube-apiserver\n\n", rep.PodsPerNode)
	_, _ = fmt.Fprintln(w, "| N | create→Running wall | delete→gone wall | requests/Machine | reconciles/Machine | CPU | CPU/Machine | vs first | peak RSS | peak RSS/Machine |")
	_, _ = fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range rep.Steps {
		r := s.Result
		wall := func(h *Half) string {
			if h == nil {
				return "—"
			}
			return sec(h.WallSeconds)
		}
		if !r.Complete {
			_, _ = fmt.Fprintf(w, "| %d | %s | %s | did not finish: %s |  |  |  |  |  |  |\n", s.N, wall(r.CreateToRunning), wall(r.DeleteToGone), r.Error)
			continue
		}
		reconciles := 0.0
		for _, v := range r.ReconcilesPerMachine {
			reconciles += v
		}
		_, _ = fmt.Fprintf(w, "| %d | %s | %s | %.1f | %.1f | %s | %.1f ms | %.2f× | %.0f MiB | %.0f KiB |\n",
			s.N, wall(r.CreateToRunning), wall(r.DeleteToGone), r.RequestsPerMachineTotal, reconciles,
			sec(r.CPUSeconds), s.CPUMillisPerMachine, s.CPUPerMachineVsFirst, r.PeakRSSMiB, s.RSSKiBPerMachine)
	}
	_, _ = fmt.Fprintln(w)
	_, _ = fmt.Fprintln(w, "CPU is the operator's utime+stime from the first worker Machine's creation to the last one gone; CPU/Machine divides")
	_, _ = fmt.Fprintln(w, "it by N and \"vs first\" by the first step's; peak RSS is the operator's VmHWM, its fixed part included.")
	for _, s := range rep.Steps {
		writeLoads(w, []Result{s.Result})
		writePhaseCPU(w, []Result{s.Result})
	}
}
