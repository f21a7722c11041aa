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
	return w.eventually(ctx, "Warning Event saying "+text, func(ctx context.Context) error {
		list := &eventsv1.EventList{}
		if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind != "Machine" || e.Regarding.Name != name {
				continue
			}
			if e.Type == "Warning" && strings.Contains(e.Note, text) {
				return nil
			}
			seen = append(seen, e.Type+" "+e.Reason+": "+e.Note)
		}
		return fmt.Errorf("Events of Machine %s:\n%s", name, strings.Join(seen, "\n"))
	})
}

func (w *world) eventTellsRow(ctx context.Context, name, row, reason string) error {
	return w.eventually(ctx, "Event of row "+row+" with reason "+reason, func(ctx context.Context) error {
		list := &eventsv1.EventList{}
		if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind != "Machine" || e.Regarding.Name != name {
				continue
			}
			if e.Action == row && e.Reason == reason {
				return nil
			}
			seen = append(seen, e.Action+"/"+e.Reason)
		}
		return fmt.Errorf("Events of Machine %s (row/reason): %v", name, seen)
	})
}
