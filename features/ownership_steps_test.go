package features

import (
	"context"
	"fmt"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// registerOwnershipSteps: provider objects that belong to someone else, a
// provider that changes its story, and a status written by other tables.
func registerOwnershipSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a Machine "([^"]*)" whose (bootstrap|infrastructure) object is controlled by another owner$`, w.aMachineWithForeignObject)
	sc.Step(`^the infrastructure of "([^"]*)" reports the providerID "([^"]*)"$`, w.infraReportsProviderID)
	sc.Step(`^the status of "([^"]*)" names the state "([^"]*)"$`, w.statusNamesState)
	sc.Step(`^the Machine "([^"]*)" is paused$`, w.pause)
	sc.Step(`^the infrastructure of "([^"]*)" reports the failure "([^"]*)" "([^"]*)"$`, w.infraReportsFailure)
	sc.Step(`^a Machine "([^"]*)" whose infrastructure object was created by a MachineSet$`, w.aMachineFromMachineSet)
	sc.Step(`^a Machine "([^"]*)" whose (bootstrap|infrastructure) object is controlled by the MachineSet "([^"]*)"$`, w.aMachineWithObjectOfAnotherSet)
	sc.Step(`^the infrastructure object of "([^"]*)" is controlled by the Machine$`, w.infraControlledByMachine)
	sc.Step(`^the (bootstrap|infrastructure) object of "([^"]*)" is owned by the Machine and labelled with the Cluster "([^"]*)"$`, w.externalOwnedAndLabelled)
	sc.Step(`^someone removes the (owner references|cluster-name label) of the (bootstrap|infrastructure) object of "([^"]*)"$`, w.externalLosesOwnership)
	sc.Step(`^the Machine "([^"]*)" is no longer paused$`, w.unpause)
	sc.Step(`^the infrastructure object of "([^"]*)" is being deleted$`, w.infraBeingDeleted)
	sc.Step(`^the infrastructure object of "([^"]*)" is released$`, w.infraReleased)
	sc.Step(`^the infrastructure provider holds the deletion of the infrastructure object of "([^"]*)"$`, w.infraHeld)
	sc.Step(`^the Node of "([^"]*)" becomes unreachable$`, w.nodeUnreachable)
}

// aMachineWithForeignObject creates the Machine's objects with the bootstrap
// or infrastructure object already controlled by another owner (a
// ConfigMap stands in for, say, a MachineSet).
func (w *world) aMachineWithForeignObject(ctx context.Context, name, which string) error {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name + "-owner"}}
	if err := w.h.Client.Create(ctx, owner); err != nil {
		return err
	}
	return w.machineWithControlledObject(ctx, name, which, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap",
		Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)})
}

// machineWithControlledObject creates the Machine's objects, gives the
// bootstrap or infrastructure one its other controller, then the Machine:
// the operator never sees that object without its controller, as when
// another controller created it.
func (w *world) machineWithControlledObject(ctx context.Context, name, which string, owner metav1.OwnerReference) error {
	var obj client.Object = &simv1.SimBootstrapConfig{}
	if which == "infrastructure" {
		obj = &simv1.SimMachine{}
	}
	var controlled error
	if _, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name, func(*clusterv1.Machine) {
		controlled = w.setController(ctx, obj, name, owner)
	}); err != nil {
		return err
	}
	return controlled
}

func (w *world) infraReportsProviderID(ctx context.Context, name, id string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sm := &simv1.SimMachine{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, sm); err != nil {
			return err
		}
		sm.Spec.ProviderID = ptr.To(id)
		return w.h.Client.Update(ctx, sm)
	})
}

// statusNamesState writes status.state as tables of another version would
// have left it.
func (w *world) statusNamesState(ctx context.Context, name, state string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &clusterv1.Machine{}
		if err := w.h.Client.Get(ctx, w.key(name), m); err != nil {
			return err
		}
		m.Status.State = state
		return w.h.Client.Status().Update(ctx, m)
	})
}

// pause waits until the operator has seen the pause (row N04), so that
// what the scenario does next happens to a paused Machine.
func (w *world) pause(ctx context.Context, name string) error {
	if err := w.addAnnotation(ctx, name, clusterv1.PausedAnnotation); err != nil {
		return err
	}
	return w.hasConditionWithStatus(ctx, name, clusterv1.PausedCondition, "True", "Paused")
}

func (w *world) unpause(ctx context.Context, name string) error {
	return w.removeAnnotation(ctx, clusterv1.PausedAnnotation, name)
}

func (w *world) infraBeingDeleted(ctx context.Context, name string) error {
	return w.deleteHeld(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}

// infraHeld plays a provider whose finalizer keeps the infrastructure
// object until it has released the machine behind it (infraReleased).
func (w *world) infraHeld(ctx context.Context, name string) error {
	return w.hold(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}

// infraReleased removes the hold finalizer, so the deletion completes.
func (w *world) infraReleased(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sm := &simv1.SimMachine{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, sm); err != nil {
			return err
		}
		var keep []string
		for _, f := range sm.Finalizers {
			if f != holdFinalizer {
				keep = append(keep, f)
			}
		}
		sm.Finalizers = keep
		return w.h.Client.Update(ctx, sm)
	})
}

// nodeUnreachable sets Ready=Unknown as the node lifecycle controller does
// when a kubelet stops reporting (envtest runs none). No kubelet finishes
// the Node's terminating Pods.
func (w *world) nodeUnreachable(ctx context.Context, machine string) error {
	delete(w.kubelets, w.nodeName(machine))
	return w.updateNode(ctx, machine, func(n *corev1.Node) {
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status = corev1.ConditionUnknown
				n.Status.Conditions[i].Reason = "NodeStatusUnknown"
				n.Status.Conditions[i].Message = "Kubelet stopped posting node status."
			}
		}
	}, true)
}

// aMachineFromMachineSet: the Machine belongs to a MachineSet, and its
// infrastructure object carries the controller reference of that set, which
// created it before the Machine existed.
func (w *world) aMachineFromMachineSet(ctx context.Context, name string) error {
	if _, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name); err != nil {
		return err
	}
	set := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet",
		Name: name + "-set", UID: types.UID(w.ns + "-" + name + "-set"), Controller: ptr.To(true)}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &clusterv1.Machine{}
		if err := w.h.Client.Get(ctx, w.key(name), m); err != nil {
			return err
		}
		m.OwnerReferences = []metav1.OwnerReference{set}
		return w.h.Client.Update(ctx, m)
	}); err != nil {
		return err
	}
	return w.setController(ctx, &simv1.SimMachine{}, name, set)
}

// aMachineWithObjectOfAnotherSet: a Machine written by hand that names a
// provider object another MachineSet created for one of its own Machines.
func (w *world) aMachineWithObjectOfAnotherSet(ctx context.Context, name, which, set string) error {
	return w.machineWithControlledObject(ctx, name, which, metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet",
		Name: set, UID: types.UID(w.ns + "-" + set), Controller: ptr.To(true)})
}

// setController makes owner the only owner of the provider object.
func (w *world) setController(ctx context.Context, obj client.Object, name string, owner metav1.OwnerReference) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, obj); err != nil {
			return err
		}
		obj.SetOwnerReferences([]metav1.OwnerReference{owner})
		return w.h.Client.Update(ctx, obj)
	})
}

func (w *world) infraControlledByMachine(ctx context.Context, name string) error {
	return w.eventually(ctx, "infrastructure controlled by the Machine", func(ctx context.Context) error {
		sm := &simv1.SimMachine{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, sm); err != nil {
			return err
		}
		owner := metav1.GetControllerOf(sm)
		if owner == nil || owner.Kind != "Machine" || owner.Name != name || len(sm.OwnerReferences) != 1 {
			return fmt.Errorf("owner references %+v", sm.OwnerReferences)
		}
		return nil
	})
}

// externalOwnedAndLabelled: the Machine is the object's controller and the
// object carries the cluster-name label (Cluster API
// ensureExternalOwnershipAndWatch).
func (w *world) externalOwnedAndLabelled(ctx context.Context, which, name, cluster string) error {
	return w.eventually(ctx, which+" object owned and labelled", func(ctx context.Context) error {
		var obj client.Object = &simv1.SimMachine{}
		if which == "bootstrap" {
			obj = &simv1.SimBootstrapConfig{}
		}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, obj); err != nil {
			return err
		}
		if owner := metav1.GetControllerOf(obj); owner == nil || owner.Kind != "Machine" || owner.Name != name {
			return fmt.Errorf("controller %+v, want Machine %s", owner, name)
		}
		if got := obj.GetLabels()[clusterv1.ClusterNameLabel]; got != cluster {
			return fmt.Errorf("cluster-name label %q, want %q", got, cluster)
		}
		return nil
	})
}

// externalLosesOwnership plays a user or a tool that strips what the Machine
// put on its provider object.
func (w *world) externalLosesOwnership(ctx context.Context, what, which, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var obj client.Object = &simv1.SimMachine{}
		if which == "bootstrap" {
			obj = &simv1.SimBootstrapConfig{}
		}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, obj); err != nil {
			return err
		}
		if what == "owner references" {
			obj.SetOwnerReferences(nil)
		} else {
			labels := obj.GetLabels()
			delete(labels, clusterv1.ClusterNameLabel)
			obj.SetLabels(labels)
		}
		return w.h.Client.Update(ctx, obj)
	})
}

// infraReportsFailure writes the v1beta1 contract's terminal failure fields,
// as a provider whose VM vanished does.
func (w *world) infraReportsFailure(ctx context.Context, name, reason, message string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sm := &simv1.SimMachine{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, sm); err != nil {
			return err
		}
		sm.Status.FailureReason = ptr.To(reason)
		sm.Status.FailureMessage = ptr.To(message)
		return w.h.Client.Status().Update(ctx, sm)
	})
}
