package main

import (
	"fmt"
	"strings"
	"time"
)

// Orders of a side-by-side bench (-order). Whichever controller runs
// second meets an API server whose etcd already holds the first one's
// history (compacted objects, events, watch caches grown), so one order
// alone can favour either; both orders and their mean take that out.
const (
	orderKrttFirst = "krtt-first"
	orderPeerFirst = "capi-first"
	orderBoth      = "both"
)

// planRuns lists the runs of a bench, each on a fresh API server, as the
// controllers it measures in the order it measures them. No order is both.
func planRuns(peer, order string) ([][]string, error) {
	if order == "" {
		order = orderBoth
	}
	if peer == "" {
		if order == orderPeerFirst {
			return nil, fmt.Errorf("-order %s needs -peer capi", order)
		}
		if order != orderKrttFirst && order != orderBoth {
			return nil, fmt.Errorf("-order %q: want %s, %s or %s", order, orderKrttFirst, orderPeerFirst, orderBoth)
		}
		return [][]string{{"krtt"}}, nil
	}
	krttFirst, peerFirst := []string{"krtt", peer}, []string{peer, "krtt"}
	switch order {
	case orderKrttFirst:
		return [][]string{krttFirst}, nil
	case orderPeerFirst:
		return [][]string{peerFirst}, nil
	case orderBoth:
		return [][]string{krttFirst, peerFirst}, nil
	}
	return nil, fmt.Errorf("-order %q: want %s, %s or %s", order, orderKrttFirst, orderPeerFirst, orderBoth)
}

// runLabel names a run by its order (its profiles' subdirectory too).
func runLabel(controllers []string) string {
	if len(controllers) == 1 {
		return controllers[0]
	}
	return controllers[0] + "-first"
}

// Run is one run of a bench of several (-order both): its controllers'
// figures in the order they ran, on a fresh API server.
type Run struct {
	// Order is krtt-first or capi-first.
	Order      string      `json:"order"`
	Started    time.Time   `json:"started"`
	Results    []Result    `json:"results"`
	Comparison *Comparison `json:"comparison,omitempty"`
}

// combine makes the report of the runs: a single run as it is; several as
// each run and, as Results, each controller's mean over them, the ratios
// divided from the means.
func combine(runs []*Report, order string) Report {
	rep := *runs[0]
	rep.Order = ""
	if len(rep.Results) > 1 {
		rep.Order = rep.Results[0].Controller + "-first"
		rep.Comparison = comparisonOf(rep.Results)
	}
	if len(runs) == 1 {
		return rep
	}
	rep.Order = order
	rep.Runs = make([]Run, len(runs))
	byController := map[string][]Result{}
	var controllers []string
	for i, r := range runs {
		rep.Runs[i] = Run{Order: r.Results[0].Controller + "-first", Started: r.Started, Results: r.Results, Comparison: comparisonOf(r.Results)}
		for _, res := range r.Results {
			if byController[res.Controller] == nil {
				controllers = append(controllers, res.Controller)
			}
			byController[res.Controller] = append(byController[res.Controller], res)
		}
	}
	rep.Results = make([]Result, len(controllers))
	for i, c := range controllers {
		rep.Results[i] = meanResult(byController[c])
	}
	rep.Comparison = comparisonOf(rep.Results)
	return rep
}

// comparisonOf divides the peer's figures by krtt's, whichever ran first;
// nil unless there are two.
func comparisonOf(results []Result) *Comparison {
	if len(results) != 2 {
		return nil
	}
	base, peer := results[0], results[1]
	if base.Controller == "capi" {
		base, peer = peer, base
	}
	return compare(base, peer)
}

// meanResult is the mean of one controller's figures over runs. A half
// only some runs finished has no mean (nil), so a mean never stands for
// fewer runs than it says; requests, CPU and RSS are averaged over every
// run and, like a single run's, count only when all are complete.
func meanResult(rs []Result) Result {
	n := float64(len(rs))
	out := Result{Controller: rs[0].Controller, Complete: true, RunsInMean: len(rs)}
	var versions, errs []string
	seen := map[string]bool{}
	var create, del []*Half
	for i, r := range rs {
		if !seen[r.Version] {
			seen[r.Version] = true
			versions = append(versions, r.Version)
		}
		if !r.Complete {
			out.Complete = false
		}
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("run %d: %s", i+1, r.Error))
		}
		create = append(create, r.CreateToRunning)
		del = append(del, r.DeleteToGone)
		out.RequestsPerMachine = addScaled(out.RequestsPerMachine, r.RequestsPerMachine, n)
		out.WorkloadRequestsPerMachine = addScaled(out.WorkloadRequestsPerMachine, r.WorkloadRequestsPerMachine, n)
		out.RequestsPerMachineByKind = addScaled(out.RequestsPerMachineByKind, r.RequestsPerMachineByKind, n)
		out.RowsPerMachine = addScaled(out.RowsPerMachine, r.RowsPerMachine, n)
		out.ReconcilesPerMachine = addScaled(out.ReconcilesPerMachine, r.ReconcilesPerMachine, n)
		out.RequestsPerMachineTotal += r.RequestsPerMachineTotal / n
		out.WorkloadRequestsPerMachineTotal += r.WorkloadRequestsPerMachineTotal / n
		out.CPUSeconds += r.CPUSeconds / n
		out.CPUSecondsInclStart += r.CPUSecondsInclStart / n
		out.PeakRSSMiB += r.PeakRSSMiB / n
	}
	out.Version = strings.Join(versions, ", ")
	out.Error = strings.Join(errs, "; ")
	out.CreateToRunning, out.DeleteToGone = meanHalf(create), meanHalf(del)
	out.PhaseCPU = meanPhaseCPU(rs)
	for _, m := range []map[string]float64{out.RequestsPerMachine, out.WorkloadRequestsPerMachine, out.RequestsPerMachineByKind, out.RowsPerMachine, out.ReconcilesPerMachine} {
		for k, v := range m {
			m[k] = round2(v)
		}
	}
	out.RequestsPerMachineTotal = round2(out.RequestsPerMachineTotal)
	out.WorkloadRequestsPerMachineTotal = round2(out.WorkloadRequestsPerMachineTotal)
	out.CPUSeconds, out.CPUSecondsInclStart, out.PeakRSSMiB = round1(out.CPUSeconds), round1(out.CPUSecondsInclStart), round1(out.PeakRSSMiB)
	return out
}

// addScaled adds m/n into sum key by key; a key one run lacks counts as 0
// there (that run sent no such request).
func addScaled(sum, m map[string]float64, n float64) map[string]float64 {
	if len(m) == 0 {
		return sum
	}
	if sum == nil {
		sum = map[string]float64{}
	}
	for k, v := range m {
		sum[k] += v / n
	}
	return sum
}

// meanHalf is the mean of each figure of the halves; nil when one is nil.
func meanHalf(hs []*Half) *Half {
	out := &Half{}
	for _, h := range hs {
		if h == nil {
			return nil
		}
		out.WallSeconds += h.WallSeconds
		out.P50Seconds += h.P50Seconds
		out.P95Seconds += h.P95Seconds
		out.P99Seconds += h.P99Seconds
	}
	n := float64(len(hs))
	out.WallSeconds, out.P50Seconds = round3(out.WallSeconds/n), round3(out.P50Seconds/n)
	out.P95Seconds, out.P99Seconds = round3(out.P95Seconds/n), round3(out.P99Seconds/n)
	return out
}
