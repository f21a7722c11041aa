package features

import (
	"context"
	"strings"

	"github.com/cucumber/godog"
	eventsv1 "k8s.io/api/events/v1"
)

// Steps for what a forced deletion tells. A forced row moves on to the
// pre-terminate hooks in the same pass that deleted the Pods, and the next
// reconcile replaces its Deleting reason at once: the reason that says why
// the deletion is forced lasts too briefly to be polled on the Machine, so
// it is read from the Event of that transition, which carries the row and
// the reason of its Deleting condition.
func registerForceSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^an Event of the Machine "([^"]*)" tells row "([^"]*)" with reason "([^"]*)"$`, w.eventTellsRow)
	sc.Step(`^an Event of the Machine "([^"]*)" tells row "([^"]*)" with reason "([^"]*)" and note containing "([^"]*)"$`, w.eventTellsRowSaying)
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

func (w *world) eventTellsRowSaying(ctx context.Context, name, row, reason, note string) error {
	return w.eventOf(ctx, "Event of row "+row+" with reason "+reason+" saying "+note, "Machine", name,
		func(e eventsv1.Event) bool {
			return e.Action == row && e.Reason == reason && strings.Contains(e.Note, note)
		},
		func(e eventsv1.Event) string { return e.Action + "/" + e.Reason + ": " + e.Note })
}
