package harness

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/poll"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// The helpers below create the objects of a scenario and play the
// providers' and kubelet's parts by writing contract fields directly.

// Namespace creates a namespace.
func (h *Harness) Namespace(ctx context.Context, name string) error {
	err := h.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Cluster creates a Cluster whose control plane is externally managed (see
// ClusterObjects).
func (h *Harness) Cluster(ctx context.Context, ns, name string) (*clusterv1.Cluster, error) {
	return ClusterObjects(ctx, h.Client, ns, name, true)
}

// ClusterObjects creates through c a SimControlPlane and a Cluster named name
// whose spec.controlPlaneRef names it, and plays the control plane provider:
// status.externalManagedControlPlane is set to externallyManaged, and an
// externally managed control plane reports itself initialized (the sim
// writes the same when it runs). Cluster API's Machine controller touches a
// Node only while the Cluster has a control-plane Machine or an externally
// managed control plane, so a fixture of worker Machines needs the latter.
func ClusterObjects(ctx context.Context, c client.Client, ns, name string, externallyManaged bool) (*clusterv1.Cluster, error) {
	cp := Label(&simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: simv1.SimControlPlaneSpec{ExternallyManaged: ptr.To(externallyManaged)}})
	if err := c.Create(ctx, cp); err != nil {
		return nil, fmt.Errorf("create SimControlPlane %s/%s: %w", ns, name, err)
	}
	// A merge patch without a resourceVersion: the sim, when it runs, may
	// have written the same status already.
	before := cp.DeepCopy()
	cp.Status.ExternalManagedControlPlane = ptr.To(externallyManaged)
	if externallyManaged {
		cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	}
	if err := c.Status().Patch(ctx, cp, client.MergeFrom(before)); err != nil {
		return nil, fmt.Errorf("report SimControlPlane %s/%s: %w", ns, name, err)
	}
	cl := Label(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: &clusterv1.ObjectReference{
			APIGroup: simv1.GroupVersion.Group, Kind: "SimControlPlane", Name: name}}})
	return cl, c.Create(ctx, cl)
}

// MachineObjects creates a SimBootstrapConfig, a SimMachine and a Machine
// that references them, all named name.
func (h *Harness) MachineObjects(ctx context.Context, ns, cluster, name string, mutate ...func(*clusterv1.Machine)) (*clusterv1.Machine, error) {
	return MachineObjects(ctx, h.Client, ns, cluster, name, simv1.SimBehavior{}, mutate...)
}

// MachineObjects creates through c a SimBootstrapConfig, a SimMachine that
// behaves as sim says, and a Machine that references them, all named name:
// the fixture every test that needs a Machine builds.
func MachineObjects(ctx context.Context, c client.Client, ns, cluster, name string, sim simv1.SimBehavior, mutate ...func(*clusterv1.Machine)) (*clusterv1.Machine, error) {
	if err := c.Create(ctx, Label(&simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, Label(&simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: simv1.SimMachineSpec{Sim: sim}})); err != nil {
		return nil, err
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster,
			Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
				APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfig", Name: name}},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: name},
		},
	}
	for _, fn := range mutate {
		fn(m)
	}
	// After mutate, which may replace the labels or choose another filter.
	return m, c.Create(ctx, Label(m))
}

// ProviderID is the providerID the scenarios give a Machine's SimMachine.
func ProviderID(ns, name string) string { return "sim://" + ns + "/" + name }

// BootstrapReady plays the bootstrap provider: the data secret exists. The
// operator may adopt the object (an owner reference) meanwhile, as a real
// provider sees, so a conflict reads again.
func (h *Harness) BootstrapReady(ctx context.Context, ns, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b := &simv1.SimBootstrapConfig{}
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			return err
		}
		b.Status.DataSecretName = ptr.To(name + "-bootstrap")
		b.Status.Initialization.DataSecretCreated = ptr.To(true)
		b.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "DataSecretCreated", LastTransitionTime: metav1.Now()}}
		return h.Client.Status().Update(ctx, b)
	})
}

// InfrastructureProvisioned plays the infrastructure provider (reading
// again on a conflict with the operator's adoption, as BootstrapReady).
func (h *Harness) InfrastructureProvisioned(ctx context.Context, ns, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sm := &simv1.SimMachine{}
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sm); err != nil {
			return err
		}
		sm.Spec.ProviderID = ptr.To(ProviderID(ns, name))
		sm.Spec.FailureDomain = "zone-a"
		if err := h.Client.Update(ctx, sm); err != nil {
			return err
		}
		sm.Status.Initialization.Provisioned = ptr.To(true)
		sm.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.10"}}
		sm.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Provisioned", LastTransitionTime: metav1.Now()}}
		return h.Client.Status().Update(ctx, sm)
	})
}

// JoinNode plays the kubelet joining: a Ready Node with the providerID.
func (h *Harness) JoinNode(ctx context.Context, nodeName, providerID string) (*corev1.Node, error) {
	return JoinNode(ctx, h.Client, nodeName, providerID)
}

// JoinNode plays the kubelet joining the cluster c reaches (the management
// cluster, or a workload cluster), registering with the given taints.
func JoinNode(ctx context.Context, c client.Client, nodeName, providerID string, taints ...corev1.Taint) (*corev1.Node, error) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}, Spec: corev1.NodeSpec{ProviderID: providerID, Taints: taints}}
	if err := c.Create(ctx, n); err != nil {
		return nil, err
	}
	// The operator may label the Node between its creation and its first
	// status report, as it would with a real kubelet: report on a fresh read.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
			return err
		}
		n.Status.Conditions = sim.KubeletConditions(metav1.Now())
		n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.0", OperatingSystem: "linux",
			Architecture: "amd64", OSImage: "Debian GNU/Linux 13 (trixie)", ContainerRuntimeVersion: "containerd://2.2.0"}
		return c.Status().Update(ctx, n)
	})
	return n, err
}

// Machine reads a Machine.
func (h *Harness) Machine(ctx context.Context, ns, name string) (*clusterv1.Machine, error) {
	m := &clusterv1.Machine{}
	return m, h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m)
}

// Eventually polls cond until it returns nil or timeout, Scaled to this
// machine as Await's is, passes (poll.Until); the last error explains the
// failure.
func Eventually(ctx context.Context, timeout time.Duration, cond func(context.Context) error) error {
	return poll.Until(ctx, poll.Scaled(timeout), cond)
}

// FinishTerminatingPods plays the kubelet for Pods on a Node that have a
// deletionTimestamp: it removes them for good.
func (h *Harness) FinishTerminatingPods(ctx context.Context, node string) (int, error) {
	return FinishTerminatingPods(ctx, h.Client, node)
}

// FinishTerminatingPods plays the kubelet of a Node in the cluster c reaches.
func FinishTerminatingPods(ctx context.Context, c client.Client, node string) (int, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != node || p.DeletionTimestamp.IsZero() {
			continue
		}
		if err := c.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			return n, err
		}
		n++
	}
	return n, nil
}

// RunningPod creates a Pod bound to a Node and reports it Running and Ready,
// as the kubelet would (a Pending Pod can be evicted despite any PDB).
func (h *Harness) RunningPod(ctx context.Context, ns, name, node string, labels map[string]string, mutate ...func(*corev1.Pod)) (*corev1.Pod, error) {
	return RunningPod(ctx, h.Client, ns, name, node, labels, mutate...)
}

// RunningPod creates a running Pod in the cluster c reaches.
func RunningPod(ctx context.Context, c client.Client, ns, name, node string, labels map[string]string, mutate ...func(*corev1.Pod)) (*corev1.Pod, error) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}
	for _, fn := range mutate {
		fn(p)
	}
	if err := c.Create(ctx, p); err != nil {
		return nil, err
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	return p, c.Status().Update(ctx, p)
}

// PodsRunning reports, as a condition to poll, whether every Pod runs and
// the Node has exactly volumes volumes attached (the simulated kubelet and
// CSI driver at work).
func PodsRunning(ctx context.Context, c client.Client, pods []*corev1.Pod, node string, volumes int) error {
	for _, p := range pods {
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if got.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("Pod %s phase %q", p.Name, got.Status.Phase)
		}
	}
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		return err
	}
	if len(n.Status.VolumesAttached) != volumes {
		return fmt.Errorf("volumesAttached %+v, want %d", n.Status.VolumesAttached, volumes)
	}
	return nil
}
