// Command bench is the krtt scale benchmark (`make bench-scale`, or
// `go run ./bench -n 200`). It is a main package without tests, so
// `go test ./...` never runs it.
//
// On a fresh local control plane in .krtt/bench it runs the operator as a
// separate process (bin/krtt-operator, built first) so its CPU time and
// memory can be read from /proc, and the simulated provider in this process.
// It creates N Machines and waits until all are Running, puts 3 Pods on
// every Node, deletes every Machine and waits until all are gone, then
// prints one table: wall time of each half, p50/p95/p99 of time-to-Running
// and time-to-gone, API requests per Machine made by the operator by verb
// (from its rest_client_requests_total metric), its CPU seconds and peak RSS.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	simv1 "github.com/krtt-dev/krtt/api/sim/v1alpha1"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/localcp"
	"github.com/krtt-dev/krtt/sim"
)

const ns = "bench"

type options struct {
	n, concurrency, podsPerNode, workers int
	dir, operatorBin                     string
	build                                bool
	timeout, heartbeat                   time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 200, "Machines to create and delete.")
	flag.IntVar(&o.concurrency, "machine-concurrency", 10, "Passed to the operator's --machine-concurrency.")
	flag.IntVar(&o.podsPerNode, "pods-per-node", 3, "Pods bound to every Node before the deletion.")
	flag.IntVar(&o.workers, "client-workers", 16, "Parallel creates/deletes of the bench driver.")
	flag.StringVar(&o.dir, "dir", filepath.Join(localcp.DefaultDir, "bench"), "State directory of the bench control plane (wiped on start).")
	flag.StringVar(&o.operatorBin, "operator", "bin/krtt-operator", "Operator binary (built from ./cmd/krtt-operator first unless -build=false).")
	flag.BoolVar(&o.build, "build", true, "Build the operator binary before running.")
	flag.DurationVar(&o.timeout, "timeout", 0, "Deadline of each half (0: 2m + 1s per Machine).")
	flag.DurationVar(&o.heartbeat, "sim-heartbeat", time.Minute, "Node heartbeat interval of the simulated kubelet (each heartbeat updates the Node and so reconciles its Machine).")
	flag.Parse()
	if o.timeout == 0 {
		o.timeout = 2*time.Minute + time.Duration(o.n)*time.Second
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func run(o options) (err error) {
	root, err := localcp.Root()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(o.operatorBin) {
		o.operatorBin = filepath.Join(root, o.operatorBin)
	}
	if o.build {
		logf("building %s", o.operatorBin)
		cmd := exec.Command("go", "build", "-o", o.operatorBin, "./cmd/krtt-operator")
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build the operator: %w", err)
		}
	}
	if _, err := os.Stat(o.operatorBin); err != nil {
		return fmt.Errorf("operator binary: %w (run `make build`)", err)
	}

	cp, err := localcp.Start(localcp.Options{Dir: o.dir, Fresh: true, Port: -1, Log: logWriter{}})
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping kube-apiserver and etcd")
		err = errors.Join(err, cp.Stop())
	}()
	logFile, err := os.Create(filepath.Join(cp.Dir, "logs", "sim.log"))
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))

	// The driver and the sim are not what is measured: let them go fast.
	fast := ctrlRestConfig(cp)
	c, err := client.New(fast, client.Options{Scheme: cp.Scheme})
	if err != nil {
		return err
	}

	// Ctrl-C or SIGTERM: stop waiting, then shut everything down in order.
	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	ctx, cancel := context.WithCancel(sigCtx)
	defer cancel()

	// The simulated provider, in this process.
	simMgr, err := ctrl.NewManager(fast, ctrl.Options{Scheme: sim.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	if err := sim.SetupWithManager(ctx, simMgr, sim.Options{KubeletGracePeriodCap: time.Second, HeartbeatInterval: o.heartbeat}); err != nil {
		return err
	}
	simDone := make(chan error, 1)
	go func() { simDone <- simMgr.Start(ctx) }()
	defer func() {
		cancel()
		if e := <-simDone; e != nil {
			err = errors.Join(err, fmt.Errorf("sim manager: %w", e))
		}
	}()

	// The operator, as a separate process.
	op, err := startOperator(o, cp)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	if err := op.waitReady(60 * time.Second); err != nil {
		return err
	}

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	if err := c.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"}}); err != nil {
		return err
	}
	before, err := op.scrape()
	if err != nil {
		return err
	}
	cpu0, err := cpuSeconds(op.cmd.Process.Pid)
	if err != nil {
		return err
	}

	// Half 1: create → Running.
	names := make([]string, o.n)
	for i := range names {
		names[i] = fmt.Sprintf("m-%04d", i)
	}
	logf("creating %d Machines (with their SimBootstrapConfigs and SimMachines)", o.n)
	created := make([]time.Time, o.n)
	t0 := time.Now()
	if err := parallel(o.workers, o.n, func(i int) error {
		created[i] = time.Now()
		return createMachine(ctx, c, names[i])
	}); err != nil {
		return err
	}
	running, err := waitAll(ctx, c, o.n, o.timeout, "Running", func(m *clusterv1.Machine) bool {
		return m.Status.Phase == clusterv1.MachinePhaseRunning
	}, names)
	if err != nil {
		return err
	}
	createWall := time.Since(t0)
	toRunning := durations(names, created, running)
	logf("all %d Machines Running in %s", o.n, createWall.Round(time.Millisecond))

	// Pods on every Node.
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	nodes := make([]string, 0, len(list.Items))
	for _, m := range list.Items {
		if m.Status.NodeRef == nil {
			return fmt.Errorf("Machine %s is Running without a Node", m.Name)
		}
		nodes = append(nodes, m.Status.NodeRef.Name)
	}
	logf("binding %d Pods (%d per Node)", o.podsPerNode*len(nodes), o.podsPerNode)
	tp := time.Now()
	if err := parallel(o.workers, len(nodes)*o.podsPerNode, func(i int) error {
		node := nodes[i/o.podsPerNode]
		return c.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-p%d", node, i%o.podsPerNode)},
			Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
		})
	}); err != nil {
		return err
	}
	if err := waitPodsRunning(ctx, c, len(nodes)*o.podsPerNode, o.timeout); err != nil {
		return err
	}
	logf("all Pods Running in %s", time.Since(tp).Round(time.Millisecond))

	// Half 2: delete → gone.
	logf("deleting %d Machines", o.n)
	deleted := make([]time.Time, o.n)
	t1 := time.Now()
	if err := parallel(o.workers, o.n, func(i int) error {
		deleted[i] = time.Now()
		return c.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i]}})
	}); err != nil {
		return err
	}
	gone, err := waitGone(ctx, c, o.n, o.timeout, names)
	if err != nil {
		return err
	}
	deleteWall := time.Since(t1)
	toGone := durations(names, deleted, gone)
	logf("all %d Machines gone in %s", o.n, deleteWall.Round(time.Millisecond))

	after, err := op.scrape()
	if err != nil {
		return err
	}
	cpu1, err := cpuSeconds(op.cmd.Process.Pid)
	if err != nil {
		return err
	}
	hwm, err := peakRSS(op.cmd.Process.Pid)
	if err != nil {
		return err
	}

	printTable(o, createWall, deleteWall, toRunning, toGone, before, after, cpu1-cpu0, cpu1, hwm)
	return nil
}

func ctrlRestConfig(cp *localcp.ControlPlane) *rest.Config {
	cfg := *cp.Config
	cfg.QPS, cfg.Burst = 2000, 4000
	return &cfg
}

func createMachine(ctx context.Context, c client.Client, name string) error {
	if err := c.Create(ctx, &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		return err
	}
	if err := c.Create(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		return err
	}
	return c.Create(ctx, &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineSpec{
			ClusterName: "bench",
			Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
				APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfig", Name: name}},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: name},
		},
	})
}

// parallel runs fn(0..n-1) on workers goroutines; the first error wins.
func parallel(workers, n int, fn func(int) error) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errOnce.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

const pollEvery = 250 * time.Millisecond

// waitAll polls the Machines until every one of names satisfied ok once,
// and returns when each was first seen so.
func waitAll(ctx context.Context, c client.Client, n int, timeout time.Duration, what string, ok func(*clusterv1.Machine) bool, names []string) (map[string]time.Time, error) {
	seen := make(map[string]time.Time, n)
	deadline := time.Now().Add(timeout)
	lastLog := time.Now()
	for {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		now := time.Now()
		phases := map[string]int{}
		for i := range list.Items {
			m := &list.Items[i]
			if _, done := seen[m.Name]; !done && ok(m) {
				seen[m.Name] = now
			}
			phases[string(m.Status.Phase)]++
		}
		if len(seen) == n {
			return seen, nil
		}
		if now.After(deadline) {
			return nil, fmt.Errorf("only %d of %d Machines %s within %s (phases now: %v)", len(seen), n, what, timeout, phases)
		}
		if time.Since(lastLog) > 10*time.Second {
			logf("%d/%d %s (phases: %v)", len(seen), n, what, phases)
			lastLog = time.Now()
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return nil, err
		}
	}
}

// waitGone polls until none of names is listed, recording when each was
// first missing.
func waitGone(ctx context.Context, c client.Client, n int, timeout time.Duration, names []string) (map[string]time.Time, error) {
	gone := make(map[string]time.Time, n)
	deadline := time.Now().Add(timeout)
	lastLog := time.Now()
	for {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		now := time.Now()
		present := make(map[string]bool, len(list.Items))
		reasons := map[string]int{}
		for i := range list.Items {
			present[list.Items[i].Name] = true
			reasons[list.Items[i].Status.State]++
		}
		for _, name := range names {
			if _, done := gone[name]; !done && !present[name] {
				gone[name] = now
			}
		}
		if len(gone) == n {
			return gone, nil
		}
		if now.After(deadline) {
			return nil, fmt.Errorf("only %d of %d Machines gone within %s (states now: %v)", len(gone), n, timeout, reasons)
		}
		if time.Since(lastLog) > 10*time.Second {
			logf("%d/%d gone (states: %v)", len(gone), n, reasons)
			lastLog = time.Now()
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return nil, err
		}
	}
}

func waitPodsRunning(ctx context.Context, c client.Client, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		running := 0
		for i := range pods.Items {
			if pods.Items[i].Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d Pods Running within %s", running, n, timeout)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func durations(names []string, start []time.Time, end map[string]time.Time) []time.Duration {
	out := make([]time.Duration, len(names))
	for i, name := range names {
		out[i] = end[name].Sub(start[i])
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// pct is the nearest-rank percentile of sorted durations.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

// operatorProc is the operator under measurement.
type operatorProc struct {
	cmd     *exec.Cmd
	metrics string
	probe   string
	done    chan error
	log     *os.File
}

func startOperator(o options, cp *localcp.ControlPlane) (*operatorProc, error) {
	mport, err := localcp.FreePort()
	if err != nil {
		return nil, err
	}
	pport, err := localcp.FreePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(cp.Dir, "logs", "operator.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &operatorProc{
		metrics: fmt.Sprintf("127.0.0.1:%d", mport),
		probe:   fmt.Sprintf("127.0.0.1:%d", pport),
		done:    make(chan error, 1),
		log:     lf,
	}
	p.cmd = exec.Command(o.operatorBin,
		"--kubeconfig", cp.Kubeconfig,
		"--metrics-bind-address", p.metrics,
		"--health-probe-bind-address", p.probe,
		"--machine-concurrency", strconv.Itoa(o.concurrency),
		"--zap-log-level", "error")
	p.cmd.Env = append(os.Environ(), "KUBECONFIG=")
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches us, we stop it
	if err := p.cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("start %s: %w", o.operatorBin, err)
	}
	logf("operator pid %d, metrics http://%s/metrics, log %s", p.cmd.Process.Pid, p.metrics, logPath)
	go func() { p.done <- p.cmd.Wait() }()
	return p, nil
}

func (p *operatorProc) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("operator exited early (%v); see %s", err, p.log.Name())
		default:
		}
		resp, err := http.Get("http://" + p.probe + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if _, err := p.scrape(); err == nil {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("operator not ready within %s; see %s", timeout, p.log.Name())
		}
		time.Sleep(pollEvery)
	}
}

func (p *operatorProc) stop() error {
	defer func() { _ = p.log.Close() }()
	select {
	case err := <-p.done:
		return fmt.Errorf("operator exited before the end: %v", err)
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("operator did not stop within 30s of SIGTERM; killed")
	}
}

// scrape returns rest_client_requests_total summed by method.
func (p *operatorProc) scrape() (map[string]float64, error) {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	return parseRequests(resp.Body)
}

func parseRequests(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		_, labels, _ := strings.Cut(line, "{")
		labels, value, _ := strings.Cut(labels, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		method := "?"
		for _, kv := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(kv, "="); ok && k == "method" {
				method = strings.Trim(val, `"`)
			}
		}
		out[method] += v
	}
	return out, sc.Err()
}

// cpuSeconds reads utime+stime of a process (USER_HZ is 100 on Linux).
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command: state is field 3, utime 14, stime 15.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ut, err1 := strconv.ParseFloat(fields[11], 64)
	st, err2 := strconv.ParseFloat(fields[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (ut + st) / 100, nil
}

// peakRSS reads VmHWM (KiB) of a process.
func peakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

func printTable(o options, createWall, deleteWall time.Duration, toRunning, toGone []time.Duration, before, after map[string]float64, cpuDelta, cpuTotal float64, hwmKiB int64) {
	verbs := []string{"GET", "LIST", "POST", "PUT", "PATCH", "DELETE"}
	seen := map[string]bool{}
	for _, v := range verbs {
		seen[v] = true
	}
	var extra []string
	for v := range after {
		if !seen[v] {
			extra = append(extra, v)
		}
	}
	sort.Strings(extra)
	verbs = append(verbs, extra...)
	per := func(v string) string {
		return fmt.Sprintf("%.1f", (after[v]-before[v])/float64(o.n))
	}
	total := 0.0
	for v := range after {
		total += after[v] - before[v]
	}
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

	fmt.Printf("\nkrtt scale bench: %d Machines, %d Pods per Node, operator --machine-concurrency %d, sim heartbeat %s\n\n",
		o.n, o.podsPerNode, o.concurrency, o.heartbeat)
	head := []string{"N", "create→Running wall", "to-Running p50/p95/p99", "delete→gone wall", "to-gone p50/p95/p99"}
	for _, v := range verbs {
		head = append(head, v+"/Machine")
	}
	head = append(head, "requests/Machine", "operator CPU", "operator peak RSS")
	row := []string{
		strconv.Itoa(o.n),
		sec(createWall),
		sec(pct(toRunning, 50)) + " / " + sec(pct(toRunning, 95)) + " / " + sec(pct(toRunning, 99)),
		sec(deleteWall),
		sec(pct(toGone, 50)) + " / " + sec(pct(toGone, 95)) + " / " + sec(pct(toGone, 99)),
	}
	for _, v := range verbs {
		row = append(row, per(v))
	}
	row = append(row, fmt.Sprintf("%.1f", total/float64(o.n)),
		fmt.Sprintf("%.1fs (%.1fs incl. start)", cpuDelta, cpuTotal),
		fmt.Sprintf("%.0f MiB", float64(hwmKiB)/1024))
	fmt.Println("| " + strings.Join(head, " | ") + " |")
	seps := make([]string, len(head))
	for i := range seps {
		seps[i] = "---"
	}
	fmt.Println("|" + strings.Join(seps, "|") + "|")
	fmt.Println("| " + strings.Join(row, " | ") + " |")
	fmt.Println()
	fmt.Println("Requests are the operator's rest_client_requests_total (client-go, by method) between just before the first create and the end, divided by N;")
	fmt.Println("CPU is utime+stime of the operator process over the same span; peak RSS is its VmHWM.")
}

type logWriter struct{}

func (logWriter) Write(p []byte) (int, error) {
	logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
