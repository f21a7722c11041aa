package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Report is a bench: the settings, one Result per controller and, when
// there are two, the peer's figures divided by krtt's. With -order both it
// holds both runs, and Results are each controller's mean over them.
// `-o json` prints it as one JSON document.
type Report struct {
	// Mode is what was measured: machines, machinesets or rollout.
	Mode                string  `json:"mode,omitempty"`
	N                   int     `json:"n"`
	PodsPerNode         int     `json:"podsPerNode"`
	MachineConcurrency  int     `json:"machineConcurrency"`
	SimHeartbeatSeconds float64 `json:"simHeartbeatSeconds"`
	SimWorkers          int     `json:"simWorkers,omitempty"`
	APIServerVersion    string  `json:"apiServerVersion"`
	// WorkloadClusters is how many Clusters the Machines were spread over,
	// each with its own API server (0: self-hosted, the Node side is the
	// management cluster).
	WorkloadClusters int `json:"workloadClusters,omitempty"`
	// WorkloadClientQPS is krtt's --workload-client-qps in a run with
	// workload clusters (negative: no client-side limit).
	WorkloadClientQPS *float64 `json:"workloadClientQPS,omitempty"`
	// Clusters is how many Clusters the Machines were spread over
	// (-workload-clusters, -instances; 0: one).
	Clusters int `json:"clusters,omitempty"`
	// Instances is how many operator processes split the fleet, each with
	// its own --watch-filter (-instances; 0: one, unfiltered).
	Instances int       `json:"instances,omitempty"`
	Started   time.Time `json:"started"`
	// Order is which controller ran first next to a peer: krtt-first,
	// capi-first, or both (Runs holds a run of each).
	Order string `json:"order,omitempty"`
	// Runs are the runs of -order both, each on a fresh API server.
	Runs []Run `json:"runs,omitempty"`
	// Results are the controllers' figures: of the one run, or their
	// means over Runs.
	Results []Result `json:"results"`
	// Comparison is set when a peer ran next to krtt; with Runs it divides
	// the means.
	Comparison *Comparison `json:"comparison,omitempty"`
	// Notes say what the figures include and what is not comparable.
	Notes []string `json:"notes,omitempty"`
}

// Result holds one controller's figures. Requests, CPU and RSS cover the
// span from just before the first worker Machine is created to the end of
// the last half reached.
type Result struct {
	Controller string `json:"controller"`
	Version    string `json:"version,omitempty"`
	// RunsInMean is how many runs these figures are the mean of; 0: one
	// run's own.
	RunsInMean      int   `json:"runsInMean,omitempty"`
	CreateToRunning *Half `json:"createToRunning,omitempty"`
	DeleteToGone    *Half `json:"deleteToGone,omitempty"`
	// RequestsPerMachine is client-go requests by HTTP method divided by N.
	RequestsPerMachine      map[string]float64 `json:"requestsPerMachine,omitempty"`
	RequestsPerMachineTotal float64            `json:"requestsPerMachineTotal"`
	// WorkloadRequestsPerMachine is the part of RequestsPerMachine that
	// went to the workload clusters' API servers (with -workload-clusters;
	// the rest went to the management cluster).
	WorkloadRequestsPerMachine      map[string]float64 `json:"workloadRequestsPerMachine,omitempty"`
	WorkloadRequestsPerMachineTotal float64            `json:"workloadRequestsPerMachineTotal,omitempty"`
	// RequestsPerMachineByKind is the same requests by API verb and
	// resource ("patch machines.cluster.krtt.dev/status"), from the
	// operator's krtt_api_requests_total; empty for a controller without it.
	RequestsPerMachineByKind map[string]float64 `json:"requestsPerMachineByKind,omitempty"`
	// RowsPerMachine is the rows the controller fired, by "controller
	// table row outcome" (krtt_transitions_total), divided by N: what the
	// requests paid for. JSON only.
	RowsPerMachine map[string]float64 `json:"rowsPerMachine,omitempty"`
	// ReconcilesPerMachine is how often each controller reconciled, by
	// "controller result" (controller_runtime_reconcile_total), divided by
	// N: wake-ups that fired no row cost a reconcile too. JSON only.
	ReconcilesPerMachine map[string]float64 `json:"reconcilesPerMachine,omitempty"`
	CPUSeconds           float64            `json:"cpuSeconds"`
	CPUSecondsInclStart  float64            `json:"cpuSecondsInclStart"`
	PeakRSSMiB           float64            `json:"peakRSSMiB"`
	// Complete is false when a half did not finish; Error says why, and
	// the resource figures then stop at the failure.
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
	// Instances are each operator instance's figures with -instances (the
	// fields above add them up; PeakRSSMiB is the sum of their peaks).
	Instances []Instance `json:"instances,omitempty"`
	// Rollout holds the figures of -mode rollout.
	Rollout *Rollout `json:"rollout,omitempty"`
	// PhaseCPU is the CPU each process used in each phase (the
	// controller, kube-apiserver, etcd and the bench).
	PhaseCPU []PhaseCPU `json:"phaseCPU,omitempty"`
	// Profiles are the controller's CPU and heap profiles of each phase
	// and kube-apiserver's CPU profile (-profile DIR).
	Profiles []string `json:"profiles,omitempty"`
	// LoadAverage is the machine's 1-minute load average when the
	// controller started and when it was stopped: other work on the
	// machine slows both halves, so a ratio is only as good as the loads
	// were alike.
	LoadAverage *LoadAverage `json:"loadAverage,omitempty"`
}

// Instance is one operator instance's share of a -instances run: its
// requests divided by the worker Machines it manages, its CPU and its
// peak RSS.
type Instance struct {
	WatchFilter             string             `json:"watchFilter"`
	Machines                int                `json:"machines"`
	RequestsPerMachine      map[string]float64 `json:"requestsPerMachine,omitempty"`
	RequestsPerMachineTotal float64            `json:"requestsPerMachineTotal"`
	CPUSeconds              float64            `json:"cpuSeconds"`
	CPUSecondsInclStart     float64            `json:"cpuSecondsInclStart"`
	PeakRSSMiB              float64            `json:"peakRSSMiB"`
}

// Rollout is a rolling update of N Machines to new templates (-mode
// rollout). The request figures of its Result cover the rollout only,
// divided by the Machines replaced.
type Rollout struct {
	MaxSurge       int `json:"maxSurge"`
	MaxUnavailable int `json:"maxUnavailable"`
	// CreateSeconds is from the MachineDeployment's creation to N Machines
	// available (not part of the other figures).
	CreateSeconds float64 `json:"createSeconds"`
	// WallSeconds is from the template change to every Machine being of
	// the new MachineSet and available, the old ones gone, and the
	// deployment reporting N replicas, N updated and N available.
	WallSeconds float64 `json:"wallSeconds"`
	Replaced    int     `json:"replaced"`
	// PeakMachines is the most Machines (being deleted included) and
	// MinAvailable the fewest available after any watch event of the
	// rollout; MostMachines (N + maxSurge) and FewestAvailable
	// (N - maxUnavailable) are what the strategy allows.
	PeakMachines    int `json:"peakMachines"`
	MostMachines    int `json:"mostMachines"`
	MinAvailable    int `json:"minAvailable"`
	FewestAvailable int `json:"fewestAvailable"`
	WatchEvents     int `json:"watchEvents"`
	// WatchRelists counts the times the watch ended and the Machines were
	// listed again during the rollout: states between may be unseen.
	WatchRelists int `json:"watchRelists,omitempty"`
	// peakAt and minAt describe the Machines at the extremes, for the
	// error when a limit was broken.
	peakAt, minAt string
}

// LoadAverage is /proc/loadavg's first field at two instants.
type LoadAverage struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Half is one half of the lifecycle: wall time from the first create (or
// delete) to the last Machine Running (or gone), and per-Machine
// percentiles of the same.
type Half struct {
	WallSeconds float64 `json:"wallSeconds"`
	P50Seconds  float64 `json:"p50Seconds"`
	P95Seconds  float64 `json:"p95Seconds"`
	P99Seconds  float64 `json:"p99Seconds"`
}

// Comparison divides the peer's figures by the baseline's: above 1 the
// peer took longer, sent more or used more.
type Comparison struct {
	Baseline string  `json:"baseline"`
	Peer     string  `json:"peer"`
	Ratios   []Ratio `json:"ratios"`
}

// Ratio is one figure of both controllers.
type Ratio struct {
	Figure           string  `json:"figure"`
	Baseline         float64 `json:"baseline"`
	Peer             float64 `json:"peer"`
	PeerOverBaseline float64 `json:"peerOverBaseline"`
}

type figure struct {
	name  string
	value float64
}

// figures flattens a Result in table order. Requests, CPU and RSS of an
// incomplete run are left out: they stop at a failure, so they compare
// with nothing.
func (r Result) figures() []figure {
	var out []figure
	add := func(prefix string, h *Half) {
		if h == nil {
			return
		}
		out = append(out,
			figure{prefix + ".wallSeconds", h.WallSeconds},
			figure{prefix + ".p50Seconds", h.P50Seconds},
			figure{prefix + ".p95Seconds", h.P95Seconds},
			figure{prefix + ".p99Seconds", h.P99Seconds})
	}
	add("createToRunning", r.CreateToRunning)
	add("deleteToGone", r.DeleteToGone)
	if !r.Complete {
		return out
	}
	for _, v := range verbs(r.RequestsPerMachine) {
		out = append(out, figure{"requestsPerMachine." + v, r.RequestsPerMachine[v]})
	}
	return append(out,
		figure{"requestsPerMachineTotal", r.RequestsPerMachineTotal},
		figure{"cpuSeconds", r.CPUSeconds},
		figure{"peakRSSMiB", r.PeakRSSMiB})
}

// compare divides every figure both have. A baseline figure that rounds
// to 0.0 is left out: dividing by it says nothing.
func compare(baseline, peer Result) *Comparison {
	c := &Comparison{Baseline: baseline.Controller, Peer: peer.Controller, Ratios: []Ratio{}}
	theirs := map[string]float64{}
	for _, f := range peer.figures() {
		theirs[f.name] = f.value
	}
	for _, f := range baseline.figures() {
		p, ok := theirs[f.name]
		if !ok || math.Abs(f.value) < 0.05 {
			continue
		}
		c.Ratios = append(c.Ratios, Ratio{Figure: f.name, Baseline: f.value, Peer: p, PeerOverBaseline: round2(p / f.value)})
	}
	return c
}

func (c *Comparison) ratio(figure string) (float64, bool) {
	if c == nil {
		return 0, false
	}
	for _, r := range c.Ratios {
		if r.Figure == figure {
			return r.PeerOverBaseline, true
		}
	}
	return 0, false
}

func writeJSON(w io.Writer, rep any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// writeTable prints the report as a Markdown table: a row per controller
// and, with a peer, a row of ratios.
func writeTable(w io.Writer, rep Report) {
	if rep.Mode == modeRollout {
		writeRolloutTable(w, rep)
		return
	}
	var perVerb []map[string]float64
	for _, r := range rep.Results {
		perVerb = append(perVerb, r.RequestsPerMachine)
	}
	for _, run := range rep.Runs {
		for _, r := range run.Results {
			perVerb = append(perVerb, r.RequestsPerMachine)
		}
	}
	vs := verbs(perVerb...)

	where := "self-hosted (the Node side is the management cluster)"
	switch {
	case rep.WorkloadClusters > 0:
		where = fmt.Sprintf("spread over %d Clusters, each with its own workload API server", rep.WorkloadClusters)
		if q := rep.WorkloadClientQPS; q != nil {
			where += ", krtt's " + workloadQPSText(*q)
		}
	case rep.Clusters > 1:
		where = fmt.Sprintf("spread over %d self-hosted Clusters", rep.Clusters)
	}
	if rep.Instances > 1 {
		where += fmt.Sprintf(", %d operator instances (--watch-filter) on as many parts", rep.Instances)
	}
	_, _ = fmt.Fprintf(w, "\nMachine lifecycle bench: N=%d %s, %d Pods per Node, --machine-concurrency %d, sim heartbeat %s, %d sim workers, kube-apiserver %s\n\n",
		rep.N, where, rep.PodsPerNode, rep.MachineConcurrency, time.Duration(rep.SimHeartbeatSeconds*float64(time.Second)), rep.SimWorkers, rep.APIServerVersion)
	for i, run := range rep.Runs {
		_, _ = fmt.Fprintf(w, "Run %d of %d, %s (on a fresh kube-apiserver, started %s):\n\n", i+1, len(rep.Runs), orderText(run.Order), run.Started.Format(time.RFC3339))
		writeRows(w, rep.N, run.Results, run.Comparison, vs)
		_, _ = fmt.Fprintln(w)
		writeLoads(w, run.Results)
		writePhaseCPU(w, run.Results)
		writeProfiles(w, run.Results)
		_, _ = fmt.Fprintln(w)
	}
	if len(rep.Runs) > 0 {
		_, _ = fmt.Fprintf(w, "Mean of the %d runs (each figure averaged; the ratios divide the means):\n\n", len(rep.Runs))
	}
	writeRows(w, rep.N, rep.Results, rep.Comparison, vs)
	_, _ = fmt.Fprintln(w)
	writeResultLines(w, rep)
	_, _ = fmt.Fprintln(w, "Requests are each controller's client-go rest_client_requests_total (by HTTP method; GET includes lists and watches)")
	_, _ = fmt.Fprintln(w, "from just before the first worker Machine is created to the end, divided by N; CPU is utime+stime of its process over")
	_, _ = fmt.Fprintln(w, "the same span (in brackets: since it started); peak RSS is its VmHWM.")
	if rep.WorkloadClusters > 0 {
		_, _ = fmt.Fprintln(w, "With workload clusters each request figure reads total (management + workload): the part sent to the management")
		_, _ = fmt.Fprintln(w, "cluster's API server and the part sent to the workload clusters' (by client-go's host label).")
	}
	if rep.Instances > 1 {
		_, _ = fmt.Fprintln(w, "With several operator instances the row adds them up: their requests (divided by N) and CPU, and the sum of")
		_, _ = fmt.Fprintln(w, "their peak RSS; each instance's own requests are divided by the Machines it manages.")
	}
	if rep.Comparison != nil {
		_, _ = fmt.Fprintf(w, "The last row is %s ÷ %s: above 1, %s took longer, sent more or used more.\n", rep.Comparison.Peer, rep.Comparison.Baseline, rep.Comparison.Peer)
	}
	writeLoadsAndNotes(w, rep)
}

// writeResultLines lists, under a table, each controller's requests by
// kind, its instances and why it did not finish.
func writeResultLines(w io.Writer, rep Report) {
	for _, r := range rep.Results {
		writeKinds(w, r)
		writeInstances(w, r)
	}
	for _, r := range rep.Results {
		if r.Error != "" {
			_, _ = fmt.Fprintf(w, "%s did not finish: %s\n", r.Controller, r.Error)
		}
	}
}

func writeLoadsAndNotes(w io.Writer, rep Report) {
	writeLoads(w, rep.Results)
	writePhaseCPU(w, rep.Results)
	writeProfiles(w, rep.Results)
	for _, n := range rep.Notes {
		_, _ = fmt.Fprintln(w, "- "+n)
	}
}

// writeRows prints the Markdown table of the results: a row per
// controller and, with a comparison, a row of ratios.
func writeRows(w io.Writer, n int, results []Result, c *Comparison, vs []string) {
	head := []string{"controller", "N", "create→Running wall", "to-Running p50 / p95 / p99", "delete→gone wall", "to-gone p50 / p95 / p99"}
	head = append(head, resourceHead(vs, "requests/Machine")...)
	_, _ = fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
	_, _ = fmt.Fprintln(w, "|"+strings.Repeat("---|", len(head)))
	for _, r := range results {
		_, _ = fmt.Fprintln(w, "| "+strings.Join(tableRow(n, r, vs), " | ")+" |")
	}
	if c != nil {
		_, _ = fmt.Fprintln(w, "| "+strings.Join(ratioRow(c, vs), " | ")+" |")
	}
}

// orderText says a run's order in words.
func orderText(order string) string {
	first, ok := strings.CutSuffix(order, "-first")
	if !ok {
		return order
	}
	return first + " first"
}

// writeLoads gives the machine's load while each controller ran: other
// work slows both halves, so a ratio is only as good as the loads were
// alike.
func writeLoads(w io.Writer, results []Result) {
	var loads []string
	for _, r := range results {
		if r.LoadAverage != nil {
			loads = append(loads, fmt.Sprintf("%s %.1f → %.1f", r.Controller, r.LoadAverage.Start, r.LoadAverage.End))
		}
	}
	if len(loads) > 0 {
		_, _ = fmt.Fprintf(w, "Load average (1 min) of the machine from start to stop of each controller: %s.\n", strings.Join(loads, ", "))
	}
}

// writeProfiles lists the profiles -profile wrote.
func writeProfiles(w io.Writer, results []Result) {
	for _, r := range results {
		if len(r.Profiles) == 0 {
			continue
		}
		names := make([]string, len(r.Profiles))
		for i, p := range r.Profiles {
			names[i] = filepath.Base(p)
		}
		_, _ = fmt.Fprintf(w, "%s profiles in %s: %s\n", r.Controller, filepath.Dir(r.Profiles[0]), strings.Join(names, ", "))
	}
}

// writeKinds lists a controller's requests per Machine by verb and
// resource, most first, as one line; nothing for a controller that does
// not count them.
func writeKinds(w io.Writer, r Result) {
	if len(r.RequestsPerMachineByKind) == 0 {
		return
	}
	kinds := make([]string, 0, len(r.RequestsPerMachineByKind))
	for k := range r.RequestsPerMachineByKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		a, b := r.RequestsPerMachineByKind[kinds[i]], r.RequestsPerMachineByKind[kinds[j]]
		if a != b {
			return a > b
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, r.RequestsPerMachineByKind[k]))
	}
	_, _ = fmt.Fprintf(w, "%s requests/Machine by verb and resource: %s\n", r.Controller, strings.Join(parts, ", "))
}

// writeInstances lists each operator instance's figures, one line each;
// nothing for a run of one.
func writeInstances(w io.Writer, r Result) {
	for _, in := range r.Instances {
		_, _ = fmt.Fprintf(w, "%s instance --watch-filter %s (%d Machines): %.1f requests/Machine, CPU %.1fs (%.1fs), peak RSS %.0f MiB\n",
			r.Controller, in.WatchFilter, in.Machines, in.RequestsPerMachineTotal, in.CPUSeconds, in.CPUSecondsInclStart, in.PeakRSSMiB)
	}
}

func tableRow(n int, r Result, vs []string) []string {
	name := r.Controller
	if r.RunsInMean > 0 {
		name += fmt.Sprintf(" (mean of %d)", r.RunsInMean)
	}
	row := []string{name, fmt.Sprint(n)}
	half := func(h *Half) []string {
		if h == nil {
			return []string{"—", "—"}
		}
		return []string{sec(h.WallSeconds), sec(h.P50Seconds) + " / " + sec(h.P95Seconds) + " / " + sec(h.P99Seconds)}
	}
	row = append(row, half(r.CreateToRunning)...)
	row = append(row, half(r.DeleteToGone)...)
	return append(row, resourceCells(r, vs)...)
}

// resourceHead heads the columns of resourceCells; perMachine names the
// total (requests per what).
func resourceHead(vs []string, perMachine string) []string {
	var head []string
	for _, v := range vs {
		head = append(head, v+"/Machine")
	}
	return append(head, perMachine, "CPU", "peak RSS")
}

// resourceCells are a Result's requests per Machine by method and in all,
// its CPU and its peak RSS: the columns every table ends with.
func resourceCells(r Result, vs []string) []string {
	var row []string
	mark := ""
	// A rollout that finished past its limits failed, but its figures
	// cover all of it.
	if !r.Complete && (r.Rollout == nil || r.Rollout.WallSeconds == 0) {
		mark = " (until the failure)"
	}
	split := func(total, workload float64) string {
		if r.WorkloadRequestsPerMachine == nil {
			return fmt.Sprintf("%.1f", total)
		}
		return fmt.Sprintf("%.1f (%.1f + %.1f)", total, total-workload, workload)
	}
	for _, v := range vs {
		row = append(row, split(r.RequestsPerMachine[v], r.WorkloadRequestsPerMachine[v]))
	}
	return append(row, split(r.RequestsPerMachineTotal, r.WorkloadRequestsPerMachineTotal)+mark,
		fmt.Sprintf("%.1fs (%.1fs)", r.CPUSeconds, r.CPUSecondsInclStart),
		fmt.Sprintf("%.0f MiB", r.PeakRSSMiB))
}

func ratioRow(c *Comparison, vs []string) []string {
	x := func(figure string) string {
		if v, ok := c.ratio(figure); ok {
			return fmt.Sprintf("%.2f×", v)
		}
		return "—"
	}
	half := func(prefix string) []string {
		return []string{x(prefix + ".wallSeconds"),
			x(prefix+".p50Seconds") + " / " + x(prefix+".p95Seconds") + " / " + x(prefix+".p99Seconds")}
	}
	row := []string{c.Peer + " ÷ " + c.Baseline, ""}
	row = append(row, half("createToRunning")...)
	row = append(row, half("deleteToGone")...)
	for _, v := range vs {
		row = append(row, x("requestsPerMachine."+v))
	}
	return append(row, x("requestsPerMachineTotal"), x("cpuSeconds"), x("peakRSSMiB"))
}

func sec(s float64) string { return fmt.Sprintf("%.1fs", s) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// writeRolloutTable prints a -mode rollout report: a row per controller
// with the rollout's wall time, its extremes against the limits and what
// the rollout cost per Machine replaced.
func writeRolloutTable(w io.Writer, rep Report) {
	var perVerb []map[string]float64
	for _, r := range rep.Results {
		perVerb = append(perVerb, r.RequestsPerMachine)
	}
	vs := verbs(perVerb...)
	head := append([]string{"controller", "N", "create→available", "rollout wall", "peak Machines (limit)", "min available (limit)", "watch events"},
		resourceHead(vs, "requests/Machine replaced")...)
	strategy := ""
	if len(rep.Results) > 0 && rep.Results[0].Rollout != nil {
		ro := rep.Results[0].Rollout
		strategy = fmt.Sprintf(" (RollingUpdate, maxSurge %d, maxUnavailable %d)", ro.MaxSurge, ro.MaxUnavailable)
	}
	_, _ = fmt.Fprintf(w, "\nRolling update bench: a MachineDeployment of N=%d%s pointed at new templates, %d Pods per Node, --machine-concurrency %d, sim heartbeat %s, %d sim workers, kube-apiserver %s\n\n",
		rep.N, strategy, rep.PodsPerNode, rep.MachineConcurrency, time.Duration(rep.SimHeartbeatSeconds*float64(time.Second)), rep.SimWorkers, rep.APIServerVersion)
	_, _ = fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
	_, _ = fmt.Fprintln(w, "|"+strings.Repeat("---|", len(head)))
	for _, r := range rep.Results {
		row := []string{r.Controller, fmt.Sprint(rep.N), "—", "—", "—", "—", "—"}
		if ro := r.Rollout; ro != nil {
			if ro.CreateSeconds > 0 {
				row[2] = sec(ro.CreateSeconds)
			}
			if ro.WallSeconds > 0 {
				row[3] = sec(ro.WallSeconds)
			}
			if ro.WatchEvents > 0 {
				row[4] = fmt.Sprintf("%d (≤ %d)", ro.PeakMachines, ro.MostMachines)
				row[5] = fmt.Sprintf("%d (≥ %d)", ro.MinAvailable, ro.FewestAvailable)
				row[6] = fmt.Sprint(ro.WatchEvents)
			}
		}
		_, _ = fmt.Fprintln(w, "| "+strings.Join(append(row, resourceCells(r, vs)...), " | ")+" |")
	}
	_, _ = fmt.Fprintln(w)
	writeResultLines(w, rep)
	_, _ = fmt.Fprintln(w, "The rollout's wall time runs from the template change until every Machine is of the new MachineSet and available, the old")
	_, _ = fmt.Fprintln(w, "ones gone, and the deployment reports N replicas, N updated, N available (polled every 250ms). Peak Machines (being deleted")
	_, _ = fmt.Fprintln(w, "included) and min available are measured after every watch event of the rollout. Requests are the operator's client-go")
	_, _ = fmt.Fprintln(w, "rest_client_requests_total over the rollout (all its controllers), divided by the N Machines replaced; CPU is utime+stime")
	_, _ = fmt.Fprintln(w, "over the same span (in brackets: since it started); peak RSS is its VmHWM.")
	for _, r := range rep.Results {
		if r.Rollout != nil && r.Rollout.WatchRelists > 0 {
			_, _ = fmt.Fprintf(w, "%s: the watch was listed again %d times during the rollout; states between may be unseen.\n", r.Controller, r.Rollout.WatchRelists)
		}
	}
	writeLoadsAndNotes(w, rep)
}

// workloadQPSText says the workload clients' limit as the header shows it.
func workloadQPSText(qps float64) string {
	if qps < 0 {
		return "workload clients without a client-side limit"
	}
	return fmt.Sprintf("--workload-client-qps %g", qps)
}
