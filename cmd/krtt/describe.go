package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func describeCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe cluster NAME",
		Short: "Show a Cluster, its MachineSets and Machines as a tree",
	}
	var namespace, kubeconfig, kubecontext string
	var timeout time.Duration
	cluster := &cobra.Command{
		Use:   "cluster NAME [-n NAMESPACE] [--kubeconfig FILE] [--context NAME]",
		Short: "Show a Cluster, its MachineSets and their Machines, and its other Machines, as a tree",
		Long: `describe cluster prints the Cluster, its MachineSets with the Machines each
controls, and the Cluster's other Machines, one per line: Ready, phase, and
what is in progress: the deletion step of a Machine being deleted, the
scaling or remediation of a MachineSet, why a Machine or Cluster is not
ready; and the table row that fired last. It only reads.`,
		Example: `  krtt describe cluster c1 -n default
  kubectl krtt describe cluster c1 -n default`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s describe cluster needs exactly one NAME", invokedAs())
			}
			c, ns, err := explainClient(kubeconfig, kubecontext)
			if err != nil {
				return err
			}
			if namespace != "" {
				ns = namespace
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			tree, err := describeCluster(ctx, c, client.ObjectKey{Namespace: ns, Name: args[0]})
			if apierrors.IsNotFound(err) {
				fmt.Fprintf(stdout, "Cluster %s/%s not found\n", ns, args[0])
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			return tree.write(stdout)
		},
	}
	cluster.Flags().StringVarP(&namespace, "namespace", "n", "", "the Cluster's namespace (default: the kubeconfig context's, else default)")
	cluster.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	cluster.Flags().StringVar(&kubecontext, "context", "", "kubeconfig context to use")
	cluster.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up reading the cluster after this long")
	cmd.AddCommand(cluster)
	return cmd
}

// node is one line of the tree.
type node struct {
	name, ready, phase, detail, row string
	children                        []*node
}

// describeCluster reads the Cluster, the MachineSets and Machines of its
// namespace that name it (spec.clusterName), and hangs each Machine under
// the MachineSet that controls it, or under the Cluster.
func describeCluster(ctx context.Context, c client.Client, key client.ObjectKey) (*node, error) {
	cl := &clusterv1.Cluster{}
	if err := c.Get(ctx, key, cl); err != nil {
		return nil, err
	}
	sets := &clusterv1.MachineSetList{}
	if err := c.List(ctx, sets, client.InNamespace(key.Namespace)); err != nil {
		return nil, err
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(key.Namespace)); err != nil {
		return nil, err
	}
	root := clusterNode(cl)
	bySet := map[types.UID]*node{}
	sort.Slice(sets.Items, func(i, j int) bool { return sets.Items[i].Name < sets.Items[j].Name })
	for i := range sets.Items {
		ms := &sets.Items[i]
		if ms.Spec.ClusterName != cl.Name {
			continue
		}
		n := setNode(ms)
		bySet[ms.UID] = n
		root.children = append(root.children, n)
	}
	sort.Slice(machines.Items, func(i, j int) bool { return machines.Items[i].Name < machines.Items[j].Name })
	var loose []*node
	for i := range machines.Items {
		m := &machines.Items[i]
		if m.Spec.ClusterName != cl.Name {
			continue
		}
		n := machineNode(m)
		if ref := metav1.GetControllerOf(m); ref != nil && ref.Kind == "MachineSet" && bySet[ref.UID] != nil {
			bySet[ref.UID].children = append(bySet[ref.UID].children, n)
			continue
		}
		loose = append(loose, n)
	}
	// The Cluster's own Machines (control plane, by hand) first, as
	// clusterctl lists the control plane before the workers.
	root.children = append(loose, root.children...)
	return root, nil
}

func clusterNode(cl *clusterv1.Cluster) *node {
	n := &node{name: "Cluster/" + cl.Name, phase: cl.Status.Phase, row: lastRow(cl.Status.LastTransition),
		ready: fmt.Sprintf("%d/%d", cl.Status.Machines.Ready, cl.Status.Machines.Total)}
	var details []string
	if cl.Spec.Paused {
		details = append(details, "paused")
	}
	if !cl.DeletionTimestamp.IsZero() {
		details = append(details, "deleting: "+cl.Status.State)
	}
	if w := meta.FindStatusCondition(cl.Status.Conditions, "WorkloadClusterReachable"); w != nil {
		d := "workload cluster " + w.Reason
		if w.Status != metav1.ConditionTrue && w.Message != "" {
			d += ": " + w.Message
		}
		details = append(details, d)
	}
	n.detail = strings.Join(details, "; ")
	return n
}

func setNode(ms *clusterv1.MachineSet) *node {
	desired := int32(0)
	if ms.Spec.Replicas != nil {
		desired = *ms.Spec.Replicas
	}
	n := &node{name: "MachineSet/" + ms.Name, phase: ms.Status.Phase, row: lastRow(ms.Status.LastTransition),
		ready: fmt.Sprintf("%d/%d", ms.Status.ReadyReplicas, desired)}
	var details []string
	if paused := meta.FindStatusCondition(ms.Status.Conditions, clusterv1.PausedCondition); paused != nil && paused.Status == metav1.ConditionTrue {
		details = append(details, "paused")
	}
	// What the set is doing: the conditions that say a step is in progress.
	for _, t := range []string{clusterv1.ScalingUpCondition, clusterv1.ScalingDownCondition, clusterv1.RemediatingCondition} {
		if cond := meta.FindStatusCondition(ms.Status.Conditions, t); cond != nil && cond.Status == metav1.ConditionTrue {
			details = append(details, withMessage(t, cond.Message))
		}
	}
	n.detail = strings.Join(details, "; ")
	return n
}

func machineNode(m *clusterv1.Machine) *node {
	n := &node{name: "Machine/" + m.Name, phase: string(m.Status.Phase), row: lastRow(m.Status.LastTransition), ready: "-"}
	ready := meta.FindStatusCondition(m.Status.Conditions, clusterv1.ReadyCondition)
	if ready != nil {
		n.ready = string(ready.Status)
	}
	switch deleting := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition); {
	case !m.DeletionTimestamp.IsZero():
		step := m.Status.Deletion.Step
		if step == "" {
			step = m.Status.State
		}
		msg := ""
		if deleting != nil {
			msg = deleting.Message
		}
		n.detail = withMessage("deleting: "+step, msg)
	case meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.PausedCondition):
		n.detail = "paused"
	case ready != nil && ready.Status != metav1.ConditionTrue:
		n.detail = withMessage(ready.Reason, ready.Message)
	}
	return n
}

func withMessage(what, msg string) string {
	if msg == "" {
		return what
	}
	return what + ": " + strings.Join(strings.Fields(msg), " ")
}

func lastRow(lt *kit.LastTransition) string {
	if lt == nil {
		return ""
	}
	return lt.Table + " " + lt.Row
}

// write prints the tree in aligned columns, clusterctl describe style.
func (n *node) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// The free-text column last, so a long message does not push the
	// others away.
	fmt.Fprintln(tw, "NAME\tREADY\tPHASE\tROW\tIN PROGRESS")
	var walk func(n *node, prefix, branch string)
	walk = func(n *node, prefix, branch string) {
		fmt.Fprintf(tw, "%s%s%s\t%s\t%s\t%s\t%s\n", prefix, branch, n.name, n.ready, orDash(n.phase), orDash(n.row), orDash(n.detail))
		childPrefix := prefix
		switch branch {
		case "├─":
			childPrefix += "│ "
		case "└─":
			childPrefix += "  "
		}
		for i, c := range n.children {
			b := "├─"
			if i == len(n.children)-1 {
				b = "└─"
			}
			walk(c, childPrefix, b)
		}
	}
	walk(n, "", "")
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
