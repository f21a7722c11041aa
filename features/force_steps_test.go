package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Steps for what a forced deletion tells. A forced row moves on to the
// pre-terminate hooks in the same pass that deleted the Pods, and the next
// reconcile replaces its Deleting reason at once: the reason that says why
// the deletion is forced lasts too briefly to be polled on the Machine, so
// it is read from the Event of that transition, which carries the row and
// the reason of its Deleting condition.
func registerForceSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^an Event of the Machine "([^"]*)" tells row "([^"]*)" with reason "([^"]*)"$`, w.eventTellsRow)
	sc.Step(`^a Warning Event of the Machine "([^"]*)" says "([^"]*)"$`, w.warningEventSays)
}

// warningEventSays: the Machine has a Warning Event whose note contains
// text (an Event outlives the Machine it tells of).
func (w *world) warningEventSays(ctx context.Context, name, text string) error {
	return w.eventOf(ctx, "Warning Event saying "+text, "Machine", name,
		func(e eventsv1.Event) bool { return e.Type == "Warning" && strings.Contains(e.Note, text) },
		func(e eventsv1.Event) string { return e.Type + " " + e.Reason + ": " + e.Note })
}

func (w *world) eventTellsRow(ctx context.Context, name, row, reason string) error {
	return w.eventOf(ctx, "Event of row "+row+" with reason "+reason, "Machine", name,
		func(e eventsv1.Event) bool { return e.Action == row && e.Reason == reason },
		func(e eventsv1.Event) string { return e.Action + "/" + e.Reason })
}

// eventOf waits until an Event regarding the kind's object name is one
// match accepts; until then its error lists every Event of that object as
// describe words it.
func (w *world) eventOf(ctx context.Context, what, kind, name string, match func(eventsv1.Event) bool, describe func(eventsv1.Event) string) error {
	return w.eventually(ctx, what, func(ctx context.Context) error {
		list := &eventsv1.EventList{}
		if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind != kind || e.Regarding.Name != name {
				continue
			}
			if match(e) {
				return nil
			}
			seen = append(seen, describe(e))
		}
		return fmt.Errorf("Events of %s %s:\n%s", kind, name, strings.Join(seen, "\n"))
	})
}
