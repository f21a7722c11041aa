// Package sim is a simulated provider for krtt: controllers that play the
// bootstrap provider (SimBootstrapConfig), a control plane provider
// (SimControlPlane), the infrastructure provider
// (SimCluster; SimMachine, which also registers a Node), the kubelet (Node heartbeats,
// Pods Running, terminating Pods finished), a CSI driver (PersistentVolumes,
// VolumeAttachments, node.status.volumesAttached) and the disruption
// controller (PodDisruptionBudget status), so the Machine controller can be
// exercised end to end against a bare API server (envtest or a local
// control plane without kube-controller-manager, scheduler or kubelets).
package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/internal/watchfilter"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// Options configure the sim controllers.
type Options struct {
	// KubeletGracePeriodCap caps how long a terminating Pod on a sim Node waits before the sim kubelet removes it (default 2s).
	KubeletGracePeriodCap time.Duration
	// HeartbeatInterval for sim Node Ready heartbeats (default 10s).
	HeartbeatInterval time.Duration
	// WorkloadClusters puts the Node of a Machine whose Cluster has a
	// <cluster>-kubeconfig Secret in that workload cluster, and runs the
	// kubelet, CSI and disruption controllers there.
	WorkloadClusters bool
	clusters         *remote.Cache

	// WatchFilter, when set, labels the Nodes the sim registers
	// cluster.krtt.dev/watch-filter=<value>; with WatchFilter on the
	// manager's options (the same value) the sim acts only on what carries
	// that label, as the operator's --watch-filter does, so several sims
	// share one API server (the tests do).
	WatchFilter string

	// DisruptedPodTimeout is how long a Pod the Eviction API recorded in a
	// budget's status.disruptedPods counts as disrupted while it is not
	// deleted (default 2m, the disruption controller's DeletionTimeout).
	DisruptedPodTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultKubeletGracePeriodCap = 2 * time.Second
	DefaultHeartbeatInterval     = 10 * time.Second
	DefaultDisruptedPodTimeout   = 2 * time.Minute
)

// Names shared by the sim controllers.
const (
	// NodeLabel marks the Nodes the sim registered; the sim kubelet and CSI
	// driver only act on those.
	NodeLabel = "sim.krtt.dev/node"
	// CloudFinalizer holds a SimMachine until the simulated VM is released.
	CloudFinalizer = "sim.krtt.dev/cloud"
	// CSIDriver is the name of the simulated CSI driver.
	CSIDriver = "sim.csi.krtt.dev"
	// ProviderIDPrefix starts the providerIDs the sim cloud gives machines.
	ProviderIDPrefix = "sim://"
	// DefaultFailureDomain is used when a SimMachine names none.
	DefaultFailureDomain = "sim-zone-a"
	// DefaultFailReason is the Ready=False reason of failProvisioning.
	DefaultFailReason = "ProvisioningFailed"
	// NodeRegisteredCondition on a SimMachine records that its Node was
	// registered once; the sim never re-creates a Node someone deleted.
	NodeRegisteredCondition = "NodeRegistered"
)

// Field indexes the sim registers (names distinct from the operator's, so
// both can share one manager).
const (
	podNodeIndex = "sim.krtt.dev/pod-node"
	vaNodeIndex  = "sim.krtt.dev/va-node"
)

func (o Options) withDefaults() Options {
	if o.KubeletGracePeriodCap <= 0 {
		o.KubeletGracePeriodCap = DefaultKubeletGracePeriodCap
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.DisruptedPodTimeout <= 0 {
		o.DisruptedPodTimeout = DefaultDisruptedPodTimeout
	}
	return o
}

// WatchFilter makes a sim manager's cache hold only the objects labelled
// cluster.krtt.dev/watch-filter=value (nothing changes when value is
// empty): its SimMachines, SimBootstrapConfigs, SimControlPlanes and SimClusters, the
// Nodes it registered (Options.WatchFilter labels them) and the
// PodDisruptionBudgets it keeps current. Pods, volumes and
// VolumeAttachments are acted on through those Nodes only.
func WatchFilter(o *ctrl.Options, value string) error {
	return watchfilter.Apply(o, value, &simv1.SimMachine{}, &simv1.SimBootstrapConfig{}, &simv1.SimControlPlane{}, &simv1.SimCluster{},
		&corev1.Node{}, &policyv1.PodDisruptionBudget{})
}

// Scheme returns a scheme with everything the sim controllers need.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, simv1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// NewManager is the one way a simulated provider is started: a manager on
// cfg with the sim's scheme and opts.WatchFilter applied to base (metrics,
// probes, controller settings are the caller's), and every sim controller
// registered on it.
func NewManager(ctx context.Context, cfg *rest.Config, base ctrl.Options, opts Options) (ctrl.Manager, error) {
	base.Scheme = Scheme()
	if err := WatchFilter(&base, opts.WatchFilter); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, base)
	if err != nil {
		return nil, fmt.Errorf("sim manager: %w", err)
	}
	if err := SetupWithManager(ctx, mgr, opts); err != nil {
		return nil, fmt.Errorf("set up the simulated provider: %w", err)
	}
	return mgr, nil
}

// SetupWithManager registers all sim controllers (bootstrap, control plane, cloud, kubelet, csi, disruption) on mgr. mgr's scheme must include clientgoscheme and test/infrastructure/sim/api/v1alpha1 and api/v1alpha1.
//
// With opts.WorkloadClusters, a Machine whose Cluster has a <cluster>-kubeconfig
// Secret gets its Node in that workload cluster, where the kubelet, CSI and
// disruption controllers run too (started per connection); the others stay
// in the management cluster, as before.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	if opts.WorkloadClusters {
		clusters := remote.New(mgr.GetClient(), mgr.GetAPIReader(), remote.Options{Scheme: Scheme(), SelfHosted: true})
		clusters.AddWatcher(nodeSideOn(mgr.GetClient(), mgr.GetCache(), opts))
		if err := mgr.Add(clusters); err != nil {
			return err
		}
		if err := setupDisconnect(mgr, clusters); err != nil {
			return err
		}
		opts.clusters = clusters
	}
	if err := setupNodeSide(ctx, mgr, mgr.GetClient(), simMachineEvents{cache: mgr.GetCache()}, opts); err != nil {
		return err
	}
	for _, setup := range []func(ctrl.Manager, Options) error{setupBootstrap, setupControlPlane, setupInfraCluster, setupCloud} {
		if err := setup(mgr, opts); err != nil {
			return err
		}
	}
	return nil
}

// setupNodeSide registers what runs where the Nodes are: the kubelet, the
// CSI driver and the disruption controller, with their indexes.
func setupNodeSide(ctx context.Context, mgr ctrl.Manager, machines client.Reader, events simMachineEvents, opts Options) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &corev1.Pod{}, podNodeIndex, func(o client.Object) []string {
		if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("sim: index Pods by node: %w", err)
	}
	if err := indexVolumeAttachments(ctx, idx); err != nil {
		return err
	}
	if err := setupKubeletOn(mgr, machines, events, opts); err != nil {
		return err
	}
	for _, setup := range []func(ctrl.Manager, Options) error{setupCSI, setupDisruption} {
		if err := setup(mgr, opts); err != nil {
			return err
		}
	}
	return nil
}

// nodeSideOn starts, for every workload cluster connection, a manager on
// that cluster running the node-side controllers until the connection
// closes. SimMachines are read from the management cluster, and their
// changes heard through its cache (only those of the connection's Cluster,
// by the cluster-name label their Machine sets).
func nodeSideOn(machines client.Reader, machineCache cache.Cache, opts Options) remote.Watcher {
	return remote.WatcherFunc(func(ctx context.Context, key client.ObjectKey, cl cluster.Cluster) error {
		mo := ctrl.Options{Scheme: Scheme(),
			Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
			Controller: config.Controller{SkipNameValidation: ptr.To(true)}}
		if err := WatchFilter(&mo, opts.WatchFilter); err != nil {
			return err
		}
		m, err := ctrl.NewManager(cl.GetConfig(), mo)
		if err != nil {
			return fmt.Errorf("sim: manager for the workload cluster of %s: %w", key, err)
		}
		events := simMachineEvents{cache: machineCache, keep: func(o client.Object) bool {
			return o.GetNamespace() == key.Namespace && o.GetLabels()[clusterv1.ClusterNameLabel] == key.Name
		}}
		if err := setupNodeSide(ctx, m, machines, events, opts); err != nil {
			return err
		}
		go func() {
			if err := m.Start(ctx); err != nil {
				ctrl.Log.WithName("sim").Error(err, "workload cluster node side stopped", "cluster", key)
			}
		}()
		return nil
	})
}

// NodeName is the name of the Node the sim registers for a SimMachine:
// <namespace>-<name>, made DNS-safe and at most 253 characters.
func NodeName(namespace, name string) string {
	return dnsName(namespace + "-" + name)
}

// ProviderID is the providerID the sim cloud gives a SimMachine.
func ProviderID(namespace, name string) string {
	return ProviderIDPrefix + namespace + "/" + name
}

// parseProviderID splits sim://<namespace>/<name>.
func parseProviderID(id string) (client.ObjectKey, bool) {
	rest, ok := strings.CutPrefix(id, ProviderIDPrefix)
	if !ok {
		return client.ObjectKey{}, false
	}
	ns, name, ok := strings.Cut(rest, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: ns, Name: name}, true
}

// dnsName lower-cases s, replaces characters a DNS subdomain cannot hold
// with '-', and shortens it (keeping it unique by a hash) to max 253.
func dnsName(s string) string {
	return dnsNameMax(s, validation.DNS1123SubdomainMaxLength)
}

func dnsNameMax(s string, limit int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > limit {
		out = out[:limit-9] + "-" + shortHash(s)
	}
	out = strings.Trim(out, "-.")
	if out == "" {
		out = "sim-" + shortHash(s)
	}
	return out
}

func shortHash(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

// isSimNode reports whether the sim registered the Node.
func isSimNode(n *corev1.Node) bool {
	return n != nil && n.Labels[NodeLabel] == "true"
}

// until is how long from now until t (never negative).
func until(now, t time.Time) time.Duration {
	if d := t.Sub(now); d > 0 {
		return d
	}
	return 0
}

// statusEqual compares two statuses semantically.
func statusEqual(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }

func fnvSum(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

func ctrlWithPredicates(p ...predicate.Predicate) builder.WatchesOption {
	return builder.WithPredicates(p...)
}

// quiet turns a conflict (another writer got there first, e.g. the Machine
// controller adopting a provider object) into a prompt, silent retry.
func quiet(res reconcile.Result, err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return res, err
}
