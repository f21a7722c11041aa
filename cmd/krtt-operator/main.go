// Command krtt-operator runs the krtt Machine controller: the Machine
// lifecycle of Cluster API, decided by the tables in transitions/machine.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/actions/controller"
	"github.com/krtt-dev/krtt/internal/selfhosted"
)

func main() {
	var (
		metricsAddr, probeAddr, pprofAddr string
		metricsSecure                     bool
		metricsCertDir                    string
		tablesDir                         string
		leaderElect                       bool
		leaderElectionNamespace           string
		leaseDuration, renewDeadline      time.Duration
		retryPeriod                       time.Duration
		concurrency                       int
		watchFilter                       string
		selfHostedClusters                bool
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", actions.DefaultMetricsAddress, "Address of the Prometheus metrics endpoint (0 disables it).")
	flag.BoolVar(&metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS to scrapers whose token RBAC allows get on /metrics (the metrics-reader ClusterRole); false serves plain HTTP to anyone.")
	flag.StringVar(&metricsCertDir, "metrics-cert-dir", "",
		"Directory holding the metrics endpoint's tls.crt and tls.key (reloaded when they change); empty: a self-signed certificate made at start.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address of the health and readiness probes.")
	flag.StringVar(&pprofAddr, "profiler-address", "", "Address of the pprof endpoint (/debug/pprof/), e.g. 127.0.0.1:6060; empty disables it.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader so only one replica reconciles.")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease (default: the Pod's namespace in a cluster; required outside one).")
	flag.DurationVar(&leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a lost leader's Lease holds before another replica takes over.")
	flag.DurationVar(&renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps retrying to renew before it gives up leadership.")
	flag.DurationVar(&retryPeriod, "leader-election-retry-period", 2*time.Second, "How often replicas try to acquire or renew the Lease.")
	flag.IntVar(&concurrency, "machine-concurrency", 10, "Machines reconciled in parallel.")
	flag.StringVar(&watchFilter, "watch-filter", "",
		"Manage only the Machines, MachineSets and Clusters labelled cluster.krtt.dev/watch-filter=VALUE, so several instances can each run a part of a fleet (label a Cluster and all its Machines alike); empty manages all.")
	flag.BoolVar(&selfHostedClusters, selfhosted.Flag, false,
		"Serve Clusters without a <cluster>-kubeconfig Secret, whose Nodes are in the management cluster: watches its Nodes, Pods and PodDisruptionBudgets "+
			"and needs the ClusterRole of "+selfhosted.RBACDir+". Off, such a Cluster is WorkloadClusterReachable=False (NoAccess) and the operator needs only config/rbac.")
	workloadOptions := controller.BindWorkloadClientFlags(flag.CommandLine)
	compileNodeSync := controller.BindNodeSyncFlags(flag.CommandLine)
	flag.StringVar(&tablesDir, "tables", "", "Load the Machine, MachineSet and Cluster tables from this directory instead of the embedded ones; the operator refuses to start on any lint finding.")
	opts := zap.Options{Development: false}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	nodeSync, err := compileNodeSync()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sets, err := actions.LoadSets(tablesDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "no Kubernetes configuration")
		os.Exit(1)
	}
	mgrOpts := ctrl.Options{
		Metrics:                 actions.MetricsOptions(metricsAddr, metricsSecure, metricsCertDir),
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        pprofAddr,
		LeaderElection:          leaderElect,
		LeaderElectionNamespace: leaderElectionNamespace,
		LeaseDuration:           &leaseDuration,
		RenewDeadline:           &renewDeadline,
		RetryPeriod:             &retryPeriod,
	}
	if err := actions.WatchFilter(&mgrOpts, watchFilter); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mgr, err := actions.NewManager(cfg, mgrOpts)
	if err != nil {
		log.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	workload := workloadOptions()
	if err := actions.Setup(ctx, mgr, sets, controller.Options{Concurrency: concurrency, SelfHostedClusters: selfHostedClusters,
		Workload: workload, NodeSync: nodeSync}); err != nil {
		log.Error(err, "unable to set up the controllers")
		os.Exit(1)
	}
	if err := actions.AddProbes(mgr); err != nil {
		log.Error(err, "health and readiness checks")
		os.Exit(1)
	}
	log.Info("starting", "tables", orEmbedded(tablesDir), "machineConcurrency", concurrency, "watchFilter", watchFilter, "selfHostedClusters", selfHostedClusters,
		"workloadClientQPS", workload.ClientQPS, "workloadClientBurst", workload.ClientBurst, "additionalSyncMachineLabels", len(nodeSync.Labels),
		"additionalSyncMachineAnnotations", len(nodeSync.Annotations))
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func orEmbedded(dir string) string {
	if dir == "" {
		return "embedded"
	}
	return dir
}
