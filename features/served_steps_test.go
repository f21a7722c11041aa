package features

import (
	"context"
	"fmt"

	"github.com/cucumber/godog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// simMachineCRD is the CustomResourceDefinition of the infrastructure kind
// every scenario's Machines use.
const simMachineCRD = "simmachines.sim.krtt.dev"

// registerServedSteps: a provider kind that the API server stops serving for
// a while (its CRD being replaced, say), which only @serial scenarios may do.
func registerServedSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the API server stops serving the infrastructure kind of "([^"]*)"$`, w.stopServingInfrastructure)
	sc.Step(`^the API server serves the infrastructure kind of "([^"]*)" again$`, w.serveInfrastructure)
}

func (w *world) stopServingInfrastructure(ctx context.Context, _ string) error {
	w.undo = append(w.undo, func(ctx context.Context) error { return w.setSimMachinesServed(ctx, true) })
	return w.setSimMachinesServed(ctx, false)
}

func (w *world) serveInfrastructure(ctx context.Context, _ string) error {
	return w.setSimMachinesServed(ctx, true)
}

// setSimMachinesServed flips served on the CRD's version and waits until the
// API server answers for SimMachines accordingly. The objects stay in etcd.
func (w *world) setSimMachinesServed(ctx context.Context, served bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := w.h.Client.Get(ctx, client.ObjectKey{Name: simMachineCRD}, crd); err != nil {
			return err
		}
		versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if err != nil {
			return err
		}
		for _, v := range versions {
			if m, ok := v.(map[string]any); ok && m["name"] == simv1.GroupVersion.Version {
				m["served"] = served
			}
		}
		if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
			return err
		}
		return w.h.Client.Update(ctx, crd)
	})
	if err != nil {
		return fmt.Errorf("set served=%t on %s: %w", served, simMachineCRD, err)
	}
	return w.eventually(ctx, fmt.Sprintf("SimMachines served=%t", served), func(ctx context.Context) error {
		err := w.h.Client.List(ctx, &simv1.SimMachineList{}, client.InNamespace(w.ns))
		switch {
		case served && err == nil, !served && apierrors.IsNotFound(err):
			return nil
		case err == nil:
			return fmt.Errorf("SimMachines are still served")
		}
		return err
	})
}
