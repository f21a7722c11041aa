package reconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
)

func steps(trs ...engine.Trace) []*engine.Step {
	out := make([]*engine.Step, len(trs))
	for i, tr := range trs {
		out[i] = &engine.Step{Trace: tr}
	}
	return out
}

// eventOf records the Event of a path and returns it as the fake recorder
// writes it: "<type> <reason> <action> <note>".
func eventOf(t *testing.T, path []*engine.Step) string {
	t.Helper()
	rec := events.NewFakeRecorder(1)
	rec.Verbose = true
	r := &Reconciler[*unstructured.Unstructured, *door]{recorder: rec}
	r.event(newDoor(), path)
	e := <-rec.Events
	// Verbose appends the object; the test reads up to the note.
	return strings.SplitN(e, " {kind=", 2)[0]
}

// An Event names the state a path ended in, never a row id; the rows go
// into its action and note, and its words are those of the last row that
// has some.
func TestEventOfAPathNamesItsEndState(t *testing.T) {
	got := eventOf(t, steps(
		engine.Trace{Row: "N07", From: "Running", To: "Deletion"},
		engine.Trace{Row: "D01", From: "Deletion", To: "WaitingForPreDrainHook", Reason: "WaitingForPreDrainHook"},
		engine.Trace{Row: "D04", From: "WaitingForPreDrainHook", To: "DrainingNode", Action: "Cordon", Outcome: engine.Done,
			Reason: "DrainingNode", Note: "Draining the Node"}))
	want := "Normal DrainingNode D04 Running → DrainingNode (rows N07, D01, D04): Draining the Node"
	if got != want {
		t.Errorf("Event\n %q, want\n %q", got, want)
	}
	// A condition reason of an intermediate row (InspectionFailed while
	// the Node joins) is not the Event's reason: the state reached is.
	got = eventOf(t, steps(
		engine.Trace{Row: "N30", From: "Provisioned", To: "Provisioned", Reason: "InspectionFailed", Note: "no Node yet"},
		engine.Trace{Row: "N31", From: "Provisioned", To: "Running", Action: "SetNodeRef", Outcome: engine.Done, Message: "Node n1"}))
	if want := "Normal Running N31 Provisioned → Running (rows N30, N31): Node n1"; got != want {
		t.Errorf("Event\n %q, want\n %q", got, want)
	}
}

// Only a result the tables declare to need a person is a Warning; its
// reason is its condition's, and its row is the Event's action even when
// the path went on.
func TestWarningEventComesFromTheRowThatNeedsAPerson(t *testing.T) {
	got := eventOf(t, steps(
		engine.Trace{Row: "E13", From: "DrainingNode", To: "WaitingForPreTerminateHook", Action: "ForceDrain", Outcome: engine.Done,
			Reason: "ForceDeletionDrainTimeout", Note: "Drain timed out and onDrainTimeout is Force: 2 Pods deleted", Message: "2 Pods deleted", Warning: true},
		engine.Trace{Row: "C21", From: "WaitingForPreTerminateHook", To: "WaitingForInfrastructureDeletion", Reason: "WaitingForInfrastructureDeletion"}))
	want := "Warning ForceDeletionDrainTimeout E13 DrainingNode → WaitingForInfrastructureDeletion (rows E13, C21): Drain timed out and onDrainTimeout is Force: 2 Pods deleted"
	if got != want {
		t.Errorf("Event\n %q, want\n %q", got, want)
	}
	// A row that keeps Cluster API's condition reason while its action
	// fails names its Warning by its eventReason instead.
	got = eventOf(t, steps(engine.Trace{Row: "R05", From: "Stable", To: "ScalingUp", Action: "CreateMachines", Outcome: engine.Failed,
		Reason: "ScalingUp", Note: "Scaling up from 0 to 1 replicas is blocked because: quota", Warning: true, EventReason: "MachineCreationFailed"}))
	if want := "Warning MachineCreationFailed R05 Stable → ScalingUp (row R05): Scaling up from 0 to 1 replicas is blocked because: quota"; got != want {
		t.Errorf("Event\n %q, want\n %q", got, want)
	}
	// A failure the tables do not mark is Normal, named by its row's
	// condition reason or, without one, by the action that failed.
	got = eventOf(t, steps(engine.Trace{Row: "N21", From: "Provisioning", To: "Provisioning", Action: "AdoptInfrastructure,Watch",
		Outcome: engine.Failed, Message: "watch AcmeMachine: forbidden"}))
	if want := "Normal WatchFailed N21 Provisioning (row N21): watch AcmeMachine: forbidden"; got != want {
		t.Errorf("Event\n %q, want\n %q", got, want)
	}
}

// tells: a state change, or a failure or warning not told already. The
// door tables mark no state quiet, so every state change is told.
func TestTellsStateChangesFailuresAndWarnings(t *testing.T) {
	r := &Reconciler[*unstructured.Unstructured, *door]{spec: Spec[*unstructured.Unstructured, *door]{Set: toySet}}
	prev := kit.Record{State: "Provisioning", LastTransition: &kit.LastTransition{Table: "t", Row: "E09", Outcome: "Done", Message: "owned by MachineSet ms"}}
	for _, c := range []struct {
		name string
		tr   engine.Trace
		want bool
	}{
		{"a wait in its state", engine.Trace{Table: "t", Row: "N21", To: "Provisioning", Outcome: engine.InProgress, Message: "waiting"}, false},
		{"a state change", engine.Trace{Table: "t", Row: "N23", To: "Provisioned", Outcome: engine.Done}, true},
		{"a warning told already", engine.Trace{Table: "t", Row: "E09", To: "Provisioning", Outcome: engine.Done, Message: "owned by MachineSet ms", Warning: true}, false},
		{"a warning with news", engine.Trace{Table: "t", Row: "E09", To: "Provisioning", Outcome: engine.Done, Message: "owned by MachineSet other", Warning: true}, true},
		{"a new failure", engine.Trace{Table: "t", Row: "N21", To: "Provisioning", Outcome: engine.Failed, Message: "boom"}, true},
	} {
		if got := r.tells(prev, steps(c.tr)); got != c.want {
			t.Errorf("%s: tells = %v, want %v", c.name, got, c.want)
		}
	}
}

// milestones: creation steps and deletion steps are quiet; Running and
// Deleting are not.
const milestones = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: milestones}
spec:
  initialState: Pending
  states:
    - {name: Pending, quiet: true, description: waiting for data}
    - {name: Provisioning, quiet: true, description: waiting for infrastructure}
    - {name: Running, description: up}
    - {name: Deleting, description: deletion asked}
    - {name: Draining, quiet: true, description: evicting}
    - {name: Gone, quiet: true, terminal: true, description: deleted}
  facts:
    - {name: go, type: bool, description: go on}
  rows:
    - {id: M01, observed: "-", trigger: go, action: "-", resulting: "-", from: [Pending], when: {go: true}, then: {state: Running}}
`

// A state change is told only when its path enters a state that is not
// quiet, or a row of it failed or needs a person: a Machine's creation is
// one Event (Running) and the start of its deletion another.
func TestQuietStatesAreToldOnlyWithNews(t *testing.T) {
	lib, fs := engine.LoadBytes("milestones.yaml", []byte(milestones))
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load: %v", fs)
	}
	r := &Reconciler[*unstructured.Unstructured, *door]{spec: Spec[*unstructured.Unstructured, *door]{Set: lib.TableSet("milestones")}}
	for _, c := range []struct {
		name string
		prev string
		path []engine.Trace
		want bool
	}{
		{"into a quiet step", "Pending", []engine.Trace{{Row: "N13", From: "Pending", To: "Provisioning", Outcome: engine.Done}}, false},
		{"through quiet steps to Running", "Pending", []engine.Trace{
			{Row: "N13", From: "Pending", To: "Provisioning", Outcome: engine.Done},
			{Row: "N31", From: "Provisioning", To: "Running", Outcome: engine.Done}}, true},
		{"through Deleting into a quiet wait", "Running", []engine.Trace{
			{Row: "N07", From: "Running", To: "Deleting"},
			{Row: "D05", From: "Deleting", To: "Draining", Outcome: engine.InProgress}}, true},
		{"from one deletion step to the last", "Draining", []engine.Trace{
			{Row: "D05", From: "Draining", To: "Gone", Outcome: engine.Done}}, false},
		{"a quiet step with a row that needs a person", "Draining", []engine.Trace{
			{Row: "E13", From: "Draining", To: "Gone", Outcome: engine.Done, Message: "2 Pods deleted", Warning: true}}, true},
		{"to Running by a quiet row (its action tells the Event)", "Provisioning", []engine.Trace{
			{Row: "N31", From: "Provisioning", To: "Running", Outcome: engine.Done, Quiet: true}}, false},
		{"through a quiet row, then into a state that is not quiet", "Pending", []engine.Trace{
			{Row: "N13", From: "Pending", To: "Provisioning", Outcome: engine.Done, Quiet: true},
			{Row: "N31", From: "Provisioning", To: "Running", Outcome: engine.Done}}, true},
		{"a quiet step, then a row that failed", "Pending", []engine.Trace{
			{Row: "N13", From: "Pending", To: "Provisioning", Outcome: engine.Done},
			{Row: "N21", From: "Provisioning", To: "Provisioning", Outcome: engine.Failed, Message: "boom"}}, true},
	} {
		var path []*engine.Step
		for _, tr := range c.path {
			tr.Table = "milestones"
			path = append(path, &engine.Step{Trace: tr})
		}
		if got := r.tells(kit.Record{State: c.prev}, path); got != c.want {
			t.Errorf("%s: tells = %v, want %v", c.name, got, c.want)
		}
	}
}

// An action whose write met a newer version of what it wrote is decided
// again soon, quietly: no error (no back-off, no "Reconciler error" log),
// no Event, nothing written to the object; its trace says it was not
// written.
func TestConflictOfAnActionIsRetriedQuietly(t *testing.T) {
	ns := createNamespace(t, "conflict")
	ctx := context.Background()
	createOpenDoor(t, ns)
	reg := doorRegistryLabeling(func(context.Context, *door) engine.Outcome {
		return engine.Fail(fmt.Errorf("set owner of Other o: %w",
			apierrors.NewConflict(schema.GroupResource{Group: "toy.krtt.dev", Resource: "others"}, "o", fmt.Errorf("the object has been modified"))))
	})
	spec := doorSpec(env.Client)
	spec.Registry = reg
	rec := events.NewFakeRecorder(10)
	r, err := New(spec, Options{Client: env.Client, APIReader: env.Client, Recorder: rec, Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	var traces []engine.Trace
	r.Runner().Subscribe(func(tr engine.Trace) { traces = append(traces, tr) })
	res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "d"}})
	if err != nil || res.RequeueAfter != staleRequeue {
		t.Fatalf("Reconcile = %+v, %v; want a requeue after %s and no error", res, err, staleRequeue)
	}
	if len(traces) != 1 || traces[0].Row != "T02" || traces[0].Unwritten == "" {
		t.Fatalf("traces %+v, want T02 not written", traces)
	}
	select {
	case e := <-rec.Events:
		t.Errorf("Event recorded for a conflict: %s", e)
	default:
	}
	got, err := getDoor(ctx, ns, "d")
	if err != nil {
		t.Fatal(err)
	}
	if rec := doorStatus(got).GetRecord(); rec.State != "" || rec.LastTransition != nil {
		t.Errorf("the conflict was written to the Door: %+v", rec)
	}
}

// A Door carrying its finalizer under a legacy name gets the current one in
// its place, in one patch; a Door being deleted (which may take no new
// finalizer) is reconciled without an error and keeps its legacy one for
// the row that removes the finalizer.
func TestLegacyFinalizerIsReplaced(t *testing.T) {
	ns := createNamespace(t, "legacy-finalizer")
	ctx := context.Background()
	const legacy, current = "door.toy.krtt.dev", "toy.krtt.dev/door"
	spec := doorSpec(env.Client)
	spec.Finalizer, spec.LegacyFinalizers = current, []string{legacy}
	r, err := New(spec, Options{Client: env.Client, APIReader: env.Client, Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kept", "deleted"} {
		d := newDoor()
		d.SetNamespace(ns)
		d.SetName(name)
		d.SetFinalizers([]string{"other.example.com/hold", legacy})
		if err := env.Client.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Delete(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "toy.krtt.dev/v1", "kind": "Door",
		"metadata": map[string]any{"namespace": ns, "name": "deleted"}}}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"kept":    {"other.example.com/hold", current},
		"deleted": {"other.example.com/hold", legacy},
	} {
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}); err != nil {
			t.Fatalf("Reconcile %s: %v", name, err)
		}
		got, err := getDoor(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.GetFinalizers(), want) {
			t.Errorf("Door %s finalizers %v, want %v", name, got.GetFinalizers(), want)
		}
		got.SetFinalizers(nil)
		if err := env.Client.Update(ctx, got); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMigrateFinalizersReadsTheLegacyNameAsTheCurrentOne(t *testing.T) {
	d := newDoor()
	d.SetFinalizers([]string{"a", "old", "new"})
	if read := migrateFinalizers(d, "new", []string{"old"}); !slices.Equal(read, []string{"a", "old", "new"}) || !slices.Equal(d.GetFinalizers(), []string{"a", "new"}) {
		t.Errorf("read %v, now %v; want [a old new] read and [a new] now", read, d.GetFinalizers())
	}
	if read := migrateFinalizers(d, "new", []string{"old"}); read != nil {
		t.Errorf("nothing to migrate, yet read = %v", read)
	}
}
