// Command krtt-sim runs the simulated provider alone against a cluster:
// the sim bootstrap and infrastructure providers, the sim kubelet, CSI
// driver and disruption controller (see package sim). Point it at a
// control plane without real kubelets, e.g. the local control plane.
package main

import (
	"flag"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/sim"
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
	zopts := zap.Options{Development: false}
	zopts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	log := ctrl.Log.WithName("setup")

	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "no Kubernetes configuration")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 sim.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
	})
	if err != nil {
		log.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := sim.SetupWithManager(ctx, mgr, opts); err != nil {
		log.Error(err, "unable to set up the sim controllers")
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
	log.Info("starting the sim provider", "kubeletGraceCap", opts.KubeletGracePeriodCap.String(), "heartbeat", opts.HeartbeatInterval.String())
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
