package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerUnreadableKindSteps: many Machines on a provider kind whose
// informer cannot sync (unreadable_kind.feature).
func registerUnreadableKindSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^(\d+) Machines "([^"]*)" whose infrastructure API fails to answer$`, w.machinesWithFailingInfrastructureAPI)
	sc.Step(`^the Machines "([^"]*)" each report in their last transition "([^"]*)"$`, w.machinesReport)
	sc.Step(`^(\d+) Machines "([^"]*)" on a kind of the group "([^"]*)" whose conversion webhook is down$`, w.machinesOnBrokenGroup)
	sc.Step(`^the conversion of the group "([^"]*)" is fixed$`, w.fixConversion)
	sc.Step(`^the Machines "([^"]*)" each go past row "([^"]*)"$`, w.machinesGoPast)
}

// brokenCRDOf is brokenCRD in another group: a kind of its own that a
// scenario may fix without touching the others' BrokenMachines.
func brokenCRDOf(group string) *unstructured.Unstructured {
	crd := brokenCRD()
	crd.SetName("brokenmachines." + group)
	_ = unstructured.SetNestedField(crd.Object, group, "spec", "group")
	return crd
}

func (w *world) machinesOnBrokenGroup(ctx context.Context, n int, prefix, group string) error {
	// A CRD fixed by an earlier run on a shared control plane is broken again.
	if err := w.setConversion(ctx, group, brokenCRD().Object["spec"].(map[string]any)["conversion"]); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	for i := range n {
		if err := w.aMachineOnBrokenKind(ctx, unreadableName(prefix, i), brokenCRDOf(group)); err != nil {
			return err
		}
	}
	return nil
}

// fixConversion lets the API server convert between the group's versions
// itself (the provider's webhook is back, in effect): its kind lists again.
func (w *world) fixConversion(ctx context.Context, group string) error {
	return w.setConversion(ctx, group, map[string]any{"strategy": "None"})
}

func (w *world) setConversion(ctx context.Context, group string, conversion any) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := w.h.Client.Get(ctx, client.ObjectKey{Name: "brokenmachines." + group}, crd); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(crd.Object, runtime.DeepCopyJSONValue(conversion), "spec", "conversion"); err != nil {
			return err
		}
		return w.h.Client.Update(ctx, crd)
	})
}

// machinesGoPast: no Machine of the group has row as its last transition
// any more.
func (w *world) machinesGoPast(ctx context.Context, prefix, row string) error {
	return w.eachMachine(ctx, prefix, "go past row "+row, func(m *clusterv1.Machine) error {
		if lt := m.Status.LastTransition; lt == nil || lt.Row == row {
			return fmt.Errorf("%s: %s", m.Name, describe(m))
		}
		return nil
	})
}

// unreadableName names the i-th Machine of a group.
func unreadableName(prefix string, i int) string { return fmt.Sprintf("%s-%02d", prefix, i) }

func (w *world) machinesWithFailingInfrastructureAPI(ctx context.Context, n int, prefix string) error {
	for i := range n {
		if err := w.aMachineWithFailingInfrastructureAPI(ctx, unreadableName(prefix, i)); err != nil {
			return err
		}
	}
	return nil
}

// machinesReport: every Machine of the group shows text in
// status.lastTransition.message, where a user looks (kubectl, krtt explain).
func (w *world) machinesReport(ctx context.Context, prefix, text string) error {
	return w.eachMachine(ctx, prefix, "report "+text, func(m *clusterv1.Machine) error {
		if lt := m.Status.LastTransition; lt == nil || !strings.Contains(lt.Message, text) {
			return fmt.Errorf("%s: %s", m.Name, describe(m))
		}
		return nil
	})
}

// eachMachine polls until check passes for every Machine named prefix-*.
func (w *world) eachMachine(ctx context.Context, prefix, what string, check func(*clusterv1.Machine) error) error {
	return w.eventually(ctx, fmt.Sprintf("the Machines %q %s", prefix, what), func(ctx context.Context) error {
		list := &clusterv1.MachineList{}
		if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
			return err
		}
		n := 0
		for i := range list.Items {
			m := &list.Items[i]
			if !strings.HasPrefix(m.Name, prefix+"-") {
				continue
			}
			n++
			if err := check(m); err != nil {
				return err
			}
		}
		if n == 0 {
			return fmt.Errorf("no Machine named %s-*", prefix)
		}
		return nil
	})
}
