// Command krtt-local is what `make run` runs.
//
// With --kubeconfig (or $KUBECONFIG) and without --local it runs the krtt
// operator against that cluster, as `make run` does in a Kubebuilder project.
// Otherwise it starts a local control plane (etcd and kube-apiserver from
// bin/k8s, state kept in .krtt/), runs the operator and the simulated
// provider (sim.krtt.dev: bootstrap, cloud, kubelet, CSI, disruption) in this
// process, applies config/samples and runs until Ctrl-C or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/actions/controller"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/internal/selfhosted"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
)

type flags struct {
	local, fresh, leaderElect, samples bool
	selfHosted                         bool
	// sets are every controller's table set, loaded from tablesDir.
	sets                   actions.TableSets
	dir, tablesDir         string
	metricsAddr, probeAddr string
	concurrency, port      int
	heartbeat              time.Duration
	nodeSync               controller.NodeSync
	workload               remote.Options
}

func main() {
	var f flags
	flag.BoolVar(&f.local, "local", false, "Start the local control plane even when --kubeconfig or $KUBECONFIG names a cluster.")
	flag.BoolVar(&f.fresh, "fresh", false, "Local control plane: remove the state directory first (start from an empty cluster).")
	flag.StringVar(&f.dir, "dir", localcp.DefaultDir, "Local control plane: directory keeping etcd data, kubeconfig and logs.")
	flag.IntVar(&f.port, "port", localcp.DefaultPort, "Local control plane: kube-apiserver port on 127.0.0.1 (a free one is used when it is taken).")
	flag.BoolVar(&f.samples, "samples", true, "Local control plane: create the objects of config/samples that do not exist yet.")
	flag.DurationVar(&f.heartbeat, "sim-heartbeat", 0, "Local control plane: Node heartbeat interval of the simulated kubelet (0: the sim default).")
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "Address of the operator's Prometheus metrics endpoint (0 disables it).")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "Address of the health and readiness probes.")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "Elect a leader so only one replica reconciles (existing cluster only).")
	flag.IntVar(&f.concurrency, "machine-concurrency", 10, "Machines reconciled in parallel.")
	// On here, unlike krtt-operator: the samples' Cluster without a Secret
	// is self-hosted (the simulated provider's Nodes are in the local
	// control plane), and against an existing cluster the operator runs
	// with its user's rights, not config/rbac.
	flag.BoolVar(&f.selfHosted, selfhosted.Flag, true, "Serve Clusters without a kubeconfig Secret, whose Nodes are in the management cluster (krtt-operator --"+selfhosted.Flag+").")
	flag.StringVar(&f.tablesDir, "tables", "", "Load the Machine, MachineSet and Cluster tables from this directory instead of the embedded ones; the operator refuses to start on any lint finding.")
	compileNodeSync := controller.BindNodeSyncFlags(flag.CommandLine)
	workloadOptions := controller.BindWorkloadClientFlags(flag.CommandLine)
	debug := flag.Bool("debug", false, "Log at debug level too (every row fired, every requeue); --zap-log-level sets any level.")
	// Development: readable console lines; at info level, for the debug
	// level of Development mode prints a line per reconcile.
	zopts := zap.Options{Development: true, Level: zapcore.InfoLevel}
	zopts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *debug {
		zopts.Level = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))

	f.workload = workloadOptions()
	var err error
	if f.nodeSync, err = compileNodeSync(); err != nil {
		fmt.Fprintln(os.Stderr, "krtt-local:", err)
		os.Exit(2)
	}
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "krtt-local:", err)
		os.Exit(1)
	}
}

// kubeconfigGiven reports whether --kubeconfig or $KUBECONFIG names a cluster.
func kubeconfigGiven() bool {
	if fl := flag.Lookup(config.KubeconfigFlagName); fl != nil && fl.Value.String() != "" {
		return true
	}
	return os.Getenv("KUBECONFIG") != ""
}

func run(f flags) error {
	sets, err := actions.LoadSets(f.tablesDir)
	if err != nil {
		return err
	}
	f.sets = sets
	ctx := ctrl.SetupSignalHandler()
	if kubeconfigGiven() && !f.local {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return fmt.Errorf("no Kubernetes configuration: %w", err)
		}
		fmt.Printf("krtt-local: running the operator against %s (pass --local for a local control plane)\n", cfg.Host)
		return runOperator(ctx, cfg, f, f.leaderElect)
	}
	return runLocal(ctx, f)
}

func operatorManager(cfg *rest.Config, f flags, leaderElect bool) (manager.Manager, error) {
	mgr, err := actions.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress: f.probeAddr,
		LeaderElection:         leaderElect,
	})
	if err != nil {
		return nil, fmt.Errorf("operator manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

func runOperator(ctx context.Context, cfg *rest.Config, f flags, leaderElect bool) error {
	mgr, err := operatorManager(cfg, f, leaderElect)
	if err != nil {
		return err
	}
	if err := actions.Setup(ctx, mgr, f.sets, controller.Options{Concurrency: f.concurrency, SelfHostedClusters: f.selfHosted, NodeSync: f.nodeSync, Workload: f.workload}); err != nil {
		return fmt.Errorf("set up the controllers: %w", err)
	}
	return mgr.Start(ctx)
}

func runLocal(ctx context.Context, f flags) error {
	cp, err := localcp.Start(localcp.Options{Dir: f.dir, Fresh: f.fresh, Port: f.port, Log: prefixed{}})
	if err != nil {
		return err
	}
	stopCP := func() error {
		fmt.Println("krtt-local: stopping kube-apiserver and etcd")
		if err := cp.Stop(); err != nil {
			return fmt.Errorf("stop control plane: %w", err)
		}
		fmt.Printf("krtt-local: stopped; state kept in %s\n", cp.Dir)
		return nil
	}

	// A second API server plays the workload cluster of the sample Cluster
	// "remote": its Nodes and Pods live there, reached through the Secret
	// remote-kubeconfig.
	wcp, err := localcp.Start(localcp.Options{Dir: filepath.Join(f.dir, "workload"), Fresh: f.fresh, Port: -1, Log: prefixed{}})
	if err != nil {
		return errors.Join(fmt.Errorf("workload cluster: %w", err), stopCP())
	}
	stopCP = func(stopMain func() error) func() error {
		return func() error {
			err := wcp.Stop()
			return errors.Join(err, stopMain())
		}
	}(stopCP)
	if err := remote.WriteSecret(ctx, cp.Client, "default", remoteCluster, wcp.Config); err != nil {
		return errors.Join(fmt.Errorf("kubeconfig Secret of Cluster %s: %w", remoteCluster, err), stopCP())
	}

	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opMgr, err := operatorManager(cp.Config, f, false)
	if err != nil {
		return errors.Join(err, stopCP())
	}
	if err := actions.Setup(mctx, opMgr, f.sets, controller.Options{Concurrency: f.concurrency, SelfHostedClusters: f.selfHosted, NodeSync: f.nodeSync, Workload: f.workload}); err != nil {
		return errors.Join(fmt.Errorf("set up the controllers: %w", err), stopCP())
	}
	simMgr, err := sim.NewManager(mctx, cp.Config, ctrl.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}, sim.Options{HeartbeatInterval: f.heartbeat, WorkloadClusters: true})
	if err != nil {
		return errors.Join(err, stopCP())
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for name, mgr := range map[string]manager.Manager{"operator": opMgr, "sim": simMgr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := mgr.Start(mctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s manager: %w", name, err))
				mu.Unlock()
			}
			cancel() // one manager down: stop everything
		}()
	}

	if f.samples {
		samples := filepath.Join(cpRoot(), "config", "samples")
		applied, err := localcp.ApplyKustomization(mctx, cp.Client, samples)
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "krtt-local: applying %s: %v\n", samples, err)
		case len(applied.Created) > 0:
			fmt.Printf("krtt-local: created from config/samples: %v (already there: %d)\n", applied.Created, len(applied.Existing))
		default:
			fmt.Printf("krtt-local: config/samples already applied (%d objects kept from the last run)\n", len(applied.Existing))
		}
	}
	fmt.Printf(`
krtt-local: kube-apiserver %s, operator and simulated provider running (state in %s).
Point kubectl at it:

    export KUBECONFIG=%s
    kubectl get kma -w
    kubectl get clusters.cluster.krtt.dev

The Nodes of Cluster %q live in a second API server (%s):

    kubectl --kubeconfig %s get nodes

Ctrl-C stops it; the next run keeps the cluster (--fresh starts over).

`, cp.URL, cp.Dir, cp.Kubeconfig, remoteCluster, wcp.URL, wcp.Kubeconfig)

	<-mctx.Done()
	fmt.Println("krtt-local: stopping the operator and the simulated provider")
	wg.Wait()
	err = errors.Join(errs...)
	return errors.Join(err, stopCP())
}

func cpRoot() string {
	root, err := localcp.Root()
	if err != nil {
		return "."
	}
	return root
}

// remoteCluster is the sample Cluster (config/samples/remote.yaml) whose
// workload cluster is the second local API server.
const remoteCluster = "remote"

type prefixed struct{}

func (prefixed) Write(p []byte) (int, error) {
	fmt.Printf("krtt-local: %s", p)
	return len(p), nil
}
