package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/poll"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// allMachinesGone waits until no Machine is left in ns, and says which are
// left at the deadline.
func allMachinesGone(ctx context.Context, c client.Client, ns string, timeout time.Duration) error {
	return poll.Until(ctx, timeout, func(context.Context) error {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d Machines left: %s", len(list.Items), describeMachines(list.Items))
		}
		return nil
	})
}

// createMachine creates the i-th Machine of a workload, of Cluster "c",
// with its sim bootstrap config and infrastructure: even ones with a
// pre-drain hook, every third a pre-terminate hook, odd ones an
// infrastructure that takes a second to delete.
func createMachine(ctx context.Context, c client.Client, ns, name string, i int, deletion clusterv1.MachineDeletionSpec) error {
	ann := map[string]string{}
	if i%2 == 0 {
		ann[clusterv1.PreDrainDeleteHookAnnotationPrefix+hookName] = "chaos driver"
	}
	if i%3 == 0 {
		ann[clusterv1.PreTerminateDeleteHookAnnotationPrefix+hookName] = "chaos driver"
	}
	return errors.Join(
		c.Create(ctx, &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}),
		c.Create(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: simv1.SimMachineSpec{Sim: simv1.SimBehavior{DeleteDelaySeconds: int32(i % 2)}}}),
		c.Create(ctx, &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
			Spec: clusterv1.MachineSpec{
				ClusterName: "c",
				Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
					APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfig", Name: name}},
				InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: name},
				Deletion:          deletion,
			},
		}),
	)
}
