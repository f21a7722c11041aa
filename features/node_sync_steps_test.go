package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// registerNodeSyncSteps: what the Machine controller keeps on a Node beyond
// the Machine's labels: the interruptible label and the outdated-revision
// taint.
func registerNodeSyncSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the infrastructure of "([^"]*)" reports (an|no) interruptible instance$`, w.infraInterruptible)
	sc.Step(`^the Node of "([^"]*)" has no label "([^"]*)"$`, w.nodeHasNoLabel)
	sc.Step(`^the operator restarts syncing Machine labels matching "([^"]*)" and annotations matching "([^"]*)" to Nodes$`, w.restartSyncing)
	sc.Step(`^the Node of every Machine of the MachineSet called "([^"]*)" (has|does not have) the taint "([^"]*)"$`, w.calledSetNodesTainted)
}

// infraInterruptible plays the infrastructure provider reporting
// status.interruptible.
func (w *world) infraInterruptible(ctx context.Context, name, an string) error {
	sm := &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return w.updateStatus(ctx, sm, func() { sm.Status.Interruptible = an == "an" })
}

func (w *world) nodeHasNoLabel(ctx context.Context, name, key string) error {
	return w.eventually(ctx, "Node without label "+key, func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Name: w.nodeName(name)}, n); err != nil {
			return err
		}
		if v, ok := n.Labels[key]; ok {
			return fmt.Errorf("label %s = %q", key, v)
		}
		return nil
	})
}

// calledSetNodesTainted checks the Node of every Machine of a MachineSet
// for a taint written KEY:EFFECT; every Machine must have its Node.
func (w *world) calledSetNodesTainted(ctx context.Context, alias, has, taint string) error {
	key, effect, ok := strings.Cut(taint, ":")
	if !ok {
		return fmt.Errorf("taint %q is not KEY:EFFECT", taint)
	}
	want := corev1.Taint{Key: key, Effect: corev1.TaintEffect(effect)}
	return w.eachMachine(ctx, w.setAlias(alias), has+" the taint "+taint, func(m *clusterv1.Machine) error {
		if m.Status.NodeRef == nil {
			return fmt.Errorf("Machine %s has no Node yet", m.Name)
		}
		n := &corev1.Node{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, n); err != nil {
			return err
		}
		found := false
		for i := range n.Spec.Taints {
			found = found || n.Spec.Taints[i].MatchTaint(&want)
		}
		if found != (has == "has") {
			return fmt.Errorf("Node %s of Machine %s: taints %+v", n.Name, m.Name, n.Spec.Taints)
		}
		return nil
	})
}

// restartSyncing restarts the operator as if started with
// --additional-sync-machine-labels and --additional-sync-machine-annotations
// until the scenario ends (a @serial scenario: every Machine is synced so).
func (w *world) restartSyncing(_ context.Context, labels, annotations string) error {
	sync, err := controller.CompileNodeSync([]string{labels}, []string{annotations})
	if err != nil {
		return err
	}
	w.h.NodeSync = sync
	w.undo = append(w.undo, func(context.Context) error {
		w.h.NodeSync = controller.NodeSync{}
		return w.h.RestartOperator()
	})
	return w.h.RestartOperator()
}
