package harness

import (
	"context"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// MachineSetObjects creates a SimBootstrapConfigTemplate and a
// SimMachineTemplate named name, and a MachineSet of replicas Machines
// cloned from them, selecting the label pool=<name>. The SimMachines behave
// as sim says.
func MachineSetObjects(ctx context.Context, c client.Client, ns, cluster, name string, replicas int32, sim simv1.SimBehavior, mutate ...func(*clusterv1.MachineSet)) (*clusterv1.MachineSet, error) {
	if err := SimTemplates(ctx, c, ns, name, sim); err != nil {
		return nil, err
	}
	labels := map[string]string{"pool": name}
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: cluster,
			Replicas:    ptr.To(replicas),
			Selector:    clusterv1.MachineSetSelector{MatchLabels: labels},
			Template:    machineTemplate(cluster, name, name),
		},
	}
	for _, fn := range mutate {
		fn(ms)
	}
	// The MachineSet passes the label on to its Machines.
	return ms, c.Create(ctx, Label(ms))
}

// MachineSetObjects creates a MachineSet and its templates (see the
// function of the same name).
func (h *Harness) MachineSetObjects(ctx context.Context, ns, cluster, name string, replicas int32, mutate ...func(*clusterv1.MachineSet)) (*clusterv1.MachineSet, error) {
	return MachineSetObjects(ctx, h.Client, ns, cluster, name, replicas, simv1.SimBehavior{}, mutate...)
}

// MachineSet reads a MachineSet.
func (h *Harness) MachineSet(ctx context.Context, ns, name string) (*clusterv1.MachineSet, error) {
	ms := &clusterv1.MachineSet{}
	return ms, h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ms)
}

// MachinesOf lists the Machines a MachineSet controls, by name.
func MachinesOf(ctx context.Context, c client.Client, ms *clusterv1.MachineSet) ([]clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(ms.Namespace)); err != nil {
		return nil, err
	}
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if ref := metav1.GetControllerOf(&m); ref != nil && ref.UID == ms.UID {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Provide plays every provider and the kubelet for one Machine: its
// bootstrap data, its infrastructure and a Ready Node.
func (h *Harness) Provide(ctx context.Context, ns, machine string) error {
	if err := h.BootstrapReady(ctx, ns, machine); err != nil {
		return err
	}
	if err := h.InfrastructureProvisioned(ctx, ns, machine); err != nil {
		return err
	}
	_, err := h.JoinNode(ctx, ns+"-"+machine, ProviderID(ns, machine))
	return err
}
