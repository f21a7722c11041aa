package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/internal/selfhosted"
	"github.com/krtt-dev/krtt/internal/watchfilter"
	"github.com/krtt-dev/krtt/reconciler"
)

// Scheme knows the built-in types and the cluster.krtt.dev API. Provider
// objects are read as unstructured, so their types are not registered.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := clusterv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Setup adds every controller (Controllers) to the manager, each with its
// table set from sets (the embedded one when sets has none), and the
// workload cluster connections they share, opened with opts.Workload.
func Setup(ctx context.Context, mgr ctrl.Manager, sets TableSets, opts controller.Options) error {
	if opts.Workload.Now == nil {
		// Since and ReachableAgain are compared with the controllers' clock.
		opts.Workload.Now = opts.Now
	}
	opts.Workload.SelfHosted = opts.SelfHostedClusters
	logMode(ctrl.Log.WithName("setup"), opts.SelfHostedClusters)
	clusters, err := workloadClusters(mgr, opts.Workload)
	if err != nil {
		return err
	}
	opts.Clusters = clusters
	if opts.Events == nil {
		opts.Events = reconciler.NewEventSink(mgr.GetClient(), mgr.GetScheme(), ctrl.Log.WithName("events"))
		if err := mgr.Add(opts.Events); err != nil {
			return err
		}
	}
	for _, c := range Controllers {
		o := opts
		if o.Set = sets[c.Name]; o.Set == nil {
			if o.Set, err = Load(c.Name, ""); err != nil {
				return err
			}
		}
		if err := c.Setup(ctx, mgr, o); err != nil {
			return fmt.Errorf("%s controller: %w", c.Name, err)
		}
	}
	return nil
}

// logMode says once, at start, which Clusters the operator serves: a
// forbidden watch or a NoAccess Cluster is explained by it.
func logMode(log logr.Logger, selfHosted bool) {
	if selfHosted {
		log.Info("serving self-hosted Clusters: Clusters without a kubeconfig Secret have their Nodes in the management cluster (needs "+selfhosted.RBACDir+")",
			"selfHostedClusters", true)
		return
	}
	log.Info("serving only Clusters with a kubeconfig Secret: no Node, Pod or volume is read in the management cluster; a Cluster without one is NoAccess",
		"selfHostedClusters", false)
}

// workloadClusters is the manager's cache of workload cluster connections;
// the controllers add the indexes they read through.
func workloadClusters(mgr ctrl.Manager, o remote.Options) (*remote.Cache, error) {
	if o.Scheme == nil {
		o.Scheme = Scheme()
	}
	slim := ctrl.Options{}
	SlimCache(&slim)
	o.Cache = slim.Cache
	c := remote.New(mgr.GetClient(), mgr.GetAPIReader(), o)
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// WatchFilter makes a manager see only the Machines, MachineSets and
// Clusters labelled cluster.krtt.dev/watch-filter=value (no filter when
// value is empty), as Cluster API's --watch-filter does: its cache holds no
// other, so no event, mapping or list of this operator ever reaches one.
// An instance manages the Clusters carrying its value and the Machines
// carrying it; the Cluster controller writes the status of its own
// Clusters only, counting the Machines it sees, which are all of a Cluster's
// Machines when the Cluster and its Machines carry the same value (the way
// to split a fleet). A Machine whose Cluster carries another value (or
// none) reads its Cluster as missing and waits (machine-normal N05).
// MachineSets label the Machines they create alike. Provider objects,
// Secrets, Nodes and MachineDrainRules (Controller.Unfiltered) are not
// filtered. Instances with different filters
// elect their leaders apart (a Lease per filter value).
func WatchFilter(o *ctrl.Options, value string) error {
	if value == "" {
		return nil
	}
	// A MachineSet passes its label on to the Machines it creates: an
	// instance sees its sets and their Machines, never half of a set.
	objs := make([]client.Object, 0, len(Controllers))
	for _, c := range Controllers {
		if !c.Unfiltered {
			objs = append(objs, c.Object.DeepCopyObject().(client.Object))
		}
	}
	if err := watchfilter.Apply(o, value, objs...); err != nil {
		return err
	}
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = strings.ReplaceAll(strings.ToLower(value), "_", "-") + "." + LeaderElectionID
	}
	return nil
}

// LeaderElectionID names the Lease the operator's replicas elect a leader on.
const LeaderElectionID = "krtt-operator.krtt.dev"

// NewManager is the one way the operator's manager is built, by the binary,
// make run, the demo and the tests alike: krtt's scheme, provider objects
// read from the cache (a kind the cache cannot sync fails such a read at
// once instead of holding the worker: reconciler.KindSync), the shared Lease
// name, requests counted by kind (krtt_api_requests_total), and no metrics
// endpoint unless one is asked for (tests run several managers in one
// process).
func NewManager(cfg *rest.Config, o ctrl.Options) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	CountRequests(cfg)
	o.Scheme = Scheme()
	o.Client = ClientOptions()
	SlimCache(&o)
	kinds := reconciler.NewKindSync(ctrl.Log.WithName("kind-sync"))
	o.NewClient = kinds.NewClient
	if o.Cache.DefaultWatchErrorHandler == nil {
		o.Cache.DefaultWatchErrorHandler = kinds.WatchErrorHandler
	}
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = LeaderElectionID
	}
	if o.Metrics.BindAddress == "" {
		o.Metrics.BindAddress = "0"
	}
	return ctrl.NewManager(cfg, o)
}

// ClientOptions make the manager's client serve provider objects (read as
// unstructured, by the provider contract) from its cache as well: the
// operator reads them on every reconcile and watches their kinds anyway.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{Unstructured: true}}
}

// SlimCache keeps in the manager's cache only what the observers read: no
// object keeps its managedFields, a Pod keeps only the fields slimPod names
// and a Node those slimNode keeps. With tens of Pods per Node, Pods are most
// of an operator's memory. The operator never updates a Pod or writes a Node
// from its cache (the cordon and label sync are patches of the fields they
// change), so a trimmed copy is never written back.
func SlimCache(o *ctrl.Options) {
	if o.Cache.DefaultTransform == nil {
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
	}
	if o.Cache.ByObject == nil {
		o.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	slim := map[string]toolscache.TransformFunc{"Pod": slimPod, "Node": slimNode}
	for obj, by := range o.Cache.ByObject {
		var kind string
		switch obj.(type) {
		case *corev1.Pod:
			kind = "Pod"
		case *corev1.Node:
			kind = "Node"
		default:
			continue
		}
		if by.Transform == nil {
			by.Transform = slim[kind]
			o.Cache.ByObject[obj] = by
		}
		delete(slim, kind)
	}
	for kind, t := range slim {
		var obj client.Object = &corev1.Pod{}
		if kind == "Node" {
			obj = &corev1.Node{}
		}
		o.Cache.ByObject[obj] = cache.ByObject{Transform: t}
	}
}

// slimPod is SlimCache's transform for Pods. It keeps what the drain, the
// Pod verdicts and the Machine mapping read (metadata, nodeName, priority,
// the claim-backed volumes, phase and the DisruptionTarget condition that
// marks an eviction) and drops the rest: containers, tolerations, the
// service-account token volume, security contexts, IPs, the other
// conditions. A Pod kept this way is never written back (the operator's
// RBAC has no verb for it).
func slimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta}
	slim.ManagedFields = nil
	delete(slim.Annotations, corev1.LastAppliedConfigAnnotation)
	slim.Spec = corev1.PodSpec{
		NodeName: p.Spec.NodeName,
		Priority: p.Spec.Priority,
		Volumes:  claimVolumes(p.Spec.Volumes),
	}
	slim.Status = corev1.PodStatus{Phase: p.Status.Phase}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			slim.Status.Conditions = append(slim.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason})
		}
	}
	return slim, nil
}

// slimNode is SlimCache's transform for Nodes: a real kubelet reports its
// images (up to 50, with every tag), capacity and allocatable, runtime
// handlers and features, none of which the Machine controller reads; the
// metadata, spec, conditions, addresses, node info and volumes stay.
func slimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Node{TypeMeta: n.TypeMeta, ObjectMeta: n.ObjectMeta, Spec: n.Spec}
	slim.ManagedFields = nil
	slim.Status = corev1.NodeStatus{
		Phase:           n.Status.Phase,
		Conditions:      n.Status.Conditions,
		Addresses:       n.Status.Addresses,
		NodeInfo:        n.Status.NodeInfo,
		VolumesInUse:    n.Status.VolumesInUse,
		VolumesAttached: n.Status.VolumesAttached,
	}
	return slim, nil
}

// claimVolumes keeps the volumes backed by a PersistentVolumeClaim (named,
// or generic ephemeral: its claim is named after the Pod and the volume),
// which the PV-aware drain follows; the ephemeral claim template is not
// needed for that.
func claimVolumes(vs []corev1.Volume) []corev1.Volume {
	var out []corev1.Volume
	for _, v := range vs {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: v.PersistentVolumeClaim}})
		case v.Ephemeral != nil:
			out = append(out, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}})
		}
	}
	return out
}
