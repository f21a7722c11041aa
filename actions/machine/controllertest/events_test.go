package controllertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
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

// TestEventsOnDrainBlockedByPDB: Events mark what a person looks for, with
// Cluster API's reasons. The deletion's steps are quiet in the tables, so
// entering the drain records none, nor does the drain blocked by a
// PodDisruptionBudget while it waits (the Deleting condition says why);
// the drain's end is told once, SuccessfulDrainNode, and nothing follows
// until the Machine is gone. The rows' firings are counted in
// krtt_transitions_total.
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

	// The Machine found its Node (SuccessfulSetNodeRef) and has told
	// nothing since: the step into the drain is quiet.
	onlyEvents(t, ns, "m1", "SuccessfulSetNodeRef")

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
	// The reconcile whose drain is done runs the deletion to its end, the
	// finalizer's removal included; its closing status patch may then meet
	// the Machine already gone, and the metric counts the row as Unwritten
	// (it acted, its result was not written). Its trace still says Done.
	done := false
	for _, tr := range h.Traces(key) {
		done = done || tr.Table == "machine-deletion" && tr.Row == "D05" && tr.Outcome == engine.Done
	}
	if !done {
		t.Errorf("no trace of D05 with outcome Done")
	}
	if got := transitionsTotal(t, "machine-deletion", "D05", "Done") + transitionsTotal(t, "machine-deletion", "D05", "Unwritten"); got < 1 {
		t.Errorf("krtt_transitions_total{table=machine-deletion,row=D05,outcome=Done|Unwritten} = %v, want > 0", got)
	}
	// The blocked wait and the quiet steps after it told nothing; the
	// drain's end told SuccessfulDrainNode once.
	onlyEvents(t, ns, "m1", "SuccessfulSetNodeRef", "SuccessfulDrainNode")
	events, err := machineEventsFor(ctx, ns, "m1")
	harness.Must(t, err)
	for _, e := range events {
		if e.Series != nil {
			t.Errorf("Event %s told %d times, want once: %s", e.Reason, e.Series.Count, e.Note)
		}
		if want := fmt.Sprintf("success draining Machine's node %q", node.Name); e.Reason == "SuccessfulDrainNode" && e.Note != want {
			t.Errorf("SuccessfulDrainNode says %q, want %q", e.Note, want)
		}
	}
}

// onlyEvents waits until the Machine has an Event with each reason, then
// fails if it has one with another. The sink writes an object's Events in
// the order they were recorded, so one recorded before the last awaited
// is there by then.
func onlyEvents(t *testing.T, ns, name string, reasons ...string) {
	t.Helper()
	var others []string
	eventually(t, "Events "+strings.Join(reasons, ", "), func(ctx context.Context) error {
		events, err := machineEventsFor(ctx, ns, name)
		if err != nil {
			return err
		}
		others = others[:0]
		seen := map[string]bool{}
		var all []string
		for _, e := range events {
			seen[e.Reason] = true
			all = append(all, e.Type+" "+e.Reason+": "+e.Note)
			if !slices.Contains(reasons, e.Reason) {
				others = append(others, e.Type+" "+e.Reason+": "+e.Note)
			}
		}
		for _, r := range reasons {
			if !seen[r] {
				return fmt.Errorf("no Event %s among:\n%s", r, strings.Join(all, "\n"))
			}
		}
		return nil
	})
	if len(others) > 0 {
		t.Errorf("Events other than %s:\n%s", strings.Join(reasons, ", "), strings.Join(others, "\n"))
	}
}
