package features

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
)

// registerHealthSteps: Machine health (the Node's conditions) and the
// creation timeout. The scenarios play the kubelet and the node lifecycle
// controller by writing the Node's conditions (envtest runs neither).
func registerHealthSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a running Machine "([^"]*)" whose health conditions are "([^"]*)"$`, w.aRunningMachineWithHealthConditions)
	sc.Step(`^the Node of "([^"]*)" reports "([^"]*)" as "(True|False|Unknown)" because "([^"]*)"$`, w.nodeReports)
	sc.Step(`^the kubelet of "([^"]*)" stops reporting$`, w.kubeletStopsReporting)
	sc.Step(`^the Machine "([^"]*)" records since when it is unhealthy$`, w.recordsUnhealthySince)
	sc.Step(`^the Machine "([^"]*)" no longer records since when it was unhealthy$`, w.noUnhealthySince)
	sc.Step(`^the Machine "([^"]*)" has failure message containing "([^"]*)"$`, w.hasFailureMessage)
}

func (w *world) aRunningMachineWithHealthConditions(ctx context.Context, name, conditions string) error {
	return w.runningMachine(ctx, name, func(m *clusterv1.Machine) {
		m.Spec.Health.NodeConditions = strings.Split(conditions, ",")
	})
}

// nodeReports sets one condition of the Node; "Reason: message" gives both.
func (w *world) nodeReports(ctx context.Context, machine, ctype, status, because string) error {
	reason, message, _ := strings.Cut(because, ": ")
	return w.updateNode(ctx, machine, func(n *corev1.Node) {
		setNodeCondition(n, corev1.NodeCondition{Type: corev1.NodeConditionType(ctype), Status: corev1.ConditionStatus(status),
			Reason: reason, Message: message})
	}, true)
}

// kubeletStopsReporting plays the node lifecycle controller once a kubelet
// stops posting status, as the sim does (sim.MarkKubeletSilent).
func (w *world) kubeletStopsReporting(ctx context.Context, machine string) error {
	return w.updateNode(ctx, machine, func(n *corev1.Node) { sim.MarkKubeletSilent(n, metav1.Now()) }, true)
}

func setNodeCondition(n *corev1.Node, c corev1.NodeCondition) {
	now := metav1.Now()
	c.LastHeartbeatTime, c.LastTransitionTime = now, now
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == c.Type {
			if n.Status.Conditions[i].Status == c.Status {
				c.LastTransitionTime = n.Status.Conditions[i].LastTransitionTime
			}
			n.Status.Conditions[i] = c
			return
		}
	}
	n.Status.Conditions = append(n.Status.Conditions, c)
}

func (w *world) recordsUnhealthySince(ctx context.Context, name string) error {
	return w.machineHolds(ctx, name, "status.health.unhealthySince set", func(m *clusterv1.Machine) error {
		if m.Status.Health.UnhealthySince == nil {
			return errors.New("status.health.unhealthySince is not set")
		}
		return nil
	})
}

func (w *world) noUnhealthySince(ctx context.Context, name string) error {
	return w.machineHolds(ctx, name, "status.health.unhealthySince cleared", func(m *clusterv1.Machine) error {
		if s := m.Status.Health.UnhealthySince; s != nil {
			return fmt.Errorf("status.health.unhealthySince is still %s", s.UTC())
		}
		return nil
	})
}

func (w *world) hasFailureMessage(ctx context.Context, name, text string) error {
	return w.machineHolds(ctx, name, "failure message", func(m *clusterv1.Machine) error {
		if m.Status.FailureMessage == nil || !strings.Contains(*m.Status.FailureMessage, text) {
			return fmt.Errorf("failureMessage %v", m.Status.FailureMessage)
		}
		return nil
	})
}

// machineHolds polls until check accepts the Machine.
func (w *world) machineHolds(ctx context.Context, name, what string, check func(*clusterv1.Machine) error) error {
	return w.eventually(ctx, what, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if err := check(m); err != nil {
			return fmt.Errorf("%w; %s", err, describe(m))
		}
		return nil
	})
}
