package reconciler

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
)

// Unit tests of record, the projection of one engine step onto the object in
// memory. They drive Plan, Runner.Act and record on canned observations: no
// API server and no patch, so every value written can be asserted exactly.

// fullStatus is doorStatus with the whole record kept (doorStatus drops
// stateSince and keeps only the row of lastTransition), so that what record
// keeps and what it rewrites can be told apart.
func fullStatus(u *unstructured.Unstructured) kit.Status { return fullView{doorView{u}} }

type fullView struct{ doorView }

func (f fullView) GetRecord() kit.Record {
	u := f.u
	rec := f.doorView.GetRecord()
	rec.LastTransition = nil
	if s, ok, _ := unstructured.NestedString(u.Object, "status", "stateSince"); ok {
		t, err := time.Parse(time.RFC3339, s)
		if err == nil {
			rec.StateSince = &metav1.Time{Time: t}
		}
	}
	if s, ok, _ := unstructured.NestedString(u.Object, "status", "phaseSince"); ok {
		t, err := time.Parse(time.RFC3339, s)
		if err == nil {
			rec.PhaseSince = &metav1.Time{Time: t}
		}
	}
	if m, ok, _ := unstructured.NestedStringMap(u.Object, "status", "lastTransition"); ok {
		t, _ := time.Parse(time.RFC3339, m["time"])
		rec.LastTransition = &kit.LastTransition{Table: m["table"], Row: m["row"], From: m["from"], To: m["to"],
			Action: m["action"], Outcome: m["outcome"], Message: m["message"], Time: metav1.Time{Time: t}}
	}
	return rec
}

func (f fullView) SetRecord(rec kit.Record) {
	u := f.u
	_ = unstructured.SetNestedField(u.Object, rec.State, "status", "state")
	_ = unstructured.SetNestedField(u.Object, rec.Phase, "status", "phase")
	_ = unstructured.SetNestedField(u.Object, rec.ObservedGeneration, "status", "observedGeneration")
	if rec.StateSince != nil {
		_ = unstructured.SetNestedField(u.Object, rec.StateSince.UTC().Format(time.RFC3339), "status", "stateSince")
	} else {
		unstructured.RemoveNestedField(u.Object, "status", "stateSince")
	}
	if rec.PhaseSince != nil {
		_ = unstructured.SetNestedField(u.Object, rec.PhaseSince.UTC().Format(time.RFC3339), "status", "phaseSince")
	}
	if lt := rec.LastTransition; lt != nil {
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"table": lt.Table, "row": lt.Row, "from": lt.From,
			"to": lt.To, "action": lt.Action, "outcome": lt.Outcome, "message": lt.Message,
			"time": lt.Time.UTC().Format(time.RFC3339)}, "status", "lastTransition")
	} else {
		unstructured.RemoveNestedField(u.Object, "status", "lastTransition")
	}
}

// lampTables has the row kinds the Door lacks: a statusUnchanged row (P1),
// a row asking for a retry without failing (N1), an action failing with no
// onFailure (N2, so the engine retries) and with one (F1), an impossible
// combination, an unknownState (U1), a mirror (lit) and a summary (Ready).
const lampTables = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: lamp}
spec:
  registry: lamp
  initialState: "Off"
  unknownState: Unknown
  hitPolicy: first
  states:
    - {name: "Off", phase: Dark, description: switched off}
    - {name: "On", phase: Lit, description: switched on}
    - {name: Unknown, description: a state the tables do not know}
    - {name: Gone, phase: Gone, terminal: true, description: the lamp was removed}
  conditions:
    - {type: LampOn, description: the lamp is switched on}
    - {type: Paused, description: the user paused the controller}
    - {type: Ready, description: summary of LampOn}
  statusFields:
    - {name: switchedBy, description: status.switchedBy}
  facts:
    - {name: found, type: bool, description: the Lamp exists}
    - {name: paused, type: bool, description: spec.paused}
    - {name: wantOn, type: bool, description: spec.on}
    - {name: powered, type: bool, description: the socket has power}
    - {name: lit, type: bool, description: the bulb glows}
  impossible:
    - {name: litWithoutPower, description: a bulb cannot glow without power, when: {lit: true, powered: false}}
  rows:
    - {id: L0, observed: "-", trigger: gone, action: nothing, resulting: Gone, from: ["Off", "On", Unknown], when: {found: false}, then: {state: Gone}}
    - id: P1
      observed: any
      trigger: spec.paused
      action: nothing; say so
      resulting: "-"
      from: ["*"]
      when: {paused: true}
      then:
        statusUnchanged: true
        conditions: [{type: Paused, status: "True", reason: Paused, message: paused by the user}]
    - {id: U1, observed: unknown, trigger: any, action: nothing, resulting: "Off", from: [Unknown], then: {state: "Off"}}
    - id: N1
      observed: "Off"
      trigger: spec.on without power
      action: wait for power
      resulting: "-"
      from: ["Off"]
      when: {wantOn: true, powered: false}
      then:
        retry: true
        conditions: [{type: LampOn, status: "False", reason: NoPower, message: waiting for power}]
    - id: N2
      observed: "Off"
      trigger: spec.on
      action: switch on
      resulting: "On"
      from: ["Off"]
      when: {wantOn: true}
      do: [SwitchOn]
      then:
        state: "On"
        status: {switchedBy: krtt}
        conditions: [{type: LampOn, status: "True", reason: SwitchedOn, message: "on: {detail}"}]
    - id: F1
      observed: "On"
      trigger: not spec.on
      action: switch off
      resulting: "Off"
      from: ["On"]
      when: {wantOn: false}
      do: [SwitchOff]
      then:
        state: "Off"
        conditions: [{type: LampOn, status: "False", reason: SwitchedOff, message: "off"}]
      onFailure:
        conditions: [{type: LampOn, status: Unknown, reason: SwitchFailed, message: "{detail}"}]
    - {id: W1, observed: "Off", trigger: as wanted, action: nothing, resulting: "-", from: ["Off"], when: {wantOn: false}}
    - {id: W2, observed: "On", trigger: as wanted, action: nothing, resulting: "-", from: ["On"], when: {wantOn: true}}
`

// lamp is the Lamp controller's environment; its facts and the actions'
// outcomes are read from spec fields the test sets (spec.powered, spec.lit,
// spec.fail stand for the world outside the object).
type lamp struct{ obj *unstructured.Unstructured }

func (l *lamp) spec(field string) bool {
	v, _, _ := unstructured.NestedBool(l.obj.Object, "spec", field)
	return v
}

func (l *lamp) switchTo(on bool) engine.Outcome {
	if msg, ok, _ := unstructured.NestedString(l.obj.Object, "spec", "fail"); ok {
		return engine.Fail(errors.New(msg))
	}
	_ = unstructured.SetNestedField(l.obj.Object, on, "status", "switch")
	return engine.OKf("bulb %d", l.obj.GetGeneration())
}

func lampRegistry() *engine.Registry[*lamp] {
	r := engine.NewRegistry[*lamp]("lamp")
	r.Bool("found", func(l *lamp) bool { return l.obj != nil })
	r.Bool("paused", func(l *lamp) bool { return l.spec("paused") })
	r.Bool("wantOn", func(l *lamp) bool { return l.spec("on") })
	r.Bool("powered", func(l *lamp) bool { return l.spec("powered") })
	r.Bool("lit", func(l *lamp) bool { return l.spec("lit") })
	r.Action("SwitchOn", "", func(_ context.Context, l *lamp) engine.Outcome { return l.switchTo(true) })
	r.Action("SwitchOff", "", func(_ context.Context, l *lamp) engine.Outcome { return l.switchTo(false) })
	r.StatusField("switchedBy", "", func(l *lamp, v string) {
		_ = unstructured.SetNestedField(l.obj.Object, v, "status", "switchedBy")
	})
	r.Mirror("lit", "lit mirrors the bulb", func(l *lamp) {
		_ = unstructured.SetNestedField(l.obj.Object, l.spec("lit"), "status", "lit")
	})
	r.Summary("Ready", "Ready is LampOn", func(l *lamp) {
		conds := fullStatus(l.obj).GetConditions()
		ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotOn", Message: "the lamp is not on"}
		if meta.IsStatusConditionTrue(conds, "LampOn") {
			ready = metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "On", Message: "the lamp is on"}
		}
		ready.ObservedGeneration = l.obj.GetGeneration()
		meta.SetStatusCondition(&conds, ready)
		fullStatus(l.obj).SetConditions(conds)
	})
	return r
}

func lampSet(t *testing.T) *engine.TableSet {
	t.Helper()
	lib, findings := engine.LoadBytes("lamp.yaml", []byte(lampTables))
	if lib == nil || findings.HasErrors() {
		t.Fatalf("lamp tables: %v", findings)
	}
	if fs := engine.Check(lib, map[string]*engine.Catalog{"lamp": lampRegistry().Catalog()}); len(fs) > 0 {
		t.Fatalf("lamp tables: %v", fs)
	}
	return lib.TableSet("lamp")
}

// recordStep is one reconcile of a case: edit the stored object (the user or
// the world changing), observe it at the clock reading at (with observeErr
// as the observer's error), decide, act and record.
type recordStep struct {
	name       string
	at         time.Time
	edit       func(u *unstructured.Unstructured)
	observeErr error
	want       recordWant
}

// recordWant is the object after record.
type recordWant struct {
	// row is the row that fired.
	row          string
	state, phase string
	since        time.Time
	// phaseSince, when set, is when the phase last changed.
	phaseSince         time.Time
	last               kit.LastTransition
	observedGeneration int64
	// conds is every condition, as type → "Status Reason: Message @observedGeneration".
	conds map[string]string
	// condSince are conditions' lastTransitionTime (only those listed):
	// the step's clock reading when the status changed, never the wall
	// clock (the clock here is in January 2026).
	condSince map[string]time.Time
	// fields are other status fields, as name → value (nil: absent).
	fields map[string]any
	labels map[string]string
	// unchanged: record left the object as observed (no patch, no rewrite).
	unchanged bool
}

type recordCase struct {
	name  string
	steps []recordStep
}

// recordWorld is the stored object the canned observer returns a copy of;
// the recorded copy replaces it, as a landed patch would.
type recordWorld struct {
	obj *unstructured.Unstructured
	err error
}

func (w *recordWorld) observation() (*unstructured.Unstructured, error) {
	return w.obj.DeepCopy(), w.err
}

var recordKey = client.ObjectKey{Namespace: "ns", Name: "one"}

// newRecordReconciler builds a Reconciler whose observer returns canned
// objects and whose clock the steps set; it has no client, which neither
// Plan nor record uses.
func newRecordReconciler[E any](t *testing.T, set *engine.TableSet, reg *engine.Registry[E], env func(*unstructured.Unstructured) E,
	w *recordWorld, clock *time.Time) *Reconciler[*unstructured.Unstructured, E] {
	t.Helper()
	spec := Spec[*unstructured.Unstructured, E]{
		Name: set.Name, Set: set, Registry: reg, NewObject: newDoor, Status: fullStatus,
		Observe: func(_ context.Context, key client.ObjectKey, _ time.Time) Observation[*unstructured.Unstructured, E] {
			if key != recordKey {
				t.Fatalf("observed %v, want %v", key, recordKey)
			}
			u, err := w.observation()
			return Observation[*unstructured.Unstructured, E]{Env: env(u), Object: u, Found: true, Err: err}
		},
	}
	r, err := New(spec, Options{Now: func() time.Time { return *clock }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runRecordCases runs each case on a fresh object (an unstructured Door at
// generation 1 with no status; record does not look at the kind) and checks
// the object after every step.
func runRecordCases[E any](t *testing.T, cases []recordCase, newRec func(*testing.T, *recordWorld, *time.Time) *Reconciler[*unstructured.Unstructured, E]) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := newDoor()
			u.SetNamespace(recordKey.Namespace)
			u.SetName(recordKey.Name)
			u.SetGeneration(1)
			w := &recordWorld{obj: u}
			var clock time.Time
			r := newRec(t, w, &clock)
			for i, s := range tc.steps {
				if s.edit != nil {
					s.edit(w.obj)
				}
				w.err = s.observeErr
				clock = s.at
				p, err := r.Plan(context.Background(), recordKey)
				if err != nil {
					t.Fatalf("step %d (%s): plan: %v", i, s.name, err)
				}
				if p.Decision == nil {
					t.Fatalf("step %d (%s): no decision in state %s", i, s.name, p.State.Name)
				}
				observed := p.Obs.Object.DeepCopy()
				step := r.runner.Act(context.Background(), recordKey.String(), p.Decision, p.Obs.Env)
				if err := r.record(p, step, p.Obs.Object); err != nil {
					t.Fatalf("step %d (%s): record: %v", i, s.name, err)
				}
				w.obj = p.Obs.Object
				checkRecord(t, fmt.Sprintf("step %d (%s)", i, s.name), s.want, step, observed, w.obj)
			}
		})
	}
}

func checkRecord(t *testing.T, where string, want recordWant, step *engine.Step, observed, got *unstructured.Unstructured) {
	t.Helper()
	if step.Trace.Row != want.row {
		t.Errorf("%s: row %s fired, want %s", where, step.Trace.Row, want.row)
	}
	rec := fullStatus(got).GetRecord()
	if rec.State != want.state || rec.Phase != want.phase || rec.ObservedGeneration != want.observedGeneration {
		t.Errorf("%s: state %q phase %q observedGeneration %d, want %q %q %d", where, rec.State, rec.Phase, rec.ObservedGeneration,
			want.state, want.phase, want.observedGeneration)
	}
	if rec.StateSince == nil || !rec.StateSince.Time.Equal(want.since) {
		t.Errorf("%s: stateSince %v, want %v", where, rec.StateSince, want.since)
	}
	if !want.phaseSince.IsZero() && (rec.PhaseSince == nil || !rec.PhaseSince.Time.Equal(want.phaseSince)) {
		t.Errorf("%s: phaseSince %v, want %v", where, rec.PhaseSince, want.phaseSince)
	}
	if rec.LastTransition == nil {
		t.Errorf("%s: no lastTransition, want %+v", where, want.last)
	} else if lt := *rec.LastTransition; !sameAs(&lt, &want.last) || !lt.Time.Equal(&want.last.Time) {
		t.Errorf("%s: lastTransition\n %+v\nwant\n %+v", where, lt, want.last)
	}
	gotConds := map[string]string{}
	for _, c := range fullStatus(got).GetConditions() {
		gotConds[c.Type] = fmt.Sprintf("%s %s: %s @%d", c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	if want.conds == nil {
		want.conds = map[string]string{}
	}
	if !reflect.DeepEqual(gotConds, want.conds) {
		t.Errorf("%s: conditions\n %s\nwant\n %s", where, showConds(gotConds), showConds(want.conds))
	}
	for ctype, since := range want.condSince {
		c := meta.FindStatusCondition(fullStatus(got).GetConditions(), ctype)
		if c == nil || !c.LastTransitionTime.Time.Equal(since) {
			t.Errorf("%s: condition %s = %+v, want lastTransitionTime %v", where, ctype, c, since)
		}
	}
	for name, v := range want.fields {
		f, ok, _ := unstructured.NestedFieldNoCopy(got.Object, "status", name)
		if v == nil && ok || v != nil && !reflect.DeepEqual(f, v) {
			t.Errorf("%s: status.%s = %v, want %v", where, name, f, v)
		}
	}
	for k, v := range want.labels {
		if l := got.GetLabels()[k]; l != v {
			t.Errorf("%s: label %s = %q, want %q", where, k, l, v)
		}
	}
	if same := equality.Semantic.DeepEqual(observed.Object, got.Object); same != want.unchanged {
		t.Errorf("%s: object unchanged by record = %v, want %v\nbefore %v\nafter  %v", where, same, want.unchanged, observed.Object, got.Object)
	}
}

func showConds(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, "\n ")
}

func setSpec(kv ...any) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		for i := 0; i < len(kv); i += 2 {
			_ = unstructured.SetNestedField(u.Object, kv[i+1], "spec", kv[i].(string))
		}
	}
}

// bump is a spec change by the user: it raises the generation.
func bump(edits ...func(*unstructured.Unstructured)) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		for _, e := range edits {
			e(u)
		}
		u.SetGeneration(u.GetGeneration() + 1)
	}
}

// Clock readings of the steps; not on a whole second, as record truncates.
var (
	rt0 = toyTime.Add(250 * time.Millisecond)
	rt1 = toyTime.Add(time.Minute + 700*time.Millisecond)
	rt2 = toyTime.Add(2*time.Minute + 100*time.Millisecond)
	rt3 = toyTime.Add(3 * time.Minute)
)

func sec(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }

// TestRecordDoor records the toy Door's rows: a state change, the same row
// repeating, and an observe error.
func TestRecordDoor(t *testing.T) {
	opened := kit.LastTransition{Table: "door", Row: "T02", From: "Closed", To: "Open", Action: "Label", Outcome: "Done", Time: sec(rt0)}
	openStep := recordStep{name: "opens", at: rt0, edit: setSpec("open", true), want: recordWant{
		row: "T02", state: "Open", phase: "Open", since: rt0.Truncate(time.Second), last: opened, observedGeneration: 1,
		conds:  map[string]string{"DoorOpen": "True Opened: opened @1"},
		fields: map[string]any{"openedBy": "krtt"}, labels: map[string]string{"toy.krtt.dev/opened": "yes"},
	}}
	cases := []recordCase{
		{name: "state change", steps: []recordStep{openStep}},
		{name: "same row repeats", steps: []recordStep{openStep,
			{name: "stays open", at: rt1, want: recordWant{
				row: "T05", state: "Open", phase: "Open", since: rt0.Truncate(time.Second), observedGeneration: 1,
				last:  kit.LastTransition{Table: "door", Row: "T05", From: "Open", To: "Open", Outcome: "Done", Time: sec(rt1)},
				conds: map[string]string{"DoorOpen": "True Opened: opened @1"},
			}},
			{name: "stays open again", at: rt2, want: recordWant{
				row: "T05", state: "Open", phase: "Open", since: rt0.Truncate(time.Second), observedGeneration: 1,
				last:      kit.LastTransition{Table: "door", Row: "T05", From: "Open", To: "Open", Outcome: "Done", Time: sec(rt1)},
				conds:     map[string]string{"DoorOpen": "True Opened: opened @1"},
				unchanged: true,
			}},
		}},
		{name: "observe error", steps: []recordStep{openStep,
			{name: "closes while a read fails", at: rt1, edit: bump(setSpec("open", false)), observeErr: errors.New("lock unreadable"),
				want: recordWant{
					row: "T03", state: "Closed", phase: "Closed", since: rt1.Truncate(time.Second), observedGeneration: 1,
					last:   kit.LastTransition{Table: "door", Row: "T03", From: "Open", To: "Closed", Outcome: "Done", Time: sec(rt1)},
					conds:  map[string]string{"DoorOpen": "False Closed: closed @2"},
					fields: map[string]any{"openedBy": "krtt"},
				}},
			{name: "read works again", at: rt2, want: recordWant{
				row: "T04", state: "Closed", phase: "Closed", since: rt1.Truncate(time.Second), observedGeneration: 2,
				last:  kit.LastTransition{Table: "door", Row: "T04", From: "Closed", To: "Closed", Outcome: "Done", Time: sec(rt2)},
				conds: map[string]string{"DoorOpen": "False Closed: closed @2"},
			}},
		}},
	}
	runRecordCases(t, cases, func(t *testing.T, w *recordWorld, clock *time.Time) *Reconciler[*unstructured.Unstructured, *door] {
		return newRecordReconciler(t, toySet, doorRegistry(), func(u *unstructured.Unstructured) *door { return &door{obj: u} }, w, clock)
	})
}

// TestRecordLamp records the rows the Door lacks.
func TestRecordLamp(t *testing.T) {
	set := lampSet(t)
	notOn := func(gen int) string { return fmt.Sprintf("False NotOn: the lamp is not on @%d", gen) }
	idle := kit.LastTransition{Table: "lamp", Row: "W1", From: "Off", To: "Off", Outcome: "Done", Time: sec(rt0)}
	// Every case starts with a successful reconcile of generation 1 in Off.
	start := recordStep{name: "idle", at: rt0, edit: setSpec("powered", true), want: recordWant{
		row: "W1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), phaseSince: rt0.Truncate(time.Second), last: idle, observedGeneration: 1,
		conds: map[string]string{"Ready": notOn(1)}, fields: map[string]any{"lit": false},
		condSince: map[string]time.Time{"Ready": rt0.Truncate(time.Second)},
	}}
	switchedOn := kit.LastTransition{Table: "lamp", Row: "N2", From: "Off", To: "On", Action: "SwitchOn", Outcome: "Done", Message: "bulb 2", Time: sec(rt1)}
	switchOn := recordStep{name: "switches on", at: rt1, edit: bump(setSpec("on", true, "lit", true)), want: recordWant{
		row: "N2", state: "On", phase: "Lit", since: rt1.Truncate(time.Second), phaseSince: rt1.Truncate(time.Second), last: switchedOn, observedGeneration: 2,
		conds:     map[string]string{"LampOn": "True SwitchedOn: on: bulb 2 @2", "Ready": "True On: the lamp is on @2"},
		condSince: map[string]time.Time{"LampOn": rt1.Truncate(time.Second), "Ready": rt1.Truncate(time.Second)},
		fields:    map[string]any{"switchedBy": "krtt", "lit": true, "switch": true},
	}}
	cases := []recordCase{
		{name: "state change with status field, mirror, row condition and summary", steps: []recordStep{start, switchOn}},
		{name: "retry without failure", steps: []recordStep{start,
			{name: "wants on without power", at: rt1, edit: bump(setSpec("on", true, "powered", false)), want: recordWant{
				row: "N1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), phaseSince: rt0.Truncate(time.Second), observedGeneration: 1,
				last:  kit.LastTransition{Table: "lamp", Row: "N1", From: "Off", To: "Off", Outcome: "Done", Time: sec(rt1)},
				conds: map[string]string{"LampOn": "False NoPower: waiting for power @2", "Ready": notOn(2)},
				// Ready keeps its status (a new generation only): its time stays.
				condSince: map[string]time.Time{"LampOn": rt1.Truncate(time.Second), "Ready": rt0.Truncate(time.Second)},
			}},
		}},
		{name: "failure with retry", steps: []recordStep{start,
			{name: "bulb blown", at: rt1, edit: bump(setSpec("on", true, "fail", "bulb blown")), want: recordWant{
				row: "N2", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), observedGeneration: 1,
				last: kit.LastTransition{Table: "lamp", Row: "N2", From: "Off", To: "Off", Action: "SwitchOn", Outcome: "Failed",
					Message: "bulb blown", Time: sec(rt1)},
				conds:  map[string]string{"Ready": notOn(2)},
				fields: map[string]any{"switchedBy": nil, "switch": nil},
			}},
		}},
		{name: "failure without retry", steps: []recordStep{start, switchOn,
			{name: "switch stuck", at: rt2, edit: bump(setSpec("on", false, "fail", "switch stuck")), want: recordWant{
				row: "F1", state: "On", phase: "Lit", since: rt1.Truncate(time.Second), phaseSince: rt1.Truncate(time.Second), observedGeneration: 2,
				last: kit.LastTransition{Table: "lamp", Row: "F1", From: "On", To: "On", Action: "SwitchOff", Outcome: "Failed",
					Message: "switch stuck", Time: sec(rt2)},
				conds:     map[string]string{"LampOn": "Unknown SwitchFailed: switch stuck @3", "Ready": notOn(3)},
				condSince: map[string]time.Time{"LampOn": rt2.Truncate(time.Second), "Ready": rt2.Truncate(time.Second)},
				fields:    map[string]any{"switch": true},
			}},
		}},
		{name: "statusUnchanged writes only its conditions", steps: []recordStep{start,
			// Unpaused, these facts would switch the lamp on, and the
			// mirror would write status.lit; the summary would keep Ready.
			{name: "paused", at: rt1, edit: bump(setSpec("paused", true, "on", true, "lit", true)), want: recordWant{
				row: "P1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), phaseSince: rt0.Truncate(time.Second), last: idle, observedGeneration: 1,
				conds:  map[string]string{"Paused": "True Paused: paused by the user @2", "Ready": notOn(1)},
				fields: map[string]any{"lit": false, "switch": nil},
			}},
			{name: "still paused", at: rt2, want: recordWant{
				row: "P1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), last: idle, observedGeneration: 1,
				conds:     map[string]string{"Paused": "True Paused: paused by the user @2", "Ready": notOn(1)},
				fields:    map[string]any{"lit": false},
				unchanged: true,
			}},
		}},
		{name: "statusUnchanged still reports impossible facts", steps: []recordStep{start,
			// The row leaves state, mirrors and summaries alone, but what
			// was observed is shown: the log and the metric name it too.
			{name: "paused, lit without power", at: rt1, edit: bump(setSpec("paused", true, "powered", false, "lit", true)), want: recordWant{
				row: "P1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), last: idle, observedGeneration: 1,
				conds: map[string]string{"Paused": "True Paused: paused by the user @2", "Ready": notOn(1),
					FactsConsistentCondition: "False ImpossibleFacts: the observed facts fall into " +
						"litWithoutPower (a bulb cannot glow without power), which the tables declare impossible: " +
						"found=true lit=true paused=true powered=false wantOn=false @2"},
				condSince: map[string]time.Time{FactsConsistentCondition: rt1.Truncate(time.Second)},
				fields:    map[string]any{"lit": false},
			}},
			{name: "still paused, dark again", at: rt2, edit: setSpec("lit", false), want: recordWant{
				row: "P1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), last: idle, observedGeneration: 1,
				conds:  map[string]string{"Paused": "True Paused: paused by the user @2", "Ready": notOn(1)},
				fields: map[string]any{"lit": false},
			}},
		}},
		{name: "impossible facts, then consistent ones", steps: []recordStep{
			{name: "lit without power", at: rt0, edit: setSpec("lit", true), want: recordWant{
				row: "W1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), last: idle, observedGeneration: 1,
				conds: map[string]string{"Ready": notOn(1), FactsConsistentCondition: "False ImpossibleFacts: the observed facts fall into " +
					"litWithoutPower (a bulb cannot glow without power), which the tables declare impossible: " +
					"found=true lit=true paused=false powered=false wantOn=false @1"},
				fields: map[string]any{"lit": true},
			}},
			{name: "dark again", at: rt1, edit: setSpec("lit", false), want: recordWant{
				row: "W1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), last: idle, observedGeneration: 1,
				conds: map[string]string{"Ready": notOn(1)}, fields: map[string]any{"lit": false},
			}},
		}},
		{name: "unknown persisted state", steps: []recordStep{
			{name: "state Ajar", at: rt0, edit: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "Ajar", "status", "state")
				_ = unstructured.SetNestedField(u.Object, "Half", "status", "phase")
				_ = unstructured.SetNestedField(u.Object, toyTime.Add(-time.Hour).Format(time.RFC3339), "status", "stateSince")
			}, want: recordWant{
				row: "U1", state: "Off", phase: "Dark", since: rt0.Truncate(time.Second), observedGeneration: 1,
				last:  kit.LastTransition{Table: "lamp", Row: "U1", From: "Ajar", To: "Off", Outcome: "Done", Time: sec(rt0)},
				conds: map[string]string{"Ready": notOn(1)},
			}},
		}},
	}
	runRecordCases(t, cases, func(t *testing.T, w *recordWorld, clock *time.Time) *Reconciler[*unstructured.Unstructured, *lamp] {
		return newRecordReconciler(t, set, lampRegistry(), func(u *unstructured.Unstructured) *lamp { return &lamp{obj: u} }, w, clock)
	})
}
