package features

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerTaintSteps: spec.taints of Machines and their templates, and what
// reaches the Node (Cluster API's MachineTaintPropagation).
func registerTaintSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the Machine "([^"]*)" has the (Always|OnInitialization) taint "([^"]*)"$`, func(ctx context.Context, name, propagation, taint string) error {
		t, err := parseMachineTaint(taint, propagation)
		if err != nil {
			return err
		}
		return w.updateMachine(ctx, name, func(m *clusterv1.Machine) { m.Spec.Taints = append(m.Spec.Taints, t) })
	})
	sc.Step(`^the Machine "([^"]*)" no longer has the taint "([^"]*)"$`, func(ctx context.Context, name, taint string) error {
		t, err := parseMachineTaint(taint, "")
		if err != nil {
			return err
		}
		return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
			m.Spec.Taints = slices.DeleteFunc(m.Spec.Taints, func(mt clusterv1.MachineTaint) bool { return mt.Key == t.Key && mt.Effect == t.Effect })
		})
	})
	sc.Step(`^the template of the MachineDeployment "([^"]*)" gets the (Always|OnInitialization) taint "([^"]*)"$`, func(ctx context.Context, name, propagation, taint string) error {
		t, err := parseMachineTaint(taint, propagation)
		if err != nil {
			return err
		}
		return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) {
			md.Spec.Template.Spec.Taints = append(md.Spec.Template.Spec.Taints, t)
		})
	})
	sc.Step(`^the Node of "([^"]*)" has the taint "([^"]*)"$`, w.nodeHasTaint)
	sc.Step(`^someone removes the taints "([^"]*)" from the Node of "([^"]*)"$`, w.removeNodeTaints)
	sc.Step(`^every Machine of the MachineSet called "([^"]*)" has the taint "([^"]*)" in its spec$`, func(ctx context.Context, alias, taint string) error {
		t, err := parseMachineTaint(taint, "")
		if err != nil {
			return err
		}
		return w.eachMachine(ctx, w.setAlias(alias), "the taint "+taint+" in its spec", func(m *clusterv1.Machine) error {
			for _, mt := range m.Spec.Taints {
				if mt.Key == t.Key && mt.Effect == t.Effect && mt.Value == t.Value {
					return nil
				}
			}
			return fmt.Errorf("Machine %s has the taints %+v", m.Name, m.Spec.Taints)
		})
	})
}

// parseMachineTaint reads KEY[=VALUE]:EFFECT.
func parseMachineTaint(s, propagation string) (clusterv1.MachineTaint, error) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return clusterv1.MachineTaint{}, fmt.Errorf("taint %q is not KEY[=VALUE]:EFFECT", s)
	}
	key, value, _ := strings.Cut(s[:i], "=")
	return clusterv1.MachineTaint{Key: key, Value: value, Effect: corev1.TaintEffect(s[i+1:]), Propagation: clusterv1.MachineTaintPropagation(propagation)}, nil
}

// nodeHasTaint waits for the Node to carry the taint with that value.
func (w *world) nodeHasTaint(ctx context.Context, name, taint string) error {
	t, err := parseMachineTaint(taint, "")
	if err != nil {
		return err
	}
	return w.eventually(ctx, "Node of "+name+" with the taint "+taint, func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Name: w.nodeName(name)}, n); err != nil {
			return err
		}
		for _, c := range n.Spec.Taints {
			if c.Key == t.Key && c.Effect == t.Effect && c.Value == t.Value {
				return nil
			}
		}
		return fmt.Errorf("taints %+v", n.Spec.Taints)
	})
}

// removeNodeTaints plays a person or another controller editing the Node:
// the taints (comma-separated KEY:EFFECT) go.
func (w *world) removeNodeTaints(ctx context.Context, list, name string) error {
	var gone []corev1.Taint
	for s := range strings.SplitSeq(list, ",") {
		t, err := parseMachineTaint(strings.TrimSpace(s), "")
		if err != nil {
			return err
		}
		gone = append(gone, corev1.Taint{Key: t.Key, Effect: t.Effect})
	}
	return w.updateNode(ctx, name, func(n *corev1.Node) {
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(c corev1.Taint) bool {
			return slices.ContainsFunc(gone, func(g corev1.Taint) bool { return c.MatchTaint(&g) })
		})
	}, false)
}
