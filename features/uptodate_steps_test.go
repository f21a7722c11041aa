package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
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

func describeWorkers(wk clusterv1.ClusterWorkers) string {
	n := func(p *int32) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s desired, %s current, %s ready, %s available and %s up-to-date", n(wk.DesiredReplicas), n(wk.Replicas),
		n(wk.ReadyReplicas), n(wk.AvailableReplicas), n(wk.UpToDateReplicas))
}

func (w *world) clusterWorkers(ctx context.Context, name string, desired, current, ready, available, upToDate int) error {
	want := fmt.Sprintf("%d desired, %d current, %d ready, %d available and %d up-to-date", desired, current, ready, available, upToDate)
	return w.eventually(ctx, "Cluster workers "+want, func(ctx context.Context) error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		if got := describeWorkers(c.Status.Workers); got != want {
			return fmt.Errorf("status.workers %s", got)
		}
		return nil
	})
}

// clusterControlPlaneCounts: want reads as describeWorkers writes, "unset"
// for a counter not reported.
func (w *world) clusterControlPlaneCounts(ctx context.Context, name, want string) error {
	return w.eventually(ctx, "Cluster control plane "+want, func(ctx context.Context) error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		cp := c.Status.ControlPlane
		if got := describeWorkers(clusterv1.ClusterWorkers(cp)); got != want {
			return fmt.Errorf("status.controlPlane %s", got)
		}
		return nil
	})
}

func (w *world) clusterNoWorkers(ctx context.Context, name string) error {
	return w.eventually(ctx, "Cluster without workers", func(ctx context.Context) error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		if c.Status.Workers != (clusterv1.ClusterWorkers{}) {
			return fmt.Errorf("status.workers %s", describeWorkers(c.Status.Workers))
		}
		return nil
	})
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
	return w.eventually(ctx, "every Machine of "+name+" updating", func(ctx context.Context) error {
		machines, err := w.deploymentMachines(ctx, name)
		if err != nil {
			return err
		}
		if len(machines) == 0 {
			return fmt.Errorf("no Machine")
		}
		for i := range machines {
			m := &machines[i]
			want := fmt.Sprintf("* Node.status.nodeInfo.kubeletVersion %s, %s required", kubelet, m.Spec.Version)
			if c := upToDate(m); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Updating" || c.Message != want {
				return fmt.Errorf("Machine %s UpToDate %+v, want Updating %q", m.Name, c, want)
			}
		}
		return nil
	})
}

func upToDate(m *clusterv1.Machine) *metav1.Condition {
	return meta.FindStatusCondition(m.Status.Conditions, clusterv1.UpToDateCondition)
}

func (w *world) deploymentMachinesUpToDate(ctx context.Context, name string) error {
	return w.eventually(ctx, "every Machine of "+name+" up to date", func(ctx context.Context) error {
		machines, err := w.deploymentMachines(ctx, name)
		if err != nil {
			return err
		}
		if len(machines) == 0 {
			return fmt.Errorf("no Machine")
		}
		for i := range machines {
			if c := upToDate(&machines[i]); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "UpToDate" {
				return fmt.Errorf("Machine %s UpToDate %+v", machines[i].Name, c)
			}
		}
		return nil
	})
}

// calledSetMachinesNotUpToDate: each message line is said, "; " between
// them in the step.
func (w *world) calledSetMachinesNotUpToDate(ctx context.Context, alias, says string) error {
	set := w.setAlias(alias)
	return w.eventually(ctx, "every Machine of "+set+" not up to date", func(ctx context.Context) error {
		list := &clusterv1.MachineList{}
		if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
			return err
		}
		n := 0
		for i := range list.Items {
			m := &list.Items[i]
			if ref := metav1.GetControllerOf(m); ref == nil || ref.Kind != "MachineSet" || ref.Name != set {
				continue
			}
			n++
			c := upToDate(m)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "NotUpToDate" {
				return fmt.Errorf("Machine %s UpToDate %+v", m.Name, c)
			}
			for _, line := range strings.Split(says, "; ") {
				if !strings.Contains(c.Message, line) {
					return fmt.Errorf("Machine %s UpToDate message %q does not say %q", m.Name, c.Message, line)
				}
			}
		}
		if n == 0 {
			return fmt.Errorf("the MachineSet %s has no Machine", set)
		}
		return nil
	})
}
