package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

const (
	// remoteCluster is the Cluster whose Nodes live in a second API server
	// (its workload cluster), reached through its kubeconfig Secret.
	remoteCluster = "remote"
	remoteMachine = "remote-0"
	remotePod     = "remote-web-0"
)

// workloadCP is the workload cluster's control plane, started next to the
// demo's own while the first scenes run, so the remote scene does not wait
// for it.
type workloadCP struct {
	done chan struct{}
	cp   *localcp.ControlPlane
	err  error
}

func startWorkloadCP(dir string) *workloadCP {
	w := &workloadCP{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.cp, w.err = localcp.Start(localcp.Options{Dir: filepath.Join(dir, "workload"), Fresh: true, Port: -1})
	}()
	return w
}

func (w *workloadCP) get(ctx context.Context) (*localcp.ControlPlane, error) {
	select {
	case <-w.done:
		return w.cp, w.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (w *workloadCP) stop() error {
	<-w.done
	if w.cp == nil {
		return nil
	}
	return w.cp.Stop()
}

// remoteScene: a Machine of a Cluster whose workload cluster is the second
// API server reaches Running with its Node there (not in the management
// cluster), and is deleted, its Node with it.
func (d *demo) remoteScene(ctx context.Context, wl *workloadCP) error {
	wcp, err := wl.get(ctx)
	if err != nil {
		return fmt.Errorf("workload cluster: %w", err)
	}
	c := d.c
	d.step("Workload clusters: Cluster %q keeps its Nodes in a second API server (%s), named by Secret %s/%s",
		remoteCluster, wcp.URL, ns, remote.SecretName(remoteCluster))
	if _, err := harness.ClusterObjects(ctx, c, ns, remoteCluster, true); err != nil {
		return err
	}
	if err := remote.WriteSecret(ctx, c, ns, remoteCluster, wcp.Config); err != nil {
		return err
	}
	if err := d.createClusterMachine(ctx, remoteMachine, remoteCluster, 1); err != nil {
		return err
	}
	var m *clusterv1.Machine
	if err := d.waitFor(ctx, remoteMachine+" Running", 60*time.Second, func() (bool, string, error) {
		var err error
		m, err = d.machine(ctx, remoteMachine)
		if err != nil || m == nil {
			return false, "", err
		}
		return m.Status.Phase == clusterv1.MachinePhaseRunning && m.Status.NodeRef != nil, remoteMachine + " is " + phaseOf(m), nil
	}); err != nil {
		return err
	}
	node := m.Status.NodeRef.Name
	if err := c.Get(ctx, client.ObjectKey{Name: node}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("the management cluster has Node %s (err=%v): it belongs in the workload cluster", node, err)
	}
	nodes := &corev1.NodeList{}
	if err := wcp.Client.List(ctx, nodes); err != nil {
		return err
	}
	kubeconfig := wcp.Kubeconfig
	if rel, err := filepath.Rel(".", kubeconfig); err == nil && !strings.HasPrefix(rel, "..") {
		kubeconfig = rel
	}
	d.note("%s is Running; its Node is not in the management cluster. In the workload cluster:", remoteMachine)
	d.note("$ kubectl --kubeconfig %s get nodes", kubeconfig)
	d.note("%s", fmt.Sprintf("%-40s %s", "NAME", "STATUS"))
	found := false
	for _, n := range nodes.Items {
		found = found || n.Name == node
		d.note("%s", fmt.Sprintf("%-40s %s", n.Name, nodeStatus(&n)))
	}
	if !found {
		return fmt.Errorf("the workload cluster has no Node %s", node)
	}
	cl := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: remoteCluster}, cl); err != nil {
		return err
	}
	if cond := meta.FindStatusCondition(cl.Status.Conditions, "WorkloadClusterReachable"); cond != nil {
		d.note("Cluster %s: WorkloadClusterReachable=%s reason %s: %s", remoteCluster, cond.Status, cond.Reason, cond.Message)
	}

	d.step("Pod %s/%s runs on %s in the workload cluster; deleting %s: its Node is drained and deleted there", ns, remotePod, node, remoteMachine)
	if err := wcp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: remotePod},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}
	if err := wcp.Client.Create(ctx, pod); err != nil {
		return err
	}
	if err := d.waitFor(ctx, remotePod+" Running in the workload cluster", 30*time.Second, func() (bool, string, error) {
		if err := wcp.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, "", err
		}
		return pod.Status.Phase == corev1.PodRunning, remotePod + " is " + string(pod.Status.Phase), nil
	}); err != nil {
		return err
	}
	if err := c.Delete(ctx, m); err != nil {
		return err
	}
	if err := d.waitFor(ctx, remoteMachine+" gone, "+remotePod+" evicted and its Node deleted in the workload cluster", 60*time.Second, func() (bool, string, error) {
		if gone, what, err := d.machineGone(ctx, remoteMachine); !gone || err != nil {
			return false, what, err
		}
		if err := wcp.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
			return false, remotePod + " still in the workload cluster", err
		}
		err := wcp.Client.Get(ctx, client.ObjectKey{Name: node}, &corev1.Node{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "Node " + node + " still in the workload cluster", err
	}); err != nil {
		return err
	}
	d.note("%s is gone: %s was evicted and Node %s deleted in the workload cluster", remoteMachine, remotePod, node)
	d.refreshTable(ctx)
	return nil
}

func nodeStatus(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return "Ready"
			}
			return "NotReady"
		}
	}
	return "Unknown"
}
