package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PhaseCPU is the CPU time every process of the bench used in one phase
// (create → Running, delete → gone), against what the machine's cores
// could give in its wall time: it tells whether the controller, the API
// server, etcd or the bench itself (the simulated provider, kubelets and
// the clients creating and watching) sets a phase's pace.
type PhaseCPU struct {
	Phase       string  `json:"phase"`
	WallSeconds float64 `json:"wallSeconds"`
	Cores       int     `json:"cores"`
	// CPUSeconds by process: the controller's name, kube-apiserver, etcd,
	// bench.
	CPUSeconds map[string]float64 `json:"cpuSeconds"`
	// APIServerRequestsPerMachine is what the bench's API server answered
	// in the phase, from every client, per Machine of the run (see
	// apiServerRequests); kinds under 0.005 are left out. Workload
	// clusters' API servers are not in it.
	APIServerRequestsPerMachine map[string]float64 `json:"apiServerRequestsPerMachine,omitempty"`
}

// benchProcess is the bench's own process in PhaseCPU.
const benchProcess = "bench"

// measurePhase samples the CPU of the controller's processes, the API
// servers and etcd the bench started, and its own, and the requests the
// bench's API server answered; end samples again and adds the phase to res.
func measurePhase(ctx context.Context, b *bench, ps procs, controller, phase string, res *Result) (end func() error, err error) {
	before, err := processCPU(ps, controller)
	if err != nil {
		return nil, err
	}
	var reqBefore requestCounts
	if b.cp != nil && b.cp.Config != nil {
		if reqBefore, err = apiServerRequests(ctx, b.cp.Config); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	return func() error {
		after, err := processCPU(ps, controller)
		if err != nil {
			return err
		}
		pc := PhaseCPU{Phase: phase, WallSeconds: round1(time.Since(t0).Seconds()), Cores: runtime.NumCPU(), CPUSeconds: map[string]float64{}}
		for name, v := range after {
			pc.CPUSeconds[name] = round1(v - before[name])
		}
		if reqBefore != nil {
			reqAfter, err := apiServerRequests(ctx, b.cp.Config)
			if err != nil {
				return err
			}
			pc.APIServerRequestsPerMachine = kindsPerMachine(reqBefore, reqAfter, b.o.n)
		}
		res.PhaseCPU = append(res.PhaseCPU, pc)
		return nil
	}, nil
}

// processCPU is utime+stime by process name: the controller's processes
// (added up), the bench's children named kube-apiserver and etcd (added up
// by name) and the bench itself.
func processCPU(ps procs, controller string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, p := range ps {
		cpu, err := cpuSeconds(p.pid())
		if err != nil {
			return nil, err
		}
		out[controller] += cpu
	}
	self, err := cpuSeconds(os.Getpid())
	if err != nil {
		return nil, err
	}
	out[benchProcess] = self
	kids, err := children(os.Getpid(), "kube-apiserver", "etcd")
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		cpu, err := cpuSeconds(k.pid)
		if err != nil {
			continue // exited since it was listed
		}
		out[k.name] += cpu
	}
	return out, nil
}

type child struct {
	pid  int
	name string
}

// children lists the processes whose parent is ppid and whose command is
// one of names.
func children(ppid int, names ...string) ([]child, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var out []child
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		name, parent, err := parseStatParent(string(raw))
		if err != nil || parent != ppid {
			continue
		}
		for _, n := range names {
			if name == n {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
				out = append(out, child{pid: pid, name: name})
			}
		}
	}
	return out, nil
}

// parseStatParent takes the command name and the parent pid (field 4)
// from a /proc/PID/stat line.
func parseStatParent(s string) (name string, ppid int, err error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, errors.New("/proc stat: no command name")
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 2 {
		return "", 0, errors.New("/proc stat: too few fields")
	}
	ppid, err = strconv.Atoi(fields[1])
	return s[open+1 : end], ppid, err
}

// meanPhaseCPU averages each phase's figures over runs; a phase some run
// lacks has no mean.
func meanPhaseCPU(rs []Result) []PhaseCPU {
	if len(rs) == 0 {
		return nil
	}
	var out []PhaseCPU
	for i, first := range rs[0].PhaseCPU {
		m := PhaseCPU{Phase: first.Phase, Cores: first.Cores, CPUSeconds: map[string]float64{}}
		n := float64(len(rs))
		for _, r := range rs {
			if i >= len(r.PhaseCPU) || r.PhaseCPU[i].Phase != first.Phase {
				return out
			}
			m.WallSeconds += r.PhaseCPU[i].WallSeconds / n
			m.CPUSeconds = addScaled(m.CPUSeconds, r.PhaseCPU[i].CPUSeconds, n)
			m.APIServerRequestsPerMachine = addScaled(m.APIServerRequestsPerMachine, r.PhaseCPU[i].APIServerRequestsPerMachine, n)
		}
		m.WallSeconds = round1(m.WallSeconds)
		for k, v := range m.CPUSeconds {
			m.CPUSeconds[k] = round1(v)
		}
		for k, v := range m.APIServerRequestsPerMachine {
			m.APIServerRequestsPerMachine[k] = round2(v)
		}
		out = append(out, m)
	}
	return out
}

// writePhaseCPU prints, per controller and phase, the CPU each process
// used and the share of the machine's cores they used together.
func writePhaseCPU(w io.Writer, results []Result) {
	for _, r := range results {
		for _, pc := range r.PhaseCPU {
			names := make([]string, 0, len(pc.CPUSeconds))
			var total float64
			for k, v := range pc.CPUSeconds {
				names = append(names, k)
				total += v
			}
			sort.Slice(names, func(i, j int) bool { return pc.CPUSeconds[names[i]] > pc.CPUSeconds[names[j]] })
			parts := make([]string, len(names))
			for i, k := range names {
				parts[i] = fmt.Sprintf("%s %.1f s", k, pc.CPUSeconds[k])
			}
			capacity := pc.WallSeconds * float64(pc.Cores)
			share := 0.0
			if capacity > 0 {
				share = 100 * total / capacity
			}
			_, _ = fmt.Fprintf(w, "CPU by process, %s %s (%.1f s on %d cores = %.1f core-s): %s; together %.1f core-s, %.0f%%.\n",
				r.Controller, pc.Phase, pc.WallSeconds, pc.Cores, capacity, strings.Join(parts, ", "), total, share)
			if len(pc.APIServerRequestsPerMachine) > 0 {
				_, _ = fmt.Fprintf(w, "kube-apiserver answered, %s %s, from every client: %s.\n", r.Controller, pc.Phase, apiServerLine(pc.APIServerRequestsPerMachine))
			}
		}
	}
}
