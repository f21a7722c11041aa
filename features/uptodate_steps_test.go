package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerUpToDateSteps: the UpToDate condition of the Machines of a
// MachineDeployment.
func registerUpToDateSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^every Machine of the deployment "([^"]*)" is up to date$`, w.deploymentMachinesUpToDate)
	sc.Step(`^every Machine of the MachineSet called "([^"]*)" is not up to date, saying "([^"]*)"$`, w.calledSetMachinesNotUpToDate)
	sc.Step(`^every Machine of the deployment "([^"]*)" is updating while its Node's kubelet reports "([^"]*)"$`, w.deploymentMachinesUpdating)
	sc.Step(`^the kubelets of the deployment "([^"]*)" report "([^"]*)"$`, w.deploymentKubeletsReport)
	sc.Step(`^the MachineDeployment "([^"]*)" reports (\d+) up-to-date replicas?$`, w.deploymentUpToDateReplicas)
	sc.Step(`^the MachineSet called "([^"]*)" reports (\d+) up-to-date replicas?$`, w.calledSetUpToDateReplicas)
	sc.Step(`^the Cluster "([^"]*)" reports (\d+) desired, (\d+) current, (\d+) ready, (\d+) available and (\d+) up-to-date workers$`, w.clusterWorkers)
	sc.Step(`^the Cluster "([^"]*)" reports no workers$`, w.clusterNoWorkers)
	sc.Step(`^the Cluster "([^"]*)" reports its control plane as "([^"]*)"$`, w.clusterControlPlaneCounts)
	sc.Step(`^the MachineSet called "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)" and message containing "([^"]*)"$`, w.calledSetCondition)
}

func (w *world) calledSetCondition(ctx context.Context, alias, ctype, status, reason, msg string) error {
	return w.setCondition(ctx, w.setAlias(alias), ctype, status, reason, msg)
}

// describeReplicas words a Cluster's replica counters as the steps do,
// "unset" for a counter not set.
func describeReplicas(r clusterv1.ClusterReplicas) string {
	n := func(p *int32) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s desired, %s current, %s ready, %s available and %s up-to-date", n(r.DesiredReplicas), n(r.Replicas),
		n(r.ReadyReplicas), n(r.AvailableReplicas), n(r.UpToDateReplicas))
}

// clusterReplicas waits for status.workers, or with controlPlane for
// status.controlPlane, to read want.
func (w *world) clusterReplicas(ctx context.Context, name string, controlPlane bool, want string) error {
	which := "workers"
	if controlPlane {
		which = "controlPlane"
	}
	return w.eventually(ctx, "Cluster "+which+" "+want, func(ctx context.Context) error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		r := c.Status.Workers
		if controlPlane {
			r = c.Status.ControlPlane
		}
		if got := describeReplicas(r); got != want {
			return fmt.Errorf("status.%s %s", which, got)
		}
		return nil
	})
}

func (w *world) clusterWorkers(ctx context.Context, name string, desired, current, ready, available, upToDate int) error {
	return w.clusterReplicas(ctx, name, false,
		fmt.Sprintf("%d desired, %d current, %d ready, %d available and %d up-to-date", desired, current, ready, available, upToDate))
}

func (w *world) clusterControlPlaneCounts(ctx context.Context, name, want string) error {
	return w.clusterReplicas(ctx, name, true, want)
}

func (w *world) clusterNoWorkers(ctx context.Context, name string) error {
	return w.clusterReplicas(ctx, name, false, describeReplicas(clusterv1.ClusterReplicas{}))
}

func (w *world) deploymentUpToDateReplicas(ctx context.Context, name string, n int) error {
	return w.eventually(ctx, fmt.Sprintf("%s reports %d up-to-date", name, n), func(ctx context.Context) error {
		md, err := w.deployment(ctx, name)
		if err != nil {
			return err
		}
		if int(md.Status.UpToDateReplicas) != n {
			return fmt.Errorf("upToDateReplicas %d", md.Status.UpToDateReplicas)
		}
		return nil
	})
}

func (w *world) calledSetUpToDateReplicas(ctx context.Context, alias string, n int) error {
	return w.eventually(ctx, fmt.Sprintf("MachineSet %s reports %d up-to-date", alias, n), func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, w.setAlias(alias))
		if err != nil {
			return err
		}
		if int(ms.Status.UpToDateReplicas) != n {
			return fmt.Errorf("upToDateReplicas %d", ms.Status.UpToDateReplicas)
		}
		return nil
	})
}

// deploymentMachinesUpdating: the simulated kubelets report the version they
// were built with, whatever spec.version asks for.
func (w *world) deploymentMachinesUpdating(ctx context.Context, name, kubelet string) error {
	return w.everyDeploymentMachine(ctx, name, "updating", func(m *clusterv1.Machine) error {
		want := fmt.Sprintf("* Node.status.nodeInfo.kubeletVersion %s, %s required", kubelet, m.Spec.Version)
		if c := upToDate(m); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Updating" || c.Message != want {
			return fmt.Errorf("UpToDate %+v, want Updating %q", c, want)
		}
		return nil
	})
}

// deploymentKubeletsReport plays the kubelet on each Node of the
// deployment's Machines reporting version (a kubelet restarted on the new
// image reports its new version in the Node's status).
func (w *world) deploymentKubeletsReport(ctx context.Context, name, version string) error {
	machines, err := w.deploymentMachines(ctx, name)
	if err != nil {
		return err
	}
	for _, m := range machines {
		if m.Status.NodeRef == nil {
			return fmt.Errorf("Machine %s has no Node", m.Name)
		}
		node := &corev1.Node{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node); err != nil {
			return err
		}
		before := node.DeepCopy()
		node.Status.NodeInfo.KubeletVersion = version
		if err := w.h.Client.Status().Patch(ctx, node, client.MergeFrom(before)); err != nil {
			return err
		}
	}
	return nil
}

func upToDate(m *clusterv1.Machine) *metav1.Condition {
	return meta.FindStatusCondition(m.Status.Conditions, clusterv1.UpToDateCondition)
}

func (w *world) deploymentMachinesUpToDate(ctx context.Context, name string) error {
	return w.everyDeploymentMachine(ctx, name, "up to date", func(m *clusterv1.Machine) error {
		if c := upToDate(m); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "UpToDate" {
			return fmt.Errorf("UpToDate %+v", c)
		}
		return nil
	})
}

// calledSetMachinesNotUpToDate: each message line is said, "; " between
// them in the step. A MachineSet names its Machines <set>-<suffix>.
func (w *world) calledSetMachinesNotUpToDate(ctx context.Context, alias, says string) error {
	return w.eachMachine(ctx, w.setAlias(alias), "not up to date", func(m *clusterv1.Machine) error {
		c := upToDate(m)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "NotUpToDate" {
			return fmt.Errorf("Machine %s UpToDate %+v", m.Name, c)
		}
		for _, line := range strings.Split(says, "; ") {
			if !strings.Contains(c.Message, line) {
				return fmt.Errorf("Machine %s UpToDate message %q does not say %q", m.Name, c.Message, line)
			}
		}
		return nil
	})
}
