// Command krtt-bench is the Machine lifecycle benchmark (`make bench`,
// `make bench-peer`, or `go run ./cmd/krtt-bench -n 200`).
//
// On a fresh local control plane in .krtt/bench it runs the controller
// under measurement as a separate process, so its CPU time and memory can
// be read from /proc, and the simulated provider in this process. It
// creates a control-plane Machine, then N worker Machines and waits until
// all are Running, puts Pods on every Node, deletes every worker and waits
// until all are gone, and reports: wall time of each half, p50/p95/p99 of
// time-to-Running and time-to-gone, API requests per Machine by verb (the
// controller's rest_client_requests_total), its CPU seconds and peak RSS.
//
// With -peer capi it then does the same, on the same API server and with
// the same simulated provider, N, Pods per Node and concurrency, for the
// Cluster API Machine controller (the core manager of
// sigs.k8s.io/cluster-api, built by `make bench-peer` from hack/capi), and
// adds the ratios. -order both (the default) does that twice, each time on
// a fresh API server, krtt first and then Cluster API first, and reports
// both runs and the mean of each figure, the ratios divided from the means.
// -o json prints the report as one JSON document.
//
// With -profile DIR the controller (krtt, or Cluster API with -peer)
// serves pprof and the bench writes the CPU profile of each process
// (the controller, kube-apiserver, etcd and the bench itself) of each phase
// (create → Running, delete → gone), and the controller's heap at the start
// and end of each, into DIR.
//
// With -instances K it runs K krtt operators, each with its own
// --watch-filter, on K parts of the fleet (a Cluster each, labelled with
// its Machines), and adds their figures up.
//
// With -mode machinesets (or -machinesets) it measures a MachineSet instead
// of N Machines created one by one: scaled from 0 to N, Running, Pods bound,
// scaled to 0, gone.
//
// With -mode rollout (`make bench-rollout`) it measures a rolling update: a
// MachineDeployment of N (default 30) Machines within -max-surge and
// -max-unavailable is pointed at new templates, and the rollout is timed
// until every Machine is of the new MachineSet; the requests are divided by
// the N Machines replaced, and the most Machines and fewest available at any
// watch event are reported and held to the limits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
)

type options struct {
	n, concurrency, podsPerNode, workers, simWorkers int
	// workloadClusters > 0 spreads the Machines over that many Clusters,
	// each with its own workload API server.
	workloadClusters int
	// workloadQPS is krtt's --workload-client-qps with -workload-clusters.
	workloadQPS float64
	// instances > 1 runs that many operator processes, each with its own
	// --watch-filter, on as many parts of the fleet.
	instances                      int
	dir, operatorBin, output, peer string
	// order is which controller runs first with -peer: krtt-first,
	// capi-first, or both (a run of each).
	order string
	// profile is the directory for the profiles of the controllers and
	// of the other processes; empty: none.
	profile          string
	build, peerFirst bool
	// mode is what is measured: modeMachines, modeMachineSets or
	// modeRollout.
	mode                     string
	maxSurge, maxUnavailable int
	timeout, heartbeat       time.Duration
	capi                     capiOptions
	// steps are the fleet sizes of a -steps run (krtt alone at each).
	steps []int
}

// bench is what every measured controller shares.
type bench struct {
	o             options
	root          string
	cp            *localcp.ControlPlane
	client        client.WithWatch
	serverVersion string
	// workloads are the workload clusters of a -workload-clusters run;
	// managementHost is the bench API server's host:port, to tell the
	// requests sent there from those sent to the workload clusters.
	workloads      []*workload
	managementHost string
	// clusters are the Clusters the Machines are spread over (with
	// -workload-clusters or -instances; empty: the flavour's one Cluster).
	clusters []fleetCluster
	// profileDir is where this run writes its profiles; empty: it is not
	// profiled.
	profileDir string
	// etcdPprof and ownPprof are the pprof endpoints of etcd and of this
	// process (the simulated provider, kubelets and clients) in a
	// profiled run.
	etcdPprof, ownPprof string
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 200, "Worker Machines to create and delete.")
	flag.IntVar(&o.concurrency, "machine-concurrency", 10, "Machines each controller reconciles in parallel (its --machine-concurrency).")
	flag.IntVar(&o.podsPerNode, "pods-per-node", 3, "Pods bound to every worker's Node before the deletion.")
	flag.IntVar(&o.workers, "client-workers", 16, "Parallel creates/deletes of the bench driver.")
	flag.IntVar(&o.simWorkers, "sim-workers", 30, "Workers of each controller of the simulated provider (cloud, kubelet, bootstrap, …): enough that the provider never sets the pace of what is measured.")
	flag.StringVar(&o.dir, "dir", filepath.Join(localcp.DefaultDir, "bench"), "State directory of the bench control plane (wiped on start).")
	flag.StringVar(&o.operatorBin, "operator", "bin/krtt-operator", "krtt operator binary (built from ./cmd/krtt-operator first unless -build=false).")
	flag.BoolVar(&o.build, "build", true, "Build the krtt operator binary before running.")
	flag.DurationVar(&o.timeout, "timeout", 0, "Deadline of each half (0: 2m + 1s per Machine).")
	flag.DurationVar(&o.heartbeat, "sim-heartbeat", 5*time.Minute, "How often the simulated kubelet renews an unchanged Node's status (its conditions' lastHeartbeatTime). The default is kubelet's own (nodeStatusReportFrequency, 5m); the simulated kubelets keep no node Leases.")
	flag.StringVar(&o.output, "o", "text", "Output: text (a Markdown table) or json (one JSON document).")
	flag.StringVar(&o.peer, "peer", "", "Also measure this controller after krtt: capi (the Cluster API Machine controller).")
	flag.StringVar(&o.mode, "mode", modeMachines, "What is measured: machines (N Machines created → Running, Pods on every Node, deleted → gone), "+
		"machinesets (a MachineSet scaled 0 → N (the scale subresource) → Running, Pods on every Node, then N → 0 → gone) or "+
		"rollout (a MachineDeployment of N Machines, Pods on every Node, pointed at new templates and rolled out; -n defaults to 30).")
	steps := flag.String("steps", "", "Scale steps: krtt alone at each of these N (comma-separated, e.g. 1000,5000,10000), each on a fresh API server; one table of CPU and peak RSS per Machine (`make bench-scale`). Replaces -n.")
	machineSets := flag.Bool("machinesets", false, "Short for -mode machinesets.")
	flag.IntVar(&o.maxSurge, "max-surge", 3, "-mode rollout: the MachineDeployment's maxSurge.")
	flag.IntVar(&o.maxUnavailable, "max-unavailable", 0, "-mode rollout: the MachineDeployment's maxUnavailable.")
	flag.StringVar(&o.order, "order", orderBoth, "With -peer: which controller runs first on the fresh API server: krtt-first, capi-first, or both (a run of each, each on its own fresh API server; the report gives both and their mean). The ratios stay peer ÷ krtt.")
	flag.BoolVar(&o.peerFirst, "peer-first", false, "Same as -order capi-first.")
	flag.StringVar(&o.profile, "profile", "", "Write the CPU profile of each phase (create, delete) of the controller (krtt, and Cluster API with -peer), kube-apiserver, etcd and the bench itself (the simulated provider, kubelets and clients), and the controller's heap at the start and end of each, into this directory (one subdirectory per run); the controller then serves pprof on loopback.")
	flag.IntVar(&o.workloadClusters, "workload-clusters", 0,
		"Spread the N Machines over this many Clusters, each with its own workload API server (a local control plane) and <cluster>-kubeconfig Secret; requests are split into management and workload. 0: self-hosted.")
	flag.Float64Var(&o.workloadQPS, "workload-client-qps", -1,
		"With -workload-clusters: krtt's --workload-client-qps. The default, no client-side limit, is what the management client has and what Cluster API gets next to krtt (--clustercache-client-qps -1): the API servers are what is measured; 20 is the operator's default.")
	flag.IntVar(&o.instances, "instances", 1,
		"Run this many krtt operator processes, each with --watch-filter instance-I, and spread the N Machines over as many Clusters labelled for them (or over the -workload-clusters, round-robin); the figures add the instances up and each one's are shown.")
	flag.StringVar(&o.capi.manager, "capi-manager", "bin/capi-manager", "Cluster API core manager binary (`make bench-peer` builds it).")
	flag.StringVar(&o.capi.crds, "capi-crds", "", "Cluster API CRD directory (default: core/config/crd/bases of the module hack/capi requires).")
	flag.Parse()
	if *machineSets {
		o.mode = modeMachineSets
	}
	if o.mode == modeRollout && !flagSet("n") {
		o.n = 30
	}
	if o.timeout == 0 {
		o.timeout = 2*time.Minute + time.Duration(o.n)*time.Second
	}
	if o.peerFirst {
		if o.order != orderBoth && o.order != orderPeerFirst {
			fmt.Fprintf(os.Stderr, "bench: -peer-first and -order %s disagree\n", o.order)
			os.Exit(2)
		}
		o.order = orderPeerFirst
	}
	var err error
	if o.steps, err = parseSteps(*steps); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := validate(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func validate(o options) error {
	switch {
	case o.n < 1:
		return fmt.Errorf("-n %d: need at least one Machine", o.n)
	case o.podsPerNode < 0:
		return fmt.Errorf("-pods-per-node %d: cannot be negative", o.podsPerNode)
	case o.workers < 1 || o.concurrency < 1:
		return errors.New("-client-workers and -machine-concurrency must be at least 1")
	case o.output != "text" && o.output != "json":
		return fmt.Errorf("-o %q: want text or json", o.output)
	case o.peer != "" && o.peer != "capi":
		return fmt.Errorf("-peer %q: the only peer is capi", o.peer)
	case o.mode != modeMachines && o.mode != modeMachineSets && o.mode != modeRollout:
		return fmt.Errorf("-mode %q: want machines, machinesets or rollout", o.mode)
	case o.peer != "" && o.mode != modeMachines:
		return fmt.Errorf("-mode %s measures krtt only; drop -peer", o.mode)
	case o.mode == modeRollout && (o.maxSurge < 0 || o.maxUnavailable < 0 || (o.maxSurge == 0 && o.maxUnavailable == 0)):
		return fmt.Errorf("-max-surge %d -max-unavailable %d: neither may be negative, nor both 0", o.maxSurge, o.maxUnavailable)
	case o.workloadClusters < 0:
		return fmt.Errorf("-workload-clusters %d: cannot be negative", o.workloadClusters)
	case o.workloadClusters > 0 && (o.peer != "" || o.mode != modeMachines):
		return errors.New("-workload-clusters measures krtt's Machines only; drop -peer and -mode")
	case o.instances < 1:
		return fmt.Errorf("-instances %d: need at least one operator", o.instances)
	case o.instances > 1 && (o.peer != "" || o.mode != modeMachines):
		return errors.New("-instances measures krtt's Machines only; drop -peer and -mode")
	case o.instances > 1 && o.workloadClusters > 0 && o.workloadClusters < o.instances:
		return fmt.Errorf("-instances %d over -workload-clusters %d: every instance needs a Cluster", o.instances, o.workloadClusters)
	case o.profile != "" && o.instances > 1:
		return errors.New("-profile profiles one operator; drop -instances")
	case len(o.steps) > 0 && (o.peer != "" || o.mode != modeMachines || o.instances > 1 || o.workloadClusters > 0):
		return errors.New("-steps measures krtt's Machines alone; drop -peer, -mode, -instances and -workload-clusters")
	}
	_, err := planRuns(o.peer, o.order)
	return err
}

// Modes of -mode.
const (
	modeMachines    = "machines"
	modeMachineSets = "machinesets"
	modeRollout     = "rollout"
)

// flagSet says whether the command line set the flag (a default that
// depends on -mode must not override it).
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func run(o options) error {
	root, err := localcp.Root()
	if err != nil {
		return err
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(root, p)
	}
	o.operatorBin, o.capi.manager, o.capi.crds, o.profile = abs(o.operatorBin), abs(o.capi.manager), abs(o.capi.crds), abs(o.profile)
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
	krtt := krttFlavour(root, o.operatorBin, o.build)
	switch o.mode {
	case modeMachineSets:
		krtt.name = "krtt-machineset"
	case modeRollout:
		krtt.name = "krtt-rollout"
	}
	if len(o.steps) > 0 {
		sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stopSignals()
		return runSteps(sigCtx, o, root, krtt, o.steps, flagSet("timeout"))
	}
	byName := map[string]flavour{"krtt": krtt}
	if o.peer == "capi" {
		if o.capi.crds == "" {
			if o.capi.crds, err = capiCRDDir(root); err != nil {
				return err
			}
		}
		o.capi.version = capiVersion(root)
		byName["capi"] = capiFlavour(o.capi)
	}
	plan, err := planRuns(o.peer, o.order)
	if err != nil {
		return err
	}

	// Ctrl-C or SIGTERM: stop waiting, then shut everything down in order.
	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	var runs []*Report
	var runErr error
	for i, names := range plan {
		if sigCtx.Err() != nil {
			break
		}
		flavours := make([]flavour, len(names))
		for j, n := range names {
			flavours[j] = byName[n]
		}
		label := runLabel(names)
		if len(plan) > 1 {
			logf("=== run %d of %d: %s, on a fresh API server", i+1, len(plan), strings.Join(names, " first, then "))
		}
		r, err := runOnce(sigCtx, o, root, flavours, label)
		if err != nil {
			if len(runs) == 0 {
				return err
			}
			// The runs before it stand on their own: report them.
			runErr = fmt.Errorf("run %d of %d (%s): %w", i+1, len(plan), label, err)
			logf("%v", runErr)
			break
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return sigCtx.Err()
	}
	rep := combine(runs, o.order)
	if o.peer != "" {
		rep.Notes = peerNotes(o)
	}
	if o.profile != "" {
		rep.Notes = append(rep.Notes, "Profiled (-profile): each controller, kube-apiserver, etcd and the bench were CPU-profiled during both phases, which costs them a little CPU.")
	}
	if o.output == "json" {
		if err := writeJSON(os.Stdout, rep); err != nil {
			return err
		}
	} else {
		writeTable(os.Stdout, rep)
	}
	var failed []string
	for _, r := range runs {
		for _, res := range r.Results {
			if res.Error != "" {
				failed = append(failed, res.Controller)
			}
		}
	}
	if len(failed) > 0 {
		runErr = errors.Join(runErr, fmt.Errorf("%s did not finish (see the report)", strings.Join(failed, ", ")))
	}
	return errors.Join(runErr, sigCtx.Err())
}

// runOnce measures the flavours one after the other on a fresh control
// plane and simulated provider, and reports their figures.
func runOnce(sigCtx context.Context, o options, root string, flavours []flavour, label string) (rep *Report, err error) {
	cp, err := localcp.Start(localcp.Options{Dir: o.dir, Fresh: true, Port: -1, Log: logWriter{}, EtcdProfiling: o.profile != ""})
	if err != nil {
		return nil, err
	}
	defer func() {
		logf("stopping kube-apiserver and etcd")
		err = errors.Join(err, cp.Stop())
	}()
	logFile, err := os.Create(filepath.Join(cp.Dir, "logs", "sim.log"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))

	var workloads []*workload
	if o.workloadClusters > 0 {
		logf("starting %d workload API servers", o.workloadClusters)
		var stopWorkloads func() error
		if workloads, stopWorkloads, err = startWorkloads(o.dir, o.workloadClusters); err != nil {
			return nil, err
		}
		defer func() {
			logf("stopping the workload API servers")
			err = errors.Join(err, stopWorkloads())
		}()
	}

	// The driver and the sim are not what is measured: let them go fast.
	fast := *cp.Config
	fast.QPS, fast.Burst = 2000, 4000
	c, err := client.NewWithWatch(&fast, client.Options{Scheme: cp.Scheme})
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(&fast)
	if err != nil {
		return nil, err
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver version: %w", err)
	}

	ctx, cancel := context.WithCancel(sigCtx)
	defer cancel()

	// The simulated provider, in this process, for every controller.
	// A cloud provisions VMs in parallel: with controller-runtime's one
	// worker per controller the simulated cloud, kubelet and bootstrap
	// provider handled one object at a time and, at N = 1,000, were what
	// create→Running waited on, whatever the controller under test did.
	// Each run of -order both sets the provider up again in this process,
	// under the same controller names.
	simMgr, err := sim.NewManager(ctx, &fast, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{MaxConcurrentReconciles: o.simWorkers, SkipNameValidation: ptr.To(true)}},
		sim.Options{KubeletGracePeriodCap: time.Second, HeartbeatInterval: o.heartbeat, WorkloadClusters: len(workloads) > 0})
	if err != nil {
		return nil, err
	}
	simDone := make(chan error, 1)
	go func() { simDone <- simMgr.Start(ctx) }()
	defer func() {
		cancel()
		if e := <-simDone; e != nil {
			err = errors.Join(err, fmt.Errorf("sim manager: %w", e))
		}
	}()

	mgmtHost, err := hostOf(fast.Host)
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, root: root, cp: cp, client: c, serverVersion: sv.GitVersion, workloads: workloads, managementHost: mgmtHost,
		clusters: layFleet(workloads, o.instances)}
	if o.profile != "" {
		b.profileDir = filepath.Join(o.profile, label)
		b.etcdPprof = strings.TrimSuffix(cp.EtcdURL, "/") + "/debug/pprof"
		var stopOwn func()
		if b.ownPprof, stopOwn, err = serveOwnPprof(); err != nil {
			return nil, err
		}
		defer stopOwn()
	}
	rep = &Report{Mode: o.mode, N: o.n, PodsPerNode: o.podsPerNode, MachineConcurrency: o.concurrency,
		SimHeartbeatSeconds: o.heartbeat.Seconds(), SimWorkers: o.simWorkers, APIServerVersion: sv.GitVersion, Started: time.Now().UTC().Round(time.Second),
		WorkloadClusters: len(workloads), Clusters: len(b.clusters)}
	if len(workloads) > 0 {
		rep.WorkloadClientQPS = &o.workloadQPS
	}
	if o.instances > 1 {
		rep.Instances = o.instances
	}
	for _, f := range flavours {
		if ctx.Err() != nil {
			break
		}
		res := measure(ctx, b, f)
		if res.Error != "" {
			logf("%s: %s", f.name, res.Error)
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// peerNotes say what the side-by-side figures include, so nobody reads
// more into a ratio than it holds.
func peerNotes(o options) []string {
	order := "krtt first, then Cluster API"
	switch o.order {
	case orderPeerFirst:
		order = "Cluster API first, then krtt"
	case orderBoth:
		order = "in each run, one after the other; krtt first in one run and Cluster API first in the other, each run on a fresh kube-apiserver"
	}
	notes := []string{
		fmt.Sprintf("Both ran on one kube-apiserver (%s, each in its own namespace, the other stopped), with the same simulated provider, ", order) +
			fmt.Sprintf("N, Pods per Node, --machine-concurrency %d and client-side rate limits off (capi: --kube-api-qps -1 --clustercache-client-qps -1).", o.concurrency),
		"Cluster API's workload cluster is the same API server (a <cluster>-kubeconfig Secret), so its Node, Pod and eviction requests are counted as well.",
		"capi-manager runs all core Cluster API controllers (Cluster, MachineSet, MachineDeployment, MachineHealthCheck, ClusterClass, …) in one process: its CPU and RSS include their (idle) share.",
		"No Cluster API webhooks are installed, so the bench sets what its Machine defaulting webhook would (cluster-name label, nodeDeletionTimeoutSeconds 10).",
		"krtt logs at error level; capi-manager at its default verbosity.",
	}
	if o.podsPerNode > 0 {
		notes = append(notes, "Cluster API re-checks a drain 20s after evicting, so no Machine with Pods on its Node is gone in less; krtt is woken when the Pods go.")
	}
	return notes
}

type logWriter struct{}

func (logWriter) Write(p []byte) (int, error) {
	logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
