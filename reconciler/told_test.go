package reconciler

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"

	"github.com/krtt-dev/krtt/engine"
)

// What actions tell is recorded on the reconciled object, each Event with
// the row whose action told it and the object acted on, once.
func TestToldEventsNameTheRowThatToldThem(t *testing.T) {
	rec := events.NewFakeRecorder(4)
	rec.Verbose = true
	r := &Reconciler[*unstructured.Unstructured, *Told]{recorder: rec,
		spec: Spec[*unstructured.Unstructured, *Told]{Told: func(t *Told) *Told { return t }}}
	told := &Told{}
	machine := newDoor()
	machine.SetName("m-1")
	told.Tell(Tell{Reason: "SuccessfulCreate", Related: machine, Note: `Created Machine "m-1"`})
	r.told(told).stamp("R03")
	told.Tell(Tell{Warning: true, Reason: "FailedCreate", Note: "Failed to create MachineSet ns/ms-2: denied"})
	r.told(told).stamp("R05")
	// A status mirror tells while the path is recorded, after the last
	// row ran: it names that row.
	told.Tell(Tell{Reason: "InfrastructureReady", Note: "Cluster c1 InfrastructureProvisioned is now True"})
	r.recordTold(newDoor(), told, steps(engine.Trace{Row: "R03"}, engine.Trace{Row: "R05"}))
	want := []string{
		`Normal SuccessfulCreate R03 Created Machine "m-1"`,
		"Warning FailedCreate R05 Failed to create MachineSet ns/ms-2: denied",
		"Normal InfrastructureReady R05 Cluster c1 InfrastructureProvisioned is now True",
	}
	for i, w := range want {
		e := <-rec.Events
		if got := strings.SplitN(e, " {kind=", 2)[0]; got != w {
			t.Errorf("Event %d\n %q, want\n %q", i, got, w)
		}
		// The fake recorder appends the regarding and the related object.
		want := 1
		if i == 0 {
			want = 2
		}
		if objects := strings.Count(e, "{kind="); objects != want {
			t.Errorf("Event %d names %d objects, want %d: %q", i, objects, want, e)
		}
	}
	r.recordTold(newDoor(), told, nil)
	select {
	case e := <-rec.Events:
		t.Errorf("an Event was recorded twice: %q", e)
	default:
	}
}

// A controller that tells nothing has no Told; the kit copes.
func TestNoToldRecordsNothing(t *testing.T) {
	rec := events.NewFakeRecorder(1)
	r := &Reconciler[*unstructured.Unstructured, *Told]{recorder: rec}
	r.told(&Told{}).stamp("N01")
	r.recordTold(newDoor(), &Told{}, nil)
	if len(rec.Events) != 0 {
		t.Errorf("recorded %q", <-rec.Events)
	}
}

// phases: two states share a phase, as a Cluster's do.
const phases = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: phases}
spec:
  initialState: Pending
  states:
    - {name: Pending, phase: Pending, description: new}
    - {name: Provisioned, phase: Provisioned, description: up}
    - {name: Connected, phase: Provisioned, description: up and reached}
    - {name: Deleted, phase: Deleted, terminal: true, description: gone}
  facts:
    - {name: go, type: bool, description: go on}
  rows:
    - {id: M01, observed: "-", trigger: go, action: "-", resulting: "-", from: [Pending], when: {go: true}, then: {state: Provisioned}}
`

// A Normal Event whose path changed the phase opens with the controller's
// sentence for the phase; one that stays in its phase, or a Warning, does
// not.
func TestPhaseNoteOpensTheEventOfAPhaseChange(t *testing.T) {
	lib, fs := engine.LoadBytes("phases.yaml", []byte(phases))
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load: %v", fs)
	}
	rec := events.NewFakeRecorder(3)
	rec.Verbose = true
	r := &Reconciler[*unstructured.Unstructured, *door]{recorder: rec, spec: Spec[*unstructured.Unstructured, *door]{
		Set: lib.TableSet("phases"),
		PhaseNote: func(o *unstructured.Unstructured, phase string) string {
			return "Door " + o.GetName() + " is " + phase
		}}}
	obj := newDoor()
	r.event(obj, steps(engine.Trace{Row: "M01", From: "Pending", To: "Provisioned", Outcome: engine.Done}))
	r.event(obj, steps(engine.Trace{Row: "M02", From: "Provisioned", To: "Connected", Outcome: engine.Done}))
	r.event(obj, steps(engine.Trace{Row: "M03", From: "Connected", To: "Deleted", Outcome: engine.Done, Warning: true, Reason: "Forced", Note: "forced"}))
	want := []string{
		"Normal Provisioned M01 Door " + obj.GetName() + " is Provisioned: Pending → Provisioned (row M01)",
		"Normal Connected M02 Provisioned → Connected (row M02)",
		"Warning Forced M03 Connected → Deleted (row M03): forced",
	}
	for i, w := range want {
		if got := strings.SplitN(<-rec.Events, " {kind=", 2)[0]; got != w {
			t.Errorf("Event %d\n %q, want\n %q", i, got, w)
		}
	}
}
