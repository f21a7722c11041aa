package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerUnreadableKindSteps: many Machines on a provider kind whose
// informer cannot sync (unreadable_kind.feature).
func registerUnreadableKindSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^(\d+) Machines "([^"]*)" whose infrastructure API fails to answer$`, w.machinesWithFailingInfrastructureAPI)
	sc.Step(`^the Machines "([^"]*)" each report in their last transition "([^"]*)"$`, w.machinesReport)
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
	return w.eventually(ctx, fmt.Sprintf("the Machines %q report %q", prefix, text), func(ctx context.Context) error {
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
			if lt := m.Status.LastTransition; lt == nil || !strings.Contains(lt.Message, text) {
				return fmt.Errorf("%s: %s", m.Name, describe(m))
			}
		}
		if n == 0 {
			return fmt.Errorf("no Machine named %s-*", prefix)
		}
		return nil
	})
}
