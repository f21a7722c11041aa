// Command krtt-sim runs the simulated provider alone against a cluster:
// the sim bootstrap and infrastructure providers, the sim kubelet, CSI
// driver and disruption controller (see package sim). Point it at a
// control plane without real kubelets, e.g. the local control plane.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/test/infrastructure/sim"
)

func main() {
	var (
		metricsAddr, probeAddr string
		opts                   sim.Options
	)
	// --kubeconfig is registered by controller-runtime's config package (ctrl.GetConfig).
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "Address of the Prometheus metrics endpoint (0 disables it).")
	flag.StringVar(&probeAddr, "health-probe-bind-address", "0", "Address of the health and readiness probes (0 disables them).")
	flag.DurationVar(&opts.KubeletGracePeriodCap, "kubelet-grace-cap", sim.DefaultKubeletGracePeriodCap, "Longest a terminating Pod on a sim Node waits before the sim kubelet removes it.")
	flag.DurationVar(&opts.HeartbeatInterval, "heartbeat-interval", sim.DefaultHeartbeatInterval, "Interval of the sim Nodes' Ready heartbeats.")
	flag.DurationVar(&opts.DisruptedPodTimeout, "disrupted-pod-timeout", sim.DefaultDisruptedPodTimeout,
		"How long a Pod the Eviction API recorded in a PodDisruptionBudget's disruptedPods holds the budget while it is not deleted.")
	flag.StringVar(&opts.WatchFilter, "watch-filter", "",
		"Act only on the SimMachines, SimBootstrapConfigs, SimControlPlanes, SimClusters and PodDisruptionBudgets labelled cluster.krtt.dev/watch-filter=VALUE, and label the Nodes registered alike, so a sim runs beside each krtt-operator --watch-filter VALUE; empty acts on all.")
	flag.BoolVar(&opts.WorkloadClusters, "workload-clusters", false,
		"Register the Node of a Machine whose Cluster has a <cluster>-kubeconfig Secret in that workload cluster, and run the kubelet, CSI and disruption controllers there, as krtt-operator reaches it; off, every Node is in the cluster the sim runs against.")
	zopts := zap.Options{Development: false}
	zopts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	log := ctrl.Log.WithName("setup")

	// A bad --watch-filter is a usage error, told before anything else.
	if err := sim.WatchFilter(&ctrl.Options{}, opts.WatchFilter); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "no Kubernetes configuration")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	mgr, err := sim.NewManager(ctx, cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
	}, opts)
	if err != nil {
		log.Error(err, "unable to start the simulated provider")
		os.Exit(1)
	}
	if probeAddr != "0" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			log.Error(err, "health check")
			os.Exit(1)
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			log.Error(err, "ready check")
			os.Exit(1)
		}
	}
	log.Info("starting the sim provider", "kubeletGraceCap", opts.KubeletGracePeriodCap.String(), "heartbeat", opts.HeartbeatInterval.String(), "watchFilter", opts.WatchFilter)
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
