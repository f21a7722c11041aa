package controllertest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
)

// machineEventsFor lists the events.k8s.io/v1 Events about a Machine.
func machineEventsFor(ctx context.Context, ns, name string) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := h.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Machine" && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out, nil
}

// leftBy matches the rows of an Event's note that start with D05.
var leftBy = regexp.MustCompile(`\(rows? D05[,)]`)

func countTraces(key types.NamespacedName, table, row string) int {
	n := 0
	for _, tr := range h.Traces(key) {
		if tr.Table == table && tr.Row == row {
			n++
		}
	}
	return n
}

func transitionsTotal(t *testing.T, table, row, outcome string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	harness.Must(t, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != "krtt_transitions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["table"] == table && labels["row"] == row && labels["outcome"] == outcome {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// TestEventsOnDrainBlockedByPDB: Events mark state changes only. Entering
// the drain records one naming the table and row; the drain blocked by a
// PodDisruptionBudget records none while it waits (the Deleting condition
// says why); once the budget allows the eviction, an Event for the next step
// follows, and the row's firings are counted in krtt_transitions_total.
func TestEventsOnDrainBlockedByPDB(t *testing.T) {
	ns := setup(t, "events-pdb")
	ctx := context.Background()
	key := types.NamespacedName{Namespace: ns, Name: "m1"}
	node := running(t, ns, "m1")
	_, err := h.RunningPod(ctx, ns, "db", node.Name, map[string]string{"app": "db"})
	harness.Must(t, err)
	harness.Must(t, h.Client.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrIntStr(1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}))
	setPDB(t, ns, "db", 0)

	harness.Must(t, h.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}))
	expectReason(t, ns, "m1", clusterv1.DeletingDrainingNodeReason, "PodDisruptionBudget")

	// Entering the drain is recorded by an Event named after the state,
	// its row in the action; the blocked wait itself is told by the
	// Deleting condition above.
	eventually(t, "Event for the step into DrainingNode", func(ctx context.Context) error {
		events, err := machineEventsFor(ctx, ns, "m1")
		if err != nil {
			return err
		}
		for _, e := range events {
			if e.Reason == "DrainingNode" && e.Type == "Normal" && strings.Contains(e.Note, "→ DrainingNode (") {
				return nil
			}
		}
		return fmt.Errorf("no Event for the step into DrainingNode among %d Events", len(events))
	})

	// The blocked drain wakes itself (D05 requeues after 20s); each such
	// reconcile fires D05 again and waits on the same budget, which must
	// not record Events.
	before := countTraces(key, "machine-deletion", "D05")
	eventually(t, "D05 fired again by its own requeue", func(ctx context.Context) error {
		if n := countTraces(key, "machine-deletion", "D05"); n <= before {
			return fmt.Errorf("D05 has not fired again since the drain was blocked")
		}
		return nil
	})
	if got := transitionsTotal(t, "machine-deletion", "D05", "InProgress"); got < 1 {
		t.Errorf("krtt_transitions_total{table=machine-deletion,row=D05,outcome=InProgress} = %v, want > 0", got)
	}

	// Release the budget: the drain finishes and the next step is recorded.
	setPDB(t, ns, "db", 1)
	// Neither the budget nor the Pods wake the Machine; its next requeue
	// (at most 20s away) finds the drain done.
	var enter, leave *eventsv1.Event
	eventually(t, "Event for the step after the drain", func(ctx context.Context) error {
		if _, err := h.FinishTerminatingPods(ctx, node.Name); err != nil {
			return err
		}
		events, err := machineEventsFor(ctx, ns, "m1")
		if err != nil {
			return err
		}
		enter, leave = nil, nil
		for i, e := range events {
			switch {
			case e.Reason == "DrainingNode" && strings.Contains(e.Note, "→ DrainingNode ("):
				enter = &events[i]
			case strings.HasPrefix(e.Note, "DrainingNode → ") && leftBy.MatchString(e.Note) && e.Reason != "DrainingNode":
				// The drain's last pass wrote nothing, so the same
				// reconcile may go on (run to completion): the Event is
				// the path's, named after the state it ended in, D05
				// first among its rows.
				leave = &events[i]
			}
		}
		if enter != nil && leave != nil {
			return nil
		}
		var notes []string
		for _, e := range events {
			notes = append(notes, e.Reason+": "+e.Note)
		}
		return fmt.Errorf("no Event naming row D05 into WaitingForVolumeDetach among:\n%s", strings.Join(notes, "\n"))
	})
	// The blocked wait recorded no Event: none was emitted between the two
	// known ones. Events are written asynchronously (a goroutine each), so
	// an Event of the wait could land after any check made during the
	// wait, and one emitted before the drain could land during it; their
	// emission times (eventTime, and the series' last time for a repeat)
	// order them instead. Every reconcile of the wait ran before the one
	// that left the drain (a Machine is reconciled one at a time), so its
	// Event was handed to the writer seconds before the leaving Event,
	// which has landed.
	events, err := machineEventsFor(ctx, ns, "m1")
	harness.Must(t, err)
	var during []string
	for _, e := range events {
		emitted := []time.Time{e.EventTime.Time}
		if e.Series != nil {
			emitted = append(emitted, e.Series.LastObservedTime.Time)
		}
		for _, at := range emitted {
			if at.After(enter.EventTime.Time) && at.Before(leave.EventTime.Time) {
				during = append(during, e.Reason+": "+e.Note)
				break
			}
		}
	}
	if len(during) > 0 {
		t.Errorf("the blocked drain recorded %d Events while waiting, want none:\n%s", len(during), strings.Join(during, "\n"))
	}
	if got := transitionsTotal(t, "machine-deletion", "D05", "Done"); got < 1 {
		t.Errorf("krtt_transitions_total{table=machine-deletion,row=D05,outcome=Done} = %v, want > 0", got)
	}
}
