package features

import (
	"context"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1 "github.com/krtt-dev/krtt/api/sim/v1alpha1"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerOwnershipSteps: provider objects that belong to someone else, a
// provider that changes its story, and a status written by other tables.
func registerOwnershipSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a Machine "([^"]*)" whose (bootstrap|infrastructure) object is controlled by another owner$`, w.aMachineWithForeignObject)
	sc.Step(`^the infrastructure of "([^"]*)" reports the providerID "([^"]*)"$`, w.infraReportsProviderID)
	sc.Step(`^the status of "([^"]*)" names the state "([^"]*)"$`, w.statusNamesState)
}

// aMachineWithForeignObject creates the Machine's objects with the bootstrap
// or infrastructure object already controlled by another owner (a
// ConfigMap stands in for, say, a MachineSet).
func (w *world) aMachineWithForeignObject(ctx context.Context, name, which string) error {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name + "-owner"}}
	if err := w.h.Client.Create(ctx, owner); err != nil {
		return err
	}
	if _, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name); err != nil {
		return err
	}
	var obj client.Object = &simv1.SimBootstrapConfig{}
	if which == "infrastructure" {
		obj = &simv1.SimMachine{}
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, obj); err != nil {
			return err
		}
		obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name,
			UID: owner.UID, Controller: ptr.To(true)}})
		return w.h.Client.Update(ctx, obj)
	})
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
