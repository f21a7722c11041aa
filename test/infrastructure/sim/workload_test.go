package sim_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/leakcheck"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// TestNodeJoinsTheWorkloadCluster: a SimMachine of a Cluster with a
// kubeconfig Secret gets its Node in that workload cluster, where the sim's
// kubelet keeps it Ready and runs its Pods; the management cluster has none.
func TestNodeJoinsTheWorkloadCluster(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "workload")
	workload := workloadCluster(t, ns, "wc")

	simMachine(t, ns, "m1", func(sm *simv1.SimMachine) { sm.Labels[clusterv1.ClusterNameLabel] = "wc" })
	provisioned(t, ns, "m1")
	node := client.ObjectKey{Name: sim.NodeName(ns, "m1")}
	harness.Await(t, wait, "Node Ready in the workload cluster", func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := workload.Client.Get(ctx, node, n); err != nil {
			return err
		}
		if rc := readyCond(n); rc.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready %+v", rc)
		}
		return nil
	})
	if err := c.Get(ctx, node, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the management cluster has the Node (or reading it failed): %v", err)
	}

	p := pod(ns, "p1", node.Name, nil)
	harness.Must(t, workload.Client.Create(ctx, p))
	harness.Await(t, wait, "Pod Running in the workload cluster", func(ctx context.Context) error {
		got := &corev1.Pod{}
		if err := workload.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if got.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %q", got.Status.Phase)
		}
		return nil
	})

	// A knob of the SimMachine (in the management cluster) reaches the
	// kubelet of the workload cluster: its SimMachine events wake it.
	harness.Await(t, wait, "set nodeNotReady", func(ctx context.Context) error {
		sm, err := getSM(ctx, ns, "m1")
		if err != nil {
			return err
		}
		sm.Spec.Sim.NodeNotReady = true
		return c.Update(ctx, sm)
	})
	harness.Await(t, wait, "Node NotReady in the workload cluster", func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := workload.Client.Get(ctx, node, n); err != nil {
			return err
		}
		if rc := readyCond(n); rc.Status != corev1.ConditionFalse || rc.Reason != "KubeletNotReady" {
			return fmt.Errorf("Ready %+v", rc)
		}
		return nil
	})
}

// workloadCluster gives the Cluster ns/name a workload cluster (its
// kubeconfig Secret) for the rest of t. The package's sim opens a
// connection to it and runs a kubelet there; when t ends the Secret goes,
// which closes that connection, and leakcheck fails t if the kubelet (or any
// controller t started) still runs.
func workloadCluster(t *testing.T, ns, name string) *localcp.ControlPlane {
	t.Helper()
	ctx := context.Background()
	leakcheck.Check(t)
	workload, err := localcp.WorkloadForTest()
	harness.Must(t, err)
	t.Cleanup(func() { _ = workload.Stop() })
	harness.Must(t, workload.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	harness.Must(t, remote.WriteSecret(ctx, c, ns, name, workload.Config))
	t.Cleanup(func() {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: remote.SecretName(name)}}
		if err := c.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the kubeconfig Secret of %s/%s: %v", ns, name, err)
		}
	})
	return workload
}
