package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// Steps for everyday mistakes the API server cannot refuse, since they are
// about other objects: MachineSets whose selectors overlap, and a Cluster
// naming a control plane object that does not exist. Each is told by a
// condition and a Warning Event, and clears once mended.
func registerMistakeSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? selecting the Machines of "([^"]*)" and its own label "([^"]*)"$`, w.anOverlappingMachineSet)
	sc.Step(`^the MachineSet "([^"]*)" selects only its own Machines$`, w.machineSetSelectsItsOwn)
	sc.Step(`^a Cluster "([^"]*)" whose controlPlaneRef names the SimControlPlane "([^"]*)" that does not exist$`, w.aClusterWithMissingControlPlane)
	sc.Step(`^the SimControlPlane "([^"]*)" is created$`, w.createSimControlPlane)
	sc.Step(`^the controlPlaneRef of the Cluster "([^"]*)" is removed$`, w.removeControlPlaneRef)
	sc.Step(`^the control plane provider reports the SimControlPlane "([^"]*)" initialized$`, w.controlPlaneInitialized)
	sc.Step(`^an? (Warning|Normal) Event of the (Machine|MachineSet|MachineDeployment|Cluster) "([^"]*)" with reason "([^"]*)" says "([^"]*)"$`, w.eventSays)
	sc.Step(`^a Normal Event of the (Machine|MachineSet|MachineDeployment|Cluster) "([^"]*)" with reason "([^"]*)"$`, w.normalEventOf)
	sc.Step(`^the (Machine|MachineSet|MachineDeployment) "([^"]*)" has (\d+) Events? with reason "([^"]*)"$`, w.eventCount)
	sc.Step(`^the (Machine|MachineSet|MachineDeployment|Cluster) "([^"]*)" told only the Events "([^"]*)"$`, w.toldOnly)
	sc.Step(`^a Normal Event of the Machine "([^"]*)" with reason "([^"]*)" names its Node$`, w.eventNamesNode)
	sc.Step(`^the providers bring the Machines of "([^"]*)" that are not Running to Running$`, w.provideNew)
	sc.Step(`^no Warning Event was recorded in the scenario$`, w.noWarningEvent)
	sc.Step(`^the operator logged no error about the scenario's objects$`, w.noErrorLogged)
}

// anOverlappingMachineSet creates a set whose selector is the other set's
// (pool=<other>) plus a label of its own: the other set's selector matches
// every Machine it creates.
func (w *world) anOverlappingMachineSet(ctx context.Context, name string, replicas int, other, label string) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) {
		labels := map[string]string{"pool": other, label: "yes"}
		ms.Spec.Selector.MatchLabels = labels
		ms.Spec.Template.ObjectMeta.Labels = labels
	})
}

// machineSetSelectsItsOwn gives the set the selector and template labels
// pool=<name>, as a user mending the overlap would.
func (w *world) machineSetSelectsItsOwn(ctx context.Context, name string) error {
	return w.updateMachineSet(ctx, name, func(ms *clusterv1.MachineSet) {
		labels := map[string]string{"pool": name}
		ms.Spec.Selector.MatchLabels = labels
		ms.Spec.Template.ObjectMeta.Labels = labels
	})
}

func (w *world) aClusterWithMissingControlPlane(ctx context.Context, name, cp string) error {
	w.cluster = name
	return w.h.Client.Create(ctx, harness.Label(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: &clusterv1.ObjectReference{
			APIGroup: simv1.GroupVersion.Group, Kind: "SimControlPlane", Name: cp}}}))
}

func (w *world) createSimControlPlane(ctx context.Context, name string) error {
	return w.h.Client.Create(ctx, harness.Label(&simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}))
}

// controlPlaneInitialized plays the control plane provider, which reports
// by the contract that the control plane came up.
func (w *world) controlPlaneInitialized(ctx context.Context, name string) error {
	cp := &simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return w.updateStatus(ctx, cp, func() { cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true) })
}

func (w *world) removeControlPlaneRef(ctx context.Context, name string) error {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return w.updateSpec(ctx, c, func() { c.Spec.ControlPlaneRef = nil })
}

// eventSays: the object has an Event of the type and reason whose note
// contains text.
func (w *world) eventSays(ctx context.Context, typ, kind, name, reason, text string) error {
	return w.eventOf(ctx, fmt.Sprintf("%s Event of %s %s with reason %s", typ, kind, name, reason), kind, name,
		func(e eventsv1.Event) bool {
			return e.Type == typ && e.Reason == reason && strings.Contains(e.Note, text)
		},
		func(e eventsv1.Event) string { return e.Type + " " + e.Reason + ": " + e.Note })
}

// eventCount: the object's Events with the reason tell it n times (a
// series counts each time).
func (w *world) eventCount(ctx context.Context, kind, name string, n int, reason string) error {
	return w.eventually(ctx, fmt.Sprintf("%d Events of %s %s with reason %s", n, kind, name, reason), func(ctx context.Context) error {
		events, err := w.eventsAbout(ctx, kind, name)
		if err != nil {
			return err
		}
		got := 0
		var notes []string
		for _, e := range events {
			if e.Reason != reason {
				continue
			}
			times := 1
			if e.Series != nil {
				times = int(e.Series.Count)
			}
			got += times
			notes = append(notes, fmt.Sprintf("%s (%d)", e.Note, times))
		}
		if got != n {
			return fmt.Errorf("%d Events, want %d:\n%s", got, n, strings.Join(notes, "\n"))
		}
		return nil
	})
}

// toldOnly: once the object has an Event with each of the reasons (comma
// separated), it has none with another reason. The recorder sends an
// object's Events in the order they were told, so one told before the
// last awaited is there by then.
func (w *world) toldOnly(ctx context.Context, kind, name, reasons string) error {
	want := map[string]bool{}
	for _, r := range strings.Split(reasons, ",") {
		want[strings.TrimSpace(r)] = true
	}
	return w.eventually(ctx, fmt.Sprintf("the Events %s of %s %s and no other", reasons, kind, name), func(ctx context.Context) error {
		events, err := w.eventsAbout(ctx, kind, name)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		var all []string
		for _, e := range events {
			seen[e.Reason] = true
			all = append(all, e.Type+" "+e.Reason+": "+e.Note)
		}
		for r := range want {
			if !seen[r] {
				return fmt.Errorf("no Event with reason %s yet; the Events:\n%s", r, strings.Join(all, "\n"))
			}
		}
		if len(seen) != len(want) {
			return fmt.Errorf("Events with other reasons than %s:\n%s", reasons, strings.Join(all, "\n"))
		}
		return nil
	})
}

// eventNamesNode: the Machine's Event with the reason is the name of its
// Node, as Cluster API's SuccessfulSetNodeRef.
func (w *world) eventNamesNode(ctx context.Context, name, reason string) error {
	node := w.nodeName(name)
	return w.eventOf(ctx, fmt.Sprintf("Normal Event of Machine %s with reason %s naming Node %s", name, reason, node), "Machine", name,
		func(e eventsv1.Event) bool { return e.Type == "Normal" && e.Reason == reason && e.Note == node },
		func(e eventsv1.Event) string { return e.Type + " " + e.Reason + ": " + e.Note })
}

// normalEventOf: the object has a Normal Event with the reason (a Cluster
// names the phase it entered, as Cluster API's).
func (w *world) normalEventOf(ctx context.Context, kind, name, reason string) error {
	return w.eventOf(ctx, fmt.Sprintf("Normal Event of %s %s with reason %s", kind, name, reason), kind, name,
		func(e eventsv1.Event) bool { return e.Type == "Normal" && e.Reason == reason },
		func(e eventsv1.Event) string { return e.Type + " " + e.Reason + ": " + e.Note })
}

// provideNew plays the providers for the set's live Machines that are not
// Running yet (those a scale-up just created).
func (w *world) provideNew(ctx context.Context, set string) error {
	ms, err := w.liveMachines(ctx, set)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Status.Phase != clusterv1.MachinePhaseRunning {
			if err := w.provideOne(ctx, m.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// noWarningEvent: nothing in the scenario's namespace needed a person.
func (w *world) noWarningEvent(ctx context.Context) error {
	list := &eventsv1.EventList{}
	if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
		return err
	}
	var warnings []string
	for _, e := range list.Items {
		if e.Type == "Warning" {
			warnings = append(warnings, e.Regarding.Kind+" "+e.Regarding.Name+" "+e.Reason+": "+e.Note)
		}
	}
	if len(warnings) > 0 {
		return fmt.Errorf("Warning Events:\n%s", strings.Join(warnings, "\n"))
	}
	return nil
}

// noErrorLogged: the operator logged no error about the scenario's
// objects (an ERROR line of `make run`).
func (w *world) noErrorLogged(context.Context) error {
	if errs := w.h.Errors.About(w.ns); len(errs) > 0 {
		lines := make([]string, 0, len(errs))
		for _, e := range errs {
			lines = append(lines, e.String())
		}
		return fmt.Errorf("the operator logged errors:\n%s", strings.Join(lines, "\n"))
	}
	return nil
}
