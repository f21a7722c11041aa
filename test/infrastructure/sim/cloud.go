package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simmachines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines,verbs=get

// cloudReconciler plays an infrastructure provider: after
// spec.sim.provisionDelaySeconds it provisions the SimMachine (providerID,
// addresses, failure domain, Ready) and registers its Node once; on
// deletion it releases the "VM" after spec.sim.deleteDelaySeconds.
type cloudReconciler struct {
	client client.Client
	now    func() time.Time
	// clusters, when set, puts Nodes in the workload cluster of the
	// SimMachine's Cluster (internal/remote: its kubeconfig Secret).
	clusters *remote.Cache
	// watchFilter labels the Nodes registered (Options.WatchFilter).
	watchFilter string
	// machines reads a SimMachine's Machine uncached: once per Node, for
	// the kubelet version, not worth a cache of every Machine.
	machines client.Reader
}

func setupCloud(mgr ctrl.Manager, opts Options) error {
	r := &cloudReconciler{client: mgr.GetClient(), now: time.Now, clusters: opts.clusters, watchFilter: opts.WatchFilter, machines: mgr.GetAPIReader()}
	return ctrl.NewControllerManagedBy(mgr).
		For(&simv1.SimMachine{}).
		Named("sim-cloud").
		Complete(r)
}

// Reconcile retries conflicts quietly.
func (r *cloudReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *cloudReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	sm := &simv1.SimMachine{}
	if err := r.client.Get(ctx, req.NamespacedName, sm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := r.now()

	if !sm.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(sm, CloudFinalizer) {
			return reconcile.Result{}, nil
		}
		if wait := releaseWait(sm, now); wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
		before := sm.DeepCopy()
		controllerutil.RemoveFinalizer(sm, CloudFinalizer)
		if err := r.client.Patch(ctx, sm, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		return reconcile.Result{}, nil
	}

	if !controllerutil.ContainsFinalizer(sm, CloudFinalizer) {
		before := sm.DeepCopy()
		controllerutil.AddFinalizer(sm, CloudFinalizer)
		if err := r.client.Patch(ctx, sm, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, err
		}
	}

	if sm.Spec.Sim.FailProvisioning {
		reason := sm.Spec.Sim.FailReason
		if reason == "" {
			reason = DefaultFailReason
		}
		return reconcile.Result{}, r.patchStatus(ctx, sm, func(st *simv1.SimMachineStatus) {
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
				Reason: reason, Message: "simulated provisioning failure", ObservedGeneration: sm.Generation})
		})
	}

	if !ptr.Deref(sm.Status.Initialization.Provisioned, false) {
		readyAt := sm.CreationTimestamp.Add(time.Duration(sm.Spec.Sim.ProvisionDelaySeconds) * time.Second)
		if wait := until(now, readyAt); wait > 0 {
			if err := r.patchStatus(ctx, sm, func(st *simv1.SimMachineStatus) {
				meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
					Reason: "Provisioning", Message: "the simulated VM is being provisioned", ObservedGeneration: sm.Generation})
			}); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{RequeueAfter: wait}, nil
		}
		if sm.Spec.ProviderID == nil || *sm.Spec.ProviderID == "" {
			before := sm.DeepCopy()
			sm.Spec.ProviderID = ptr.To(ProviderID(sm.Namespace, sm.Name))
			if err := r.client.Patch(ctx, sm, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
				return reconcile.Result{}, err
			}
		}
		fd := sm.Spec.FailureDomain
		if fd == "" {
			fd = DefaultFailureDomain
		}
		if err := r.patchStatus(ctx, sm, func(st *simv1.SimMachineStatus) {
			st.Addresses = []clusterv1.MachineAddress{
				{Type: clusterv1.MachineInternalIP, Address: internalIP(sm.Namespace, sm.Name)},
				{Type: clusterv1.MachineHostName, Address: sm.Name},
			}
			st.FailureDomain = fd
			st.Interruptible = sm.Spec.Sim.Interruptible
			st.Initialization.Provisioned = ptr.To(true)
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
				Reason: "Provisioned", Message: "the simulated VM is running", ObservedGeneration: sm.Generation})
		}); err != nil {
			return reconcile.Result{}, err
		}
	}

	if sm.Status.Interruptible != sm.Spec.Sim.Interruptible {
		if err := r.patchStatus(ctx, sm, func(st *simv1.SimMachineStatus) { st.Interruptible = sm.Spec.Sim.Interruptible }); err != nil {
			return reconcile.Result{}, err
		}
	}

	nodes, wait, err := r.nodeClient(ctx, sm)
	if err != nil || wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, err
	}
	if vmGone(sm) {
		return reconcile.Result{}, r.loseVM(ctx, nodes, sm)
	}
	if meta.IsStatusConditionTrue(sm.Status.Conditions, NodeRegisteredCondition) {
		return reconcile.Result{}, nil
	}
	node, err := r.registerNode(ctx, nodes, sm)
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.patchStatus(ctx, sm, func(st *simv1.SimMachineStatus) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: NodeRegisteredCondition, Status: metav1.ConditionTrue,
			Reason: "NodeRegistered", Message: "Node " + node + " registered", ObservedGeneration: sm.Generation})
	})
}

// VMNotFoundReason is the failureReason (and Ready=False reason) of a
// SimMachine whose VM vanished (spec.sim.vmGone).
const VMNotFoundReason = "VMNotFound"

// vmGone reports whether the SimMachine's VM has vanished (scripted now or
// earlier: the failure is terminal, clearing the knob does not undo it).
// releaseWait is how long the cloud still holds a deleted SimMachine: its
// spec.sim.deleteDelaySeconds from the deletionTimestamp, or nothing when
// the VM is already gone (nothing left to release).
func releaseWait(sm *simv1.SimMachine, now time.Time) time.Duration {
	if vmGone(sm) {
		return 0
	}
	return until(now, sm.DeletionTimestamp.Add(time.Duration(sm.Spec.Sim.DeleteDelaySeconds)*time.Second))
}

func vmGone(sm *simv1.SimMachine) bool {
	return sm.Spec.Sim.VMGone || ptr.Deref(sm.Status.FailureReason, "") == VMNotFoundReason
}

// loseVM plays a cloud whose VM disappeared: its Node goes (the kubelet on
// it is gone too) and the SimMachine reports the loss by the v1beta1
// contract's failureReason/failureMessage. It stays provisioned: the VM was
// there, the provider just cannot find it any more.
func (r *cloudReconciler) loseVM(ctx context.Context, nodes client.Client, sm *simv1.SimMachine) error {
	name := NodeName(sm.Namespace, sm.Name)
	node := &corev1.Node{}
	switch err := nodes.Get(ctx, client.ObjectKey{Name: name}, node); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case isSimNode(node) && node.Spec.ProviderID == ptr.Deref(sm.Spec.ProviderID, ""):
		uid := node.UID
		if err := nodes.Delete(ctx, node, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the Node %s of a vanished VM: %w", name, err)
		}
	}
	msg := fmt.Sprintf("the simulated VM %s no longer exists (spec.sim.vmGone)", ptr.Deref(sm.Spec.ProviderID, sm.Name))
	return r.patchStatus(ctx, sm, func(st *simv1.SimMachineStatus) {
		st.FailureReason, st.FailureMessage = ptr.To(VMNotFoundReason), ptr.To(msg)
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
			Reason: VMNotFoundReason, Message: msg, ObservedGeneration: sm.Generation})
	})
}

func (r *cloudReconciler) patchStatus(ctx context.Context, sm *simv1.SimMachine, mutate func(*simv1.SimMachineStatus)) error {
	before := sm.DeepCopy()
	mutate(&sm.Status)
	if statusEqual(before.Status, sm.Status) {
		return nil
	}
	return r.client.Status().Patch(ctx, sm, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// registerNode plays the kubelet joining: a Node with the providerID and a
// Ready condition (False with KubeletNotReady under spec.sim.nodeNotReady).
func (r *cloudReconciler) registerNode(ctx context.Context, nodes client.Client, sm *simv1.SimMachine) (string, error) {
	name := NodeName(sm.Namespace, sm.Name)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname:           name,
			NodeLabel:                      "true",
			corev1.LabelTopologyZone:       sm.Status.FailureDomain,
			corev1.LabelOSStable:           "linux",
			corev1.LabelArchStable:         "amd64",
			corev1.LabelInstanceTypeStable: "sim.small",
		}},
		Spec: corev1.NodeSpec{ProviderID: ptr.Deref(sm.Spec.ProviderID, ProviderID(sm.Namespace, sm.Name))},
	}
	if node.Labels[corev1.LabelTopologyZone] == "" {
		delete(node.Labels, corev1.LabelTopologyZone)
	}
	if r.watchFilter != "" {
		node.Labels[clusterv1.WatchFilterLabel] = r.watchFilter
	}
	err := nodes.Create(ctx, node)
	switch {
	case apierrors.IsAlreadyExists(err):
		if err := nodes.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return "", err
		}
	case err != nil:
		return "", fmt.Errorf("register Node %s: %w", name, err)
	}
	now := metav1.Now()
	before := node.DeepCopy()
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: internalIP(sm.Namespace, sm.Name)},
		{Type: corev1.NodeHostName, Address: name},
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node.Status.Capacity, node.Status.Allocatable = resources, resources.DeepCopy()
	// A kubelet reports its version from when it joined.
	version := node.Status.NodeInfo.KubeletVersion
	if version == "" {
		version = r.kubeletVersion(ctx, sm)
	}
	node.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: version, OperatingSystem: "linux", Architecture: "amd64",
		ContainerRuntimeVersion: "sim://1.0", OSImage: "sim"}
	setNodeReady(node, readyCondition(sm), now)
	setPressureConditions(node, now)
	if statusEqual(before.Status, node.Status) {
		return name, nil
	}
	// A strategic merge patch: conditions merge by type, so this writes
	// Ready alone. The kubelet may have reported the Node already (it
	// watches Node creation) and a merge patch, which replaces the whole
	// list, would drop the conditions it added since the Node was read.
	if err := nodes.Status().Patch(ctx, node, client.StrategicMergeFrom(before)); err != nil {
		return "", fmt.Errorf("report Node %s ready: %w", name, err)
	}
	return name, nil
}

// DefaultKubeletVersion is what a simulated kubelet reports when its
// Machine names no spec.version.
const DefaultKubeletVersion = "v1.37.0-sim"

// kubeletVersion is the spec.version of the Machine that owns the
// SimMachine, as a real image built for that version would run; the
// default when there is none (or the Machine cannot be read: a kubelet
// joins anyway).
func (r *cloudReconciler) kubeletVersion(ctx context.Context, sm *simv1.SimMachine) string {
	for _, ref := range sm.OwnerReferences {
		if ref.Kind != "Machine" || !strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			continue
		}
		m := &clusterv1.Machine{}
		if err := r.machines.Get(ctx, client.ObjectKey{Namespace: sm.Namespace, Name: ref.Name}, m); err == nil && m.Spec.Version != "" {
			return m.Spec.Version
		}
	}
	return DefaultKubeletVersion
}

// nodeClient is the cluster the SimMachine's Node joins: the workload
// cluster of its Cluster (the cluster-name label the Machine sets when it
// adopts the SimMachine) when that Cluster has a kubeconfig Secret, else the
// management cluster. Until the label is there the VM waits to join, as a
// kubelet waits for its bootstrap data; a workload cluster that cannot be
// used is retried.
func (r *cloudReconciler) nodeClient(ctx context.Context, sm *simv1.SimMachine) (client.Client, time.Duration, error) {
	if r.clusters == nil {
		return r.client, 0, nil
	}
	name := sm.Labels[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil, time.Second, nil
	}
	conn, err := r.clusters.ClientFor(ctx, client.ObjectKey{Namespace: sm.Namespace, Name: name})
	if err != nil {
		return nil, 0, err
	}
	if !conn.Usable() {
		return nil, 10 * time.Second, nil
	}
	return conn.Client, 0, nil
}

// internalIP derives a stable 10.x.y.z address from the machine's name.
func internalIP(namespace, name string) string {
	h := fnvSum(namespace + "/" + name)
	return fmt.Sprintf("10.%d.%d.%d", byte(h>>16), byte(h>>8), 1+byte(h)%254)
}
