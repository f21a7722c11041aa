package features

import (
	"context"
	"fmt"
	"slices"

	"github.com/cucumber/godog"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerReadinessSteps: spec.readinessGates, and the other controllers
// that report the conditions they name.
func registerReadinessSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the Machine "([^"]*)" gets the (positive|negative) readiness gate "([^"]*)"$`, w.machineGetsGate)
	sc.Step(`^another controller sets the condition "([^"]*)" of the Machine "([^"]*)" to "(True|False|Unknown)" with reason "([^"]*)" and message "([^"]*)"$`, w.otherControllerSetsCondition)
	sc.Step(`^the template of the MachineSet "([^"]*)" gets the readiness gate "([^"]*)"$`, w.templateGetsGate)
	sc.Step(`^Machine "([^"]*)" of the set has the readiness gate "([^"]*)"$`, w.setMachineHasGate)
	sc.Step(`^the template of the MachineDeployment "([^"]*)" gets the readiness gate "([^"]*)"$`, w.deploymentTemplateGetsGate)
	sc.Step(`^every Machine of the deployment "([^"]*)" has the readiness gate "([^"]*)"$`, w.deploymentMachinesHaveGate)
	sc.Step(`^another controller sets the condition "([^"]*)" of every Machine of the deployment "([^"]*)" to "(True|False|Unknown)" with reason "([^"]*)"$`, w.otherControllerSetsDeploymentCondition)
	sc.Step(`^a running Machine "([^"]*)" with minReadySeconds (\d+)$`, w.aRunningMachineWithMinReadySeconds)
	sc.Step(`^the Cluster "([^"]*)" gets the (positive|negative) availability gate "([^"]*)"$`, w.clusterGetsGate)
	sc.Step(`^another controller sets the condition "([^"]*)" of the Cluster "([^"]*)" to "(True|False|Unknown)" with reason "([^"]*)" and message "([^"]*)"$`, w.otherControllerSetsClusterCondition)
	sc.Step(`^Machine "([^"]*)" of the set has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)"$`, w.setMachineHasCondition)
	sc.Step(`^Machine "([^"]*)" of the set has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)" and message containing "([^"]*)"$`, w.setMachineHasConditionWithMessage)
}

func (w *world) clusterGetsGate(ctx context.Context, name, polarity, conditionType string) error {
	g := gate(conditionType, polarity)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		c.Spec.AvailabilityGates = append(c.Spec.AvailabilityGates, clusterv1.ClusterAvailabilityGate{ConditionType: g.ConditionType, Polarity: g.Polarity})
		return w.h.Client.Update(ctx, c)
	})
}

func (w *world) otherControllerSetsClusterCondition(ctx context.Context, conditionType, name, status, reason, message string) error {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return w.updateStatus(ctx, c, func() {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: conditionType,
			Status: metav1.ConditionStatus(status), Reason: reason, Message: message, ObservedGeneration: c.Generation})
	})
}

func (w *world) aRunningMachineWithMinReadySeconds(ctx context.Context, name string, seconds int) error {
	return w.runningMachine(ctx, name, func(m *clusterv1.Machine) { m.Spec.MinReadySeconds = int32(seconds) })
}

func (w *world) setMachineHasCondition(ctx context.Context, name, ctype, status, reason string) error {
	return w.condition(ctx, w.alias(name), ctype, status, reason, "")
}

func (w *world) setMachineHasConditionWithMessage(ctx context.Context, name, ctype, status, reason, msg string) error {
	return w.condition(ctx, w.alias(name), ctype, status, reason, msg)
}

func hasGate(m *clusterv1.Machine, conditionType string) bool {
	return slices.ContainsFunc(m.Spec.ReadinessGates, func(g clusterv1.MachineReadinessGate) bool { return g.ConditionType == conditionType })
}

func gate(conditionType, polarity string) clusterv1.MachineReadinessGate {
	g := clusterv1.MachineReadinessGate{ConditionType: conditionType}
	if polarity == "negative" {
		g.Polarity = clusterv1.NegativePolarity
	}
	return g
}

func (w *world) machineGetsGate(ctx context.Context, name, polarity, conditionType string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
		m.Spec.ReadinessGates = append(m.Spec.ReadinessGates, gate(conditionType, polarity))
	})
}

// otherControllerSetsCondition writes one condition of the Machine's status
// as a controller other than krtt does (a control plane reporting its
// components, an installer its software): read, set, update, again on a
// conflict with krtt's own status writes.
func (w *world) otherControllerSetsCondition(ctx context.Context, conditionType, name, status, reason, message string) error {
	name = w.alias(name)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: conditionType,
			Status: metav1.ConditionStatus(status), Reason: reason, Message: message, ObservedGeneration: m.Generation})
		return w.h.Client.Status().Update(ctx, m)
	})
}

func (w *world) templateGetsGate(ctx context.Context, set, conditionType string) error {
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) {
		ms.Spec.Template.Spec.ReadinessGates = append(ms.Spec.Template.Spec.ReadinessGates, gate(conditionType, "positive"))
	})
}

func (w *world) setMachineHasGate(ctx context.Context, name, conditionType string) error {
	name = w.alias(name)
	return w.eventually(ctx, "Machine "+name+" readiness gate "+conditionType, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if !hasGate(m, conditionType) {
			return fmt.Errorf("Machine %s readinessGates %+v", name, m.Spec.ReadinessGates)
		}
		return nil
	})
}

func (w *world) deploymentTemplateGetsGate(ctx context.Context, name, conditionType string) error {
	return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) {
		md.Spec.Template.Spec.ReadinessGates = append(md.Spec.Template.Spec.ReadinessGates, gate(conditionType, "positive"))
	})
}

func (w *world) deploymentMachinesHaveGate(ctx context.Context, name, conditionType string) error {
	return w.everyDeploymentMachine(ctx, name, "with readiness gate "+conditionType, func(m *clusterv1.Machine) error {
		if !hasGate(m, conditionType) {
			return fmt.Errorf("readinessGates %+v", m.Spec.ReadinessGates)
		}
		return nil
	})
}

// everyDeploymentMachine waits until the deployment has Machines and check
// passes for each.
func (w *world) everyDeploymentMachine(ctx context.Context, name, what string, check func(*clusterv1.Machine) error) error {
	return w.eventually(ctx, "every Machine of "+name+" "+what, func(ctx context.Context) error {
		machines, err := w.deploymentMachines(ctx, name)
		if err != nil {
			return err
		}
		if len(machines) == 0 {
			return fmt.Errorf("no Machine")
		}
		for i := range machines {
			if err := check(&machines[i]); err != nil {
				return fmt.Errorf("Machine %s: %w", machines[i].Name, err)
			}
		}
		return nil
	})
}

func (w *world) otherControllerSetsDeploymentCondition(ctx context.Context, conditionType, name, status, reason string) error {
	machines, err := w.deploymentMachines(ctx, name)
	if err != nil {
		return err
	}
	if len(machines) == 0 {
		return fmt.Errorf("the deployment %s has no Machine", name)
	}
	for _, m := range machines {
		if err := w.otherControllerSetsCondition(ctx, conditionType, m.Name, status, reason, ""); err != nil {
			return err
		}
	}
	return nil
}
