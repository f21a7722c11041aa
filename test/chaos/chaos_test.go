// Package chaos deletes Machines (with Pods, PodDisruptionBudgets, volumes
// and hooks) while faults hit the operator and the control plane: the
// operator SIGKILLed at random points, kube-apiserver restarted, a proxy
// injecting errors, latency and cut watches between operator and API
// server, and a leader killed mid-drain with a second replica taking over.
// The operator and the simulated provider run as their own processes,
// built from cmd/krtt-operator and cmd/krtt-sim. Every run records a
// timeline (package test/timeline) and checks the deletion invariants on it.
//
// `go test ./test/chaos` runs a short version; `make chaos` (-chaos.long)
// runs the long one and prints a table.
package chaos

import (
	"context"
	"flag"
	"fmt"
	"github.com/krtt-dev/krtt/actions"
	machineactions "github.com/krtt-dev/krtt/actions/machine"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/timeline"
)

var (
	long   = flag.Bool("chaos.long", false, "run the long chaos suite (make chaos) instead of the short one")
	seed   = flag.Uint64("chaos.seed", 0, "random seed of the faults (0: from the clock; printed)")
	keep   = flag.Bool("chaos.keep", false, "keep the state directory (logs, timelines) after the run")
	only   = flag.String("chaos.only", "", "run only the runs of this name (e.g. workload); the table then compares with no baseline")
	shared *world
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	root, err := localcp.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "krtt-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if *keep {
			fmt.Fprintln(os.Stderr, "chaos: state kept in", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	// The recorders' informers log here (watch errors across restarts).
	logFile, err := os.Create(filepath.Join(dir, "recorder.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = logFile.Close() }()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))
	bins, err := buildBinaries(root, filepath.Join(dir, "bin"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	set, err := actions.Load(machineactions.Name, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cp, err := startResumed(root, filepath.Join(dir, "cp"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	// A fast heartbeat wakes Machines waiting on their Node; a short grace
	// cap lets evicted Pods go quickly.
	simArgs := []string{"--kubeconfig", cp.Kubeconfig, "--kubelet-grace-cap", "1s", "--heartbeat-interval", "2s",
		"--disrupted-pod-timeout", disruptedPodTimeout.String()}
	simProc, err := startProc("sim", bins.sim, filepath.Join(dir, "sim.log"), false, simArgs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	shared = &world{cp: cp, c: cp.Client, bins: bins, dir: dir, sim: simProc, rules: timeline.RulesFrom(set), root: root, simArgs: simArgs}
	// The workload runs swap the sim for one of their own and back.
	defer func() { shared.sim.stop() }()
	defer func() {
		if shared.wl == nil {
			return
		}
		if err := shared.wl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	return m.Run()
}

// TestChaos runs every fault once (short) or at scale (-chaos.long) and
// fails on any broken invariant, leaked object, unconverged run or fault
// that did not happen as planned.
func TestChaos(t *testing.T) {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -args -chaos.seed=%d)", s, s)
	specs := shortSpecs(s)
	if *long {
		specs = longSpecs(s)
	}
	ctx := context.Background()
	var results []*result
	for _, sp := range specs {
		if *only != "" && sp.name != *only {
			continue
		}
		if !t.Run(sp.name, func(t *testing.T) {
			run := shared.run
			if sp.workload {
				run = shared.runWorkload
			}
			res := run(ctx, sp, t.Logf)
			results = append(results, res)
			assertRun(t, res)
		}) && !*long {
			break
		}
	}
	printTable(results)
}

const baselineName = "baseline"

// minFaultShare is the share of a proxy run's requests that must have been
// faulted for the run to count. DefaultFaults hit a read 13% and a write 19%
// of the time (faultproxy's TestDefaultFaultsShare), but a short run sends
// under 200 requests, whose share falls below 10% a few times in a hundred:
// half the read rate says the faults were there without tossing a coin.
const minFaultShare = 0.065

// disruptedPodTimeout shortens a stall the runs hit often: an eviction cut
// in the middle (the operator killed, so its request is canceled, or
// kube-apiserver dying between the Eviction API's writes) leaves the Pod
// with its DisruptionTarget condition but not deleted, and the budget's
// disruptedPods entry holds that drain until it expires (2 minutes in
// Kubernetes; the sim's timeout is a flag).
const disruptedPodTimeout = 15 * time.Second

// stalledEviction is the deadline of a short run: runs take 10-30s, plus
// a stalled eviction or two.
const stalledEviction = 120 * time.Second

// faultDelay is how long after the operator's progress a kill or an API
// server restart lands: long enough to catch it mid-reconcile (a drain
// pass, a status patch), short enough that each operator does only a few
// steps, so a 60-Machine deletion takes dozens of kills however fast it is.
var faultDelay = [2]time.Duration{0, time.Second}

func shortSpecs(seed uint64) []spec {
	return []spec{
		{name: "kill", machines: 12, minKills: 3, faultDelay: faultDelay, timeout: stalledEviction, seed: seed},
		{name: "apiserver", machines: 6, restarts: 1, restartDown: 2 * time.Second, faultDelay: faultDelay, timeout: stalledEviction, seed: seed + 1},
		{name: "proxy", machines: 6, proxy: true, timeout: stalledEviction, seed: seed + 2},
		{name: "failover", machines: 4, failover: true, timeout: stalledEviction, seed: seed + 3},
	}
}

func longSpecs(seed uint64) []spec {
	return []spec{
		{name: baselineName, machines: 60, timeout: 10 * time.Minute, seed: seed},
		// No-fault runs in the waves of the kill and apiserver runs, which
		// take longer by design: their time to converge is compared with these.
		{name: baselineName, machines: 60, wave: 3, timeout: 10 * time.Minute, seed: seed + 5},
		{name: baselineName, machines: 20, wave: 5, timeout: 10 * time.Minute, seed: seed + 6},
		// In waves of 3: all 60 at once, today's operator deletes them between
		// about 7 kills (66 in waves).
		{name: "kill", machines: 60, minKills: 30, faultDelay: faultDelay, wave: 3, timeout: 20 * time.Minute, seed: seed + 1},
		// In waves of 5 too: all 20 at once can be gone before the third
		// restart (each waits for the recorder to re-list).
		{name: "apiserver", machines: 20, restarts: 3, restartDown: 3 * time.Second, faultDelay: faultDelay, wave: 5, timeout: 10 * time.Minute, seed: seed + 2},
		{name: "proxy", machines: 30, proxy: true, timeout: 10 * time.Minute, seed: seed + 3},
		{name: "failover", machines: 12, failover: true, timeout: 10 * time.Minute, seed: seed + 4},
		// The Nodes in a workload cluster whose kube-apiserver is down for
		// longer than the Node-side timeouts of half the Machines (see
		// runWorkload and wlDrainTimeout): 100s covers the drain, volume
		// and Node deletion timeouts of those after the ~30s the operator
		// takes to count the cluster unreachable, with half a minute to
		// spare.
		{name: "workload", machines: 8, workload: true, dark: 100 * time.Second, restarts: 2, restartDown: 3 * time.Second,
			faultDelay: faultDelay, timeout: 10 * time.Minute, seed: seed + 7},
	}
}

func assertRun(t *testing.T, r *result) {
	t.Helper()
	if r.err != nil {
		t.Errorf("%s: %v (logs in %s; -chaos.keep keeps them)", r.name, r.err, filepath.Join(shared.dir, r.ns))
	}
	if r.report == nil {
		return
	}
	for _, v := range r.report.Violations {
		t.Errorf("%s: invariant broken: %s", r.name, v)
	}
	for _, n := range r.report.Notes {
		t.Logf("%s: note: %s", r.name, n)
	}
	if r.report.Unverifiable > 0 {
		t.Errorf("%s: %d checks the record cannot decide (the notes say which and why): a run passes only with none", r.name, r.report.Unverifiable)
	}
	if r.report.MachinesDeleted != r.machines {
		t.Errorf("%s: the timeline shows %d of %d Machines deleted", r.name, r.report.MachinesDeleted, r.machines)
	}
	rp := r.report
	if rp.Cordons == 0 || rp.Evictions == 0 || rp.Refusals == 0 || rp.HookHolds == 0 || rp.VolumeWaits == 0 || rp.InfraDeletions < r.machines {
		t.Errorf("%s: the run exercised too little: %d cordons, %d evictions, %d refused by a budget, %d hook holds, %d volume waits, %d infrastructure deletions (of %d Machines)",
			r.name, rp.Cordons, rp.Evictions, rp.Refusals, rp.HookHolds, rp.VolumeWaits, rp.InfraDeletions, r.machines)
	}
	if r.kills < r.minKills {
		t.Errorf("%s: %d kills, want at least %d", r.name, r.kills, r.minKills)
	}
	if r.restarts < r.spec.restarts {
		t.Errorf("%s: kube-apiserver restarted %d times, want %d", r.name, r.restarts, r.spec.restarts)
	}
	if r.unexpectedExits > 0 {
		t.Errorf("%s: the operator exited by itself %d times (see its log)", r.name, r.unexpectedExits)
	}
	if r.proxy {
		if r.requests == 0 || float64(r.injected) < minFaultShare*float64(r.requests) {
			t.Errorf("%s: %d faults injected in %d requests, want at least %.0f%%", r.name, r.injected, r.requests, 100*minFaultShare)
		}
		if r.watchesCut == 0 {
			t.Errorf("%s: no watch was cut", r.name)
		}
	}
	if r.failover {
		switch {
		case r.takeover == 0:
			t.Errorf("%s: no replica took over from the killed leader", r.name)
		case r.takeoverErr != nil:
			t.Errorf("%s: read the leader Lease: %v", r.name, r.takeoverErr)
		case r.leaseTransitions != 1:
			// One change of holder: the standby, once; not a flapping lease.
			t.Errorf("%s: the Lease changed holder %d times between the kill and the takeover, want 1", r.name, r.leaseTransitions)
		case r.takeoverAfterExpiry > leaseSeconds*time.Second:
			// Within the lease: the standby takes the Lease in the lease
			// duration that follows its expiry, not several leases later
			// (it retries every 500ms). Read from the Lease, whose times the
			// replicas write, not from this test's polling.
			t.Errorf("%s: the standby took the Lease %s after it ran out, want within the lease (%ds)", r.name, r.takeoverAfterExpiry.Round(time.Millisecond), leaseSeconds)
		}
	}
	for _, p := range r.plan {
		t.Errorf("%s: the run did not go as planned: %s", r.name, p)
	}
	if r.leftoversErr != nil {
		t.Errorf("%s: list what is left: %v", r.name, r.leftoversErr)
	} else if len(r.leftovers) > 0 {
		t.Errorf("%s: left in the API server: %v", r.name, r.leftovers)
	}
}

// tableHeader heads the table printTable prints, which
// docs/reliability.md shows (TestDocTableHeader compares them). events:
// the writes in the audit log; cordons / evictions / refusals / hook holds
// / volume waits: what the run exercised (refusals: evictions a budget
// refused, 429); unverifiable: checks the record could not decide.
var tableHeader = []string{
	"| run | Machines | kills | apiserver restarts | injected faults | watches cut | events | cordons / evictions / refusals / hook holds / volume waits | invariant violations | unverifiable | leaked objects | awaiting GC | time to converge | no-fault time | ratio |",
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
}

// printTable prints one line per run.
func printTable(results []*result) {
	// A no-fault time per (Machines, wave): a run in waves compares with the
	// baseline in the same waves; a run all at once with the closest
	// all-at-once baseline, scaled per Machine.
	type shape struct{ machines, wave int }
	waveOf := func(r *result) int {
		if r.wave > 0 && r.wave < r.machines {
			return r.wave
		}
		return 0
	}
	base := map[shape]time.Duration{}
	for _, r := range results {
		if r.name == baselineName && r.err == nil {
			base[shape{r.machines, waveOf(r)}] = r.converge
		}
	}
	baseFor := func(r *result) (time.Duration, int) {
		if w := waveOf(r); w > 0 {
			return base[shape{r.machines, w}], r.machines
		}
		var best int
		for s := range base {
			if s.wave == 0 && (best == 0 || abs(s.machines-r.machines) < abs(best-r.machines)) {
				best = s.machines
			}
		}
		if best == 0 {
			return 0, 0
		}
		return base[shape{best, 0}], best
	}
	fmt.Println()
	for _, l := range tableHeader {
		fmt.Println(l)
	}
	total := struct{ kills, restarts, violations, leaked, machines int }{}
	for _, r := range results {
		viol, leaked, gc := "-", "-", "-"
		if r.report != nil {
			viol = fmt.Sprint(len(r.report.Violations))
			if len(r.report.Violations) > 0 {
				var parts []string
				by := r.report.ByInvariant()
				keys := make([]string, 0, len(by))
				for k := range by {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					parts = append(parts, fmt.Sprintf("%d× %s", by[k], k))
				}
				viol += " (" + strings.Join(parts, "; ") + ")"
			}
			leaked = fmt.Sprint(len(r.report.Leaked))
			if n := len(r.report.KeptNodes); n > 0 {
				leaked += fmt.Sprintf(" (+%d Nodes kept by a row, named in the notes)", n)
			}
			gc = fmt.Sprint(len(r.awaitingGC))
			total.violations += len(r.report.Violations)
			total.leaked += len(r.report.Leaked)
		}
		faults := "-"
		if r.workload {
			var rows []string
			for _, id := range wlRows {
				rows = append(rows, fmt.Sprintf("%s×%d", id, r.wlRows[id]))
			}
			faults = fmt.Sprintf("workload cluster's kube-apiserver down %.0fs mid-drain, then %.0fs; rows fired (Machines): %s", r.dark.Seconds(), r.restartDown.Seconds(), strings.Join(rows, " "))
		}
		if r.proxy {
			faults = fmt.Sprintf("%d of %d requests (%.0f%%)", r.injected, r.requests, 100*float64(r.injected)/float64(max(r.requests, 1)))
		}
		kills := fmt.Sprint(r.kills)
		if r.failover && r.takeover > 0 {
			kills += fmt.Sprintf(" (leader; takeover %.1fs: %.1fs after its %ds lease ran out)", r.takeover.Seconds(), r.takeoverAfterExpiry.Seconds(), leaseSeconds)
		}
		conv := fmt.Sprintf("%.1fs", r.converge.Seconds())
		if r.err != nil {
			conv += " (failed)"
		}
		machines := fmt.Sprint(r.machines)
		baseStr, ratio := "-", "-"
		if w := waveOf(r); w > 0 {
			machines += fmt.Sprintf(" (%d at a time)", w)
		}
		// A workload run's time is its planned outage's, not the
		// operator's: no baseline compares with it.
		if b, bn := baseFor(r); b > 0 && r.name != baselineName && !r.workload {
			scaled := time.Duration(float64(b) * float64(r.machines) / float64(bn))
			baseStr = fmt.Sprintf("%.1fs", scaled.Seconds())
			if bn != r.machines {
				baseStr += fmt.Sprintf(" (scaled from %d)", bn)
			}
			ratio = fmt.Sprintf("%.1f×", r.converge.Seconds()/scaled.Seconds())
		}
		exercised, unverifiable := "-", "-"
		if rp := r.report; rp != nil {
			exercised = fmt.Sprintf("%d / %d / %d / %d / %d", rp.Cordons, rp.Evictions, rp.Refusals, rp.HookHolds, rp.VolumeWaits)
			unverifiable = fmt.Sprint(rp.Unverifiable)
		}
		fmt.Printf("| %s | %s | %s | %d | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.name, machines, kills, r.restarts, faults, r.watchesCut, r.events, exercised, viol, unverifiable, leaked, gc, conv, baseStr, ratio)
		total.kills += r.kills
		total.restarts += r.restarts
		if r.report != nil {
			total.machines += r.report.MachinesDeleted
		}
	}
	fmt.Printf("\nruns %d, Machines deleted %d, kills %d, apiserver restarts %d, invariant violations %d, leaked objects %d\n",
		len(results), total.machines, total.kills, total.restarts, total.violations, total.leaked)
	fmt.Println("(awaiting GC: bootstrap Secrets whose owner is gone, and Pods the drain skips left on a Node that is gone; the garbage collectors of kube-controller-manager remove them, and these control planes run none)")
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
