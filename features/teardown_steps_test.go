package features

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions"
	clusteractions "github.com/krtt-dev/krtt/actions/cluster"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// registerTeardownSteps: a Cluster's teardown (cluster_teardown.feature).
func registerTeardownSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a running Machine "([^"]*)" controlled by another owner$`, w.runningMachineOfAnotherOwner)
	sc.Step(`^a running control-plane Machine "([^"]*)" controlled by the control plane object$`, w.runningMachineOfControlPlane)
	sc.Step(`^the control plane object of the Cluster "([^"]*)" was deleted once every Machine it waited for was gone$`, w.controlPlaneDeletedLast)
	sc.Step(`^the Cluster "([^"]*)" has the krtt finalizer$`, w.clusterHasFinalizer)
	sc.Step(`^the MachineSet "([^"]*)" is owned by the Cluster "([^"]*)"$`, w.machineSetOwnedByCluster)
	sc.Step(`^the MachineDeployment "([^"]*)" is owned by the Cluster "([^"]*)"$`, w.deploymentOwnedByCluster)
	sc.Step(`^I delete the Cluster "([^"]*)"$`, w.deleteClusterRecorded)
	sc.Step(`^the finalizer "([^"]*)" is removed from the Cluster "([^"]*)"$`, w.removeClusterFinalizer)
	sc.Step(`^the Cluster "([^"]*)" is gone$`, w.clusterGone)
	sc.Step(`^every worker Machine of the Cluster was gone before a control-plane Machine was deleted$`, w.workersBeforeControlPlane)
	sc.Step(`^nothing of the Cluster "([^"]*)" is left$`, w.nothingLeft)
	sc.Step(`^the MachineDeployment "([^"]*)", its MachineSets and its Machines were gone before the Cluster "([^"]*)" went, which waited saying "([^"]*)"$`, w.deploymentGoneBeforeCluster)
	sc.Step(`^krtt explain cluster "([^"]*)" says "([^"]*)"$`, w.explainClusterSays)
	sc.Step(`^the Machine "([^"]*)" is not being deleted$`, w.machineNotDeleting)
	sc.Step(`^row "([^"]*)" never fired for "([^"]*)"$`, w.rowNeverFired)
	sc.Step(`^the Cluster "([^"]*)" is (paused|unpaused)$`, w.pauseCluster)
	sc.Step(`^the Cluster "([^"]*)" holds its deletion while paused, its Machines untouched$`, w.clusterHoldsWhilePaused)
	sc.Step(`^the status of the Cluster "([^"]*)" names the state "([^"]*)"$`, w.clusterStatusState)
	sc.Step(`^the Cluster "([^"]*)" is in state "([^"]*)"$`, w.clusterInState)
}

// runningMachineOfAnotherOwner: a Machine some other controller owns (a
// controller reference to an object of another kind), so the Cluster's
// teardown leaves it to that owner.
func (w *world) runningMachineOfAnotherOwner(ctx context.Context, name string) error {
	return w.runningMachine(ctx, name, func(m *clusterv1.Machine) {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "keeper",
			UID: types.UID("keeper-" + w.ns), Controller: ptr.To(true)}}
	})
}

// runningMachineOfControlPlane: a control-plane Machine its Cluster's
// control plane object controls, as a control plane provider's Machines are.
func (w *world) runningMachineOfControlPlane(ctx context.Context, name string) error {
	cp := &simv1.SimControlPlane{}
	if err := w.h.Client.Get(ctx, w.key(w.cluster), cp); err != nil {
		return err
	}
	return w.runningMachine(ctx, name, func(m *clusterv1.Machine) {
		m.Labels = map[string]string{clusterv1.ControlPlaneLabel: ""}
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: simv1.GroupVersion.String(), Kind: "SimControlPlane", Name: cp.Name,
			UID: cp.UID, Controller: ptr.To(true)}}
	})
}

// controlPlaneDeletedLast reads the traces and the API server: the Cluster
// deleted its control plane object (K17) only after every Machine it
// waited for had completed its deletion, the object is gone, and the
// finalizer went after it (K11).
func (w *world) controlPlaneDeletedLast(ctx context.Context, name string) error {
	return w.eventually(ctx, "control plane object of "+name+" deleted last", func(ctx context.Context) error {
		err := w.h.Client.Get(ctx, w.key(name), &simv1.SimControlPlane{})
		if err == nil {
			return fmt.Errorf("SimControlPlane %s still exists", name)
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		var deleted, done time.Time
		for _, tr := range w.h.Traces(w.key(name)) {
			if tr.Set != "cluster" {
				continue
			}
			if tr.Row == "K17" && deleted.IsZero() {
				deleted = tr.Time
			}
			if tr.Row == "K11" && done.IsZero() {
				done = tr.Time
			}
		}
		if deleted.IsZero() || done.IsZero() || done.Before(deleted) {
			return fmt.Errorf("Cluster %s: control plane object deleted (K17) at %v, finalizer removed (K11) at %v", name, deleted, done)
		}
		for m := range w.teardown {
			var gone time.Time
			for _, tr := range w.h.Traces(w.key(m)) {
				if tr.Set == "machine" && tr.To == "DeletionCompleted" {
					gone = tr.Time
					break
				}
			}
			if gone.IsZero() || gone.After(deleted) {
				return fmt.Errorf("Machine %s completed its deletion at %v, the control plane object was deleted at %s", m, gone, deleted.Format(time.RFC3339Nano))
			}
		}
		return nil
	})
}

// clusterStatusState writes status.state as another version of the tables
// might have left it (an upgrade of the operator).
func (w *world) clusterStatusState(ctx context.Context, name, state string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		c.Status.State = state
		return w.h.Client.Status().Update(ctx, c)
	})
}

func (w *world) cluster1(ctx context.Context, name string) (*clusterv1.Cluster, error) {
	c := &clusterv1.Cluster{}
	return c, w.h.Client.Get(ctx, w.key(name), c)
}

func (w *world) clusterHasFinalizer(ctx context.Context, name string) error {
	return w.eventually(ctx, "Cluster finalizer", func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		for _, f := range c.Finalizers {
			if f == clusterv1.ClusterFinalizer {
				return nil
			}
		}
		return fmt.Errorf("finalizers %v", c.Finalizers)
	})
}

func (w *world) machineSetOwnedByCluster(ctx context.Context, set, name string) error {
	return w.ownedByCluster(ctx, &clusterv1.MachineSet{}, set, name)
}

func (w *world) deploymentOwnedByCluster(ctx context.Context, md, name string) error {
	return w.ownedByCluster(ctx, &clusterv1.MachineDeployment{}, md, name)
}

// ownedByCluster waits until obj carries the Cluster's name label and the
// Cluster as a plain owner (not its controller).
func (w *world) ownedByCluster(ctx context.Context, obj client.Object, objName, name string) error {
	kind := fmt.Sprintf("%T", obj)
	return w.eventually(ctx, kind+" owned by its Cluster", func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		if err := w.h.Client.Get(ctx, w.key(objName), obj); err != nil {
			return err
		}
		if obj.GetLabels()[clusterv1.ClusterNameLabel] != name {
			return fmt.Errorf("labels %v", obj.GetLabels())
		}
		for _, ref := range obj.GetOwnerReferences() {
			if ref.UID == c.UID && ref.Kind == "Cluster" {
				if ref.Controller != nil && *ref.Controller {
					return fmt.Errorf("the Cluster is the controller of %s, want a plain owner: %+v", objName, ref)
				}
				return nil
			}
		}
		return fmt.Errorf("owner references %+v", obj.GetOwnerReferences())
	})
}

// deleteClusterRecorded deletes the Cluster after noting its Machines (and
// which are control-plane ones) and what each of its MachineDeployments
// holds, for the ordering and leftovers checks.
func (w *world) deleteClusterRecorded(ctx context.Context, name string) error {
	list := &clusterv1.MachineList{}
	sets := &clusterv1.MachineSetList{}
	for _, l := range []client.ObjectList{list, sets} {
		if err := w.h.Client.List(ctx, l, client.InNamespace(w.ns)); err != nil {
			return err
		}
	}
	w.teardown = map[string]bool{}
	w.teardownOf = map[string][]client.ObjectKey{}
	setOf := map[string]string{}
	for _, ms := range sets.Items {
		if md := ms.Labels[clusterv1.DeploymentNameLabel]; md != "" && ms.Spec.ClusterName == name {
			setOf[ms.Name] = md
			w.teardownOf[md] = append(w.teardownOf[md], w.key(ms.Name))
		}
	}
	for _, m := range list.Items {
		if m.Spec.ClusterName == name {
			_, cp := m.Labels[clusterv1.ControlPlaneLabel]
			if ref := metav1.GetControllerOf(&m); cp && ref != nil && ref.Kind == "SimControlPlane" {
				continue // it goes with the control plane object
			}
			w.teardown[m.Name] = cp
			if ref := metav1.GetControllerOf(&m); ref != nil && ref.Kind == "MachineSet" && setOf[ref.Name] != "" {
				md := setOf[ref.Name]
				w.teardownOf[md] = append(w.teardownOf[md], w.key(m.Name))
			}
		}
	}
	return w.deleteCluster(ctx, name)
}

// deploymentGoneBeforeCluster reads the traces: the Cluster waited on the
// MachineDeployment saying what it waits on (K09's Deleting message), and the deployment, its MachineSets and
// its Machines completed their deletion before the Cluster's finalizer went
// (K11).
func (w *world) deploymentGoneBeforeCluster(ctx context.Context, md, name, said string) error {
	return w.eventually(ctx, "MachineDeployment "+md+" gone before the Cluster", func(context.Context) error {
		var waited bool
		var clusterDone time.Time
		for _, tr := range w.h.Traces(w.key(name)) {
			if tr.Set != "cluster" {
				continue
			}
			if tr.Row == "K09" && strings.Contains(tr.Note, said) {
				waited = true
			}
			if tr.Row == "K11" && clusterDone.IsZero() {
				clusterDone = tr.Time
			}
		}
		if !waited || clusterDone.IsZero() {
			return fmt.Errorf("Cluster %s: waited on %s saying %q (K09) %v, finalizer removed (K11) at %v", name, md, said, waited, clusterDone)
		}
		parts := append([]client.ObjectKey{w.key(md)}, w.teardownOf[md]...)
		if len(parts) < 3 {
			return fmt.Errorf("MachineDeployment %s held %v when the Cluster was deleted, want its MachineSet and Machines", md, parts[1:])
		}
		for _, key := range parts {
			var done time.Time
			for _, tr := range w.h.Traces(key) {
				if (tr.Set == "machine" && tr.To == "DeletionCompleted") || (tr.Set != "machine" && tr.To == "Deleted") {
					done = tr.Time
					break
				}
			}
			if done.IsZero() || done.After(clusterDone) {
				return fmt.Errorf("%s: deletion completed at %v, the Cluster's finalizer removed at %s", key.Name, done, clusterDone.Format(time.RFC3339Nano))
			}
		}
		return nil
	})
}

func (w *world) removeClusterFinalizer(ctx context.Context, finalizer, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		var keep []string
		for _, f := range c.Finalizers {
			if f != finalizer {
				keep = append(keep, f)
			}
		}
		c.Finalizers = keep
		return w.h.Client.Update(ctx, c)
	})
}

func (w *world) clusterGone(ctx context.Context, name string) error {
	return w.eventually(ctx, "Cluster "+name+" gone", func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		var cond string
		for _, x := range c.Status.Conditions {
			if x.Type == clusterv1.DeletingCondition {
				cond = x.Reason + ": " + x.Message
			}
		}
		return fmt.Errorf("Cluster %s still exists (state %s; Deleting %s)", name, c.Status.State, cond)
	})
}

// workersBeforeControlPlane reads the Machines' traces: the last worker's
// deletion completed before the first control-plane Machine entered its
// deletion.
func (w *world) workersBeforeControlPlane(ctx context.Context) error {
	return w.eventually(ctx, "workers gone before the control plane", func(context.Context) error {
		var lastWorker, firstCP time.Time
		var lastName, firstName string
		for name, cp := range w.teardown {
			var done, started time.Time
			for _, tr := range w.h.Traces(w.key(name)) {
				if tr.Set != "machine" {
					continue
				}
				if tr.To == "DeletionCompleted" && done.IsZero() {
					done = tr.Time
				}
				if tr.To == "Deleting" && started.IsZero() {
					started = tr.Time
				}
			}
			if done.IsZero() || started.IsZero() {
				return fmt.Errorf("Machine %s: deletion started %v, completed %v", name, started, done)
			}
			if cp && (firstCP.IsZero() || started.Before(firstCP)) {
				firstCP, firstName = started, name
			}
			if !cp && done.After(lastWorker) {
				lastWorker, lastName = done, name
			}
		}
		if firstCP.IsZero() || lastWorker.IsZero() {
			return fmt.Errorf("want workers and control-plane Machines, have %v", w.teardown)
		}
		if firstCP.Before(lastWorker) {
			return fmt.Errorf("control-plane Machine %s entered its deletion at %s, before worker %s completed at %s",
				firstName, firstCP.Format(time.RFC3339Nano), lastName, lastWorker.Format(time.RFC3339Nano))
		}
		return nil
	})
}

// nothingLeft: no Machine, MachineSet, MachineDeployment, provider object (the control plane object included) or Secret of the
// scenario (but the kubeconfig Secret) is left, and no Node of its Machines
// in the workload cluster.
func (w *world) nothingLeft(ctx context.Context, name string) error {
	return w.eventually(ctx, "nothing of "+name+" left", func(ctx context.Context) error {
		var left []string
		ms := &clusterv1.MachineList{}
		sets := &clusterv1.MachineSetList{}
		mds := &clusterv1.MachineDeploymentList{}
		sims := &simv1.SimMachineList{}
		boots := &simv1.SimBootstrapConfigList{}
		cps := &simv1.SimControlPlaneList{}
		secrets := &corev1.SecretList{}
		for _, l := range []client.ObjectList{ms, sets, mds, sims, boots, cps, secrets} {
			if err := w.h.Client.List(ctx, l, client.InNamespace(w.ns)); err != nil {
				return err
			}
		}
		for _, m := range ms.Items {
			left = append(left, "Machine "+m.Name)
		}
		for _, s := range sets.Items {
			left = append(left, "MachineSet "+s.Name)
		}
		for _, d := range mds.Items {
			left = append(left, "MachineDeployment "+d.Name)
		}
		for _, s := range sims.Items {
			left = append(left, "SimMachine "+s.Name)
		}
		for _, b := range boots.Items {
			left = append(left, "SimBootstrapConfig "+b.Name)
		}
		for _, c := range cps.Items {
			left = append(left, "SimControlPlane "+c.Name)
		}
		for _, s := range secrets.Items {
			if s.Name != remote.SecretName(name) {
				left = append(left, "Secret "+s.Name)
			}
		}
		nodes := &corev1.NodeList{}
		if err := w.nodes.List(ctx, nodes); err != nil {
			return err
		}
		for _, n := range nodes.Items {
			if strings.HasPrefix(n.Name, w.ns+"-") {
				left = append(left, "Node "+n.Name)
			}
		}
		if len(left) > 0 {
			sort.Strings(left)
			return fmt.Errorf("left: %s", strings.Join(left, ", "))
		}
		return nil
	})
}

func (w *world) explainClusterSays(ctx context.Context, name, text string) error {
	set, err := actions.Load(clusteractions.Name, "")
	if err != nil {
		return err
	}
	return w.eventually(ctx, "krtt explain cluster says "+text, func(ctx context.Context) error {
		rep, err := clusteractions.Explain(ctx, w.h.Client, set, w.key(name), time.Now())
		if err != nil {
			return err
		}
		var out bytes.Buffer
		rep.Text(&out)
		if !strings.Contains(out.String(), "Waiting on: Teardown") || !strings.Contains(out.String(), text) {
			return fmt.Errorf("krtt explain cluster %s:\n%s", name, out.String())
		}
		return nil
	})
}

func (w *world) machineNotDeleting(ctx context.Context, name string) error {
	m, err := w.machine(ctx, name)
	if err != nil {
		return err
	}
	if !m.DeletionTimestamp.IsZero() {
		return fmt.Errorf("Machine %s is being deleted since %s", name, m.DeletionTimestamp)
	}
	return nil
}

// rowNeverFired is checked after a step that waited for the object to be
// decided on in the situation (so the row had its chance).
func (w *world) rowNeverFired(_ context.Context, row, name string) error {
	for _, tr := range w.h.Traces(w.key(name)) {
		if tr.Row == row {
			return fmt.Errorf("row %s fired for %s: %s %s", row, name, tr.Message, tr.Note)
		}
	}
	return nil
}

func (w *world) pauseCluster(ctx context.Context, name, how string) error {
	c, err := w.cluster1(ctx, name)
	if err != nil {
		return err
	}
	before := c.DeepCopy()
	c.Spec.Paused = how == "paused"
	return w.h.Client.Patch(ctx, c, client.MergeFrom(before))
}

// clusterHoldsWhilePaused waits until the Cluster was decided on after its
// deletion (the pause row fired again once the deletionTimestamp was set),
// then checks that the decision held it: the Cluster is there with its
// finalizer and none of its Machines is being deleted.
func (w *world) clusterHoldsWhilePaused(ctx context.Context, name string) error {
	c, err := w.cluster1(ctx, name)
	if err != nil {
		return err
	}
	if c.DeletionTimestamp.IsZero() {
		return fmt.Errorf("Cluster %s is not being deleted", name)
	}
	deleted := c.DeletionTimestamp.Time
	err = w.eventually(ctx, "row K16 decided on the deleted Cluster", func(context.Context) error {
		for _, tr := range w.h.Traces(w.key(name)) {
			if tr.Row == "K16" && !tr.Time.Before(deleted) {
				return nil
			}
		}
		return fmt.Errorf("no K16 since the deletion at %s; rows fired so far: %s", deleted, strings.Join(w.cov.firedIn(w.ns), ", "))
	})
	if err != nil {
		return err
	}
	if err := w.clusterHasFinalizer(ctx, name); err != nil {
		return err
	}
	list := &clusterv1.MachineList{}
	if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
		return err
	}
	for _, m := range list.Items {
		if m.Spec.ClusterName == name && !m.DeletionTimestamp.IsZero() {
			return fmt.Errorf("Machine %s of the paused Cluster is being deleted", m.Name)
		}
	}
	return nil
}
