package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// holdFinalizer keeps an object that a scenario deletes in its "being
// deleted" state.
const holdFinalizer = "specs.krtt.dev/hold"

// registerNodeSkipSteps: the situations in which deletion may not touch
// the Node (Cluster API's isDeleteNodeAllowed).
func registerNodeSkipSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a running control-plane Machine "([^"]*)"$`, w.aRunningControlPlaneMachine)
	sc.Step(`^the control plane of the Cluster is being deleted$`, w.controlPlaneBeingDeleted)
	sc.Step(`^"([^"]*)" is the only control-plane Machine of the Cluster$`, w.onlyControlPlaneMachine)
	sc.Step(`^"([^"]*)" is the only control-plane Machine of the Cluster and the control plane is not externally managed$`, w.onlyControlPlaneMachineNotExternal)
	sc.Step(`^the Cluster has no control-plane Machine and the control plane is not externally managed$`, w.noControlPlaneMachineNotExternal)
	sc.Step(`^the control plane of the Cluster is externally managed$`, w.controlPlaneExternal)
	sc.Step(`^a running control-plane Machine "([^"]*)" of a control plane that is not externally managed$`, w.controlPlaneMachineNotExternal)
	sc.Step(`^row "([^"]*)" fired for "([^"]*)" saying "([^"]*)"$`, w.rowFiredSaying)
}

func (w *world) aRunningControlPlaneMachine(ctx context.Context, name string) error {
	return w.runningMachine(ctx, name, func(m *clusterv1.Machine) {
		m.Labels = map[string]string{clusterv1.ControlPlaneLabel: ""}
	})
}

// deleteHeld adds the hold finalizer to obj and deletes it, so it stays
// with a deletionTimestamp for the rest of the scenario.
func (w *world) deleteHeld(ctx context.Context, obj client.Object) error {
	if err := w.hold(ctx, obj); err != nil {
		return err
	}
	return w.h.Client.Delete(ctx, obj)
}

// hold adds the hold finalizer to obj, as a provider that keeps its
// object until it has cleaned up.
func (w *world) hold(ctx context.Context, obj client.Object) error {
	key := client.ObjectKeyFromObject(obj)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.h.Client.Get(ctx, key, obj); err != nil {
			return err
		}
		obj.SetFinalizers(append(obj.GetFinalizers(), holdFinalizer))
		return w.h.Client.Update(ctx, obj)
	})
}

// controlPlaneBeingDeleted deletes the Cluster's control plane object and
// keeps it in its "being deleted" state.
func (w *world) controlPlaneBeingDeleted(ctx context.Context) error {
	return w.deleteHeld(ctx, &simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.cluster}})
}

// controlPlaneNotExternal plays the control plane provider of a control plane
// made of the Cluster's own Machines.
func (w *world) controlPlaneNotExternal(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cp := &simv1.SimControlPlane{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: w.cluster}, cp); err != nil {
			return err
		}
		cp.Status.ExternalManagedControlPlane = ptr.To(false)
		return w.h.Client.Status().Update(ctx, cp)
	})
}

// controlPlaneExternal checks the fixture's premise: the control plane
// provider reports a control plane run outside the Cluster's Machines.
func (w *world) controlPlaneExternal(ctx context.Context) error {
	return w.eventually(ctx, "an externally managed control plane", func(ctx context.Context) error {
		cp := &simv1.SimControlPlane{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: w.cluster}, cp); err != nil {
			return err
		}
		if !ptr.Deref(cp.Status.ExternalManagedControlPlane, false) {
			return fmt.Errorf("the control plane %s reports externalManagedControlPlane %v, want true", cp.Name, cp.Status.ExternalManagedControlPlane)
		}
		return nil
	})
}

func (w *world) controlPlaneMachineNotExternal(ctx context.Context, name string) error {
	if err := w.aRunningControlPlaneMachine(ctx, name); err != nil {
		return err
	}
	return w.controlPlaneNotExternal(ctx)
}

func (w *world) onlyControlPlaneMachineNotExternal(ctx context.Context, name string) error {
	if err := w.onlyControlPlaneMachine(ctx, name); err != nil {
		return err
	}
	return w.controlPlaneNotExternal(ctx)
}

func (w *world) noControlPlaneMachineNotExternal(ctx context.Context) error {
	if cp, err := w.controlPlaneMachines(ctx); err != nil || len(cp) > 0 {
		return fmt.Errorf("control-plane Machines of %s: %v (%v), want none", w.cluster, cp, err)
	}
	return w.controlPlaneNotExternal(ctx)
}

// onlyControlPlaneMachine checks the premise rather than assuming it.
func (w *world) onlyControlPlaneMachine(ctx context.Context, name string) error {
	cp, err := w.controlPlaneMachines(ctx)
	if err != nil {
		return err
	}
	if len(cp) != 1 || cp[0] != name {
		return fmt.Errorf("control-plane Machines of %s: %v, want only %s", w.cluster, cp, name)
	}
	return nil
}

func (w *world) controlPlaneMachines(ctx context.Context) ([]string, error) {
	list := &clusterv1.MachineList{}
	if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
		return nil, err
	}
	var cp []string
	for _, m := range list.Items {
		if _, ok := m.Labels[clusterv1.ControlPlaneLabel]; ok && m.Spec.ClusterName == w.cluster {
			cp = append(cp, m.Name)
		}
	}
	return cp, nil
}

func (w *world) rowFiredSaying(ctx context.Context, row, name, text string) error {
	return w.eventually(ctx, "row "+row+" saying "+text, func(context.Context) error {
		var said, fired []string
		for _, tr := range w.h.Traces(w.key(name)) {
			fired = append(fired, tr.Row)
			if tr.Row == row {
				if strings.Contains(tr.Message, text) || strings.Contains(tr.Note, text) {
					return nil
				}
				said = append(said, tr.Message+" "+tr.Note)
			}
		}
		return fmt.Errorf("row %s said %q (rows fired for %s: %v)", row, said, name, fired)
	})
}
