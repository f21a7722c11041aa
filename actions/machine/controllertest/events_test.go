package controllertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// TestEventsOnDrainBlockedByPDB: Events mark the state changes a person
// looks for. Entering the deletion records one, named after the state the
// path ended in (DrainingNode) with its rows in the note; the drain blocked
// by a PodDisruptionBudget records none while it waits (the Deleting
// condition says why), and the deletion steps after it are quiet in the
// tables, so none follows until the Machine is gone; the rows' firings are
// counted in krtt_transitions_total.
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
	expectReason(t, ns, "m1", clusterv1.DeletingDrainingNodeReason, "cannot evict pod as it would violate the pod's disruption budget")

	// Entering the drain is recorded by an Event named after the state,
	// its row in the action; the blocked wait itself is told by the
	// Deleting condition above.
	var enter *eventsv1.Event
	eventually(t, "Event for the step into DrainingNode", func(ctx context.Context) error {
		events, err := machineEventsFor(ctx, ns, "m1")
		if err != nil {
			return err
		}
		for i, e := range events {
			if e.Reason == "DrainingNode" && e.Type == "Normal" && strings.Contains(e.Note, "Running → DrainingNode (rows N07, ") {
				enter = &events[i]
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

	// Release the budget: the drain finishes and the quiet deletion steps
	// follow to the end.
	setPDB(t, ns, "db", 1)
	// Neither the budget nor the Pods wake the Machine; its next requeue
	// (at most 20s away) finds the drain done.
	eventually(t, "Machine gone after the drain", func(ctx context.Context) error {
		if _, err := h.FinishTerminatingPods(ctx, node.Name); err != nil {
			return err
		}
		_, err := h.Machine(ctx, ns, "m1")
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there")
	})
	if got := transitionsTotal(t, "machine-deletion", "D05", "Done"); got < 1 {
		t.Errorf("krtt_transitions_total{table=machine-deletion,row=D05,outcome=Done} = %v, want > 0", got)
	}
	// Neither the blocked wait nor the steps after it recorded an Event:
	// none was emitted after the one entering the drain (by eventTime, and
	// a repeat's last time). The wait's reconciles ran 20 s and more before
	// the Machine went, and the sink writes an object's Events in order
	// within milliseconds of their record.
	events, err := machineEventsFor(ctx, ns, "m1")
	harness.Must(t, err)
	var after []string
	for _, e := range events {
		emitted := []time.Time{e.EventTime.Time}
		if e.Series != nil {
			emitted = append(emitted, e.Series.LastObservedTime.Time)
		}
		for _, at := range emitted {
			if at.After(enter.EventTime.Time) {
				after = append(after, e.Reason+": "+e.Note)
				break
			}
		}
	}
	if len(after) > 0 {
		t.Errorf("the drain and the deletion steps after it recorded %d Events, want none:\n%s", len(after), strings.Join(after, "\n"))
	}
}
