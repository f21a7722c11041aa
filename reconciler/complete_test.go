package reconciler

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
)

// The run-to-completion tables: R1 marks (pure, stays, but a fact moves),
// R2 moves on without actions, R3 pokes the world (not pure) and moves on,
// R4 and R5 are pure moves into a terminal state. From W, R6 adopts
// (writes another object, write-through: the answer goes back into the
// observation) and R7 moves on to B once adopted.
const chainTables = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: chain}
spec:
  registry: chain
  initialState: A
  hitPolicy: first
  states:
    - {name: A, description: a}
    - {name: B, description: b}
    - {name: C, description: c}
    - {name: D, description: d}
    - {name: W, description: w}
    - {name: Done, terminal: true, description: done}
  conditions:
    - {type: Where, description: where the object is}
  facts:
    - {name: marked, type: bool, description: the object is marked}
    - {name: adopted, type: bool, description: the other object is owned}
  rows:
    - {id: R1, observed: "-", trigger: "-", action: mark, resulting: "-", from: [A], when: {marked: false}, do: [Mark]}
    - id: R2
      observed: "-"
      trigger: "-"
      action: "-"
      resulting: B
      from: [A]
      when: {marked: true}
      then: {state: B, conditions: [{type: Where, status: "True", reason: InB, message: "in B"}]}
    - id: R3
      observed: "-"
      trigger: "-"
      action: poke
      resulting: C
      from: [B]
      do: [Poke]
      then: {state: C, requeueAfter: 30s, conditions: [{type: Where, status: "True", reason: InC, message: "in C"}]}
    - {id: R4, observed: "-", trigger: "-", action: "-", resulting: D, from: [C], then: {state: D, requeueAfter: 5s}}
    - {id: R5, observed: "-", trigger: "-", action: "-", resulting: Done, from: [D], then: {state: Done}}
    - {id: R6, observed: "-", trigger: "-", action: adopt, resulting: "-", from: [W], when: {adopted: false}, do: [Adopt]}
    - {id: R7, observed: "-", trigger: "-", action: "-", resulting: B, from: [W], when: {adopted: true}, then: {state: B}}
`

type chainEnv struct {
	obj    *unstructured.Unstructured
	marked bool
	pokes  int
	// other is the observed copy of another object; server is that
	// object as the API server has it.
	other, server map[string]string
	// untouched: Poke finds nothing to do and says it wrote nothing.
	untouched bool
	// finalize: Mark also adds a finalizer, in memory.
	finalize bool
}

// TestNewNeedsStatus: an object type that does not implement kit.Status
// needs a Status in its spec, which New asks for before anything reconciles.
func TestNewNeedsStatus(t *testing.T) {
	_, err := New(Spec[*unstructured.Unstructured, *chainEnv]{Name: "chain"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "kit.Status") {
		t.Fatalf("New without Status = %v, want an error naming kit.Status", err)
	}
}

func chainReconciler(t *testing.T) (*Reconciler[*unstructured.Unstructured, *chainEnv], map[*unstructured.Unstructured]*kit.Record) {
	t.Helper()
	lib, findings := engine.LoadBytes("chain.yaml", []byte(chainTables))
	if lib == nil || findings.HasErrors() {
		t.Fatalf("chain tables: %v", findings)
	}
	reg := engine.NewRegistry[*chainEnv]("chain")
	reg.Bool("marked", func(e *chainEnv) bool { return e.marked })
	reg.Bool("adopted", func(e *chainEnv) bool { return e.other["owner"] == "x" })
	reg.Action("Adopt", "own the other object; its answer goes back into the observation", func(_ context.Context, e *chainEnv) engine.Outcome {
		e.server["owner"] = "x"
		e.other = maps.Clone(e.server)
		return engine.OKf("adopted")
	}, engine.WritesThrough())
	reg.Action("Mark", "mark in memory", func(_ context.Context, e *chainEnv) engine.Outcome {
		e.marked = true
		if e.finalize {
			e.obj.SetFinalizers(append(e.obj.GetFinalizers(), "chain.krtt.dev/f"))
		}
		return engine.OKf("marked")
	}, engine.Pure())
	reg.Action("Poke", "poke the world", func(_ context.Context, e *chainEnv) engine.Outcome {
		if e.untouched {
			return engine.OKf("nothing to poke").Untouched()
		}
		e.pokes++
		return engine.OKf("poked")
	})
	records := map[*unstructured.Unstructured]*kit.Record{}
	conds := map[*unstructured.Unstructured][]metav1.Condition{}
	status := func(u *unstructured.Unstructured) kit.Status { return chainView{u, records, conds} }
	r, err := New(Spec[*unstructured.Unstructured, *chainEnv]{Name: "chain", Set: lib.TableSet("chain"), Registry: reg,
		NewObject: func() *unstructured.Unstructured { return &unstructured.Unstructured{} }, Status: status}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, records
}

// chainView keeps an object's record and conditions in maps, beside it.
type chainView struct {
	u       *unstructured.Unstructured
	records map[*unstructured.Unstructured]*kit.Record
	conds   map[*unstructured.Unstructured][]metav1.Condition
}

func (c chainView) GetRecord() kit.Record {
	if r := c.records[c.u]; r != nil {
		return *r
	}
	return kit.Record{}
}

func (c chainView) SetRecord(r kit.Record)                 { c.records[c.u] = &r }
func (c chainView) GetConditions() []metav1.Condition      { return c.conds[c.u] }
func (c chainView) SetConditions(conds []metav1.Condition) { c.conds[c.u] = conds }

// plan decides for an object in state with the env, as Reconcile does.
func chainPlan(t *testing.T, r *Reconciler[*unstructured.Unstructured, *chainEnv], state string, env *chainEnv) *Plan[*unstructured.Unstructured, *chainEnv] {
	t.Helper()
	facts, err := r.runner.Observe(env)
	if err != nil {
		t.Fatal(err)
	}
	set := r.spec.Set
	d, err := set.Decide(context.Background(), state, facts)
	if err != nil {
		t.Fatal(err)
	}
	return &Plan[*unstructured.Unstructured, *chainEnv]{Obs: Observation[*unstructured.Unstructured, *chainEnv]{Env: env, Object: env.obj, Found: true},
		State: set.State(state), Facts: facts, Decision: d, Now: toyTime}
}

func rowsOf(steps []*engine.Step) string {
	ids := make([]string, len(steps))
	for i, s := range steps {
		ids[i] = s.Trace.Row
	}
	return strings.Join(ids, ",")
}

func TestRunToCompletionStopsAtTheFirstRowThatActsOnTheWorld(t *testing.T) {
	r, records := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}}
	p := chainPlan(t, r, "A", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	// R1 stays in A but its pure action moved a fact: decide again. R2 is
	// pure and moves to B; R3 pokes the world: the path ends there.
	if got := rowsOf(steps); got != "R1,R2,R3" {
		t.Fatalf("rows %s, want R1,R2,R3", got)
	}
	if env.pokes != 1 {
		t.Errorf("R3's action ran %d times, want once", env.pokes)
	}
	if err := r.recordSteps(p, steps, env.obj); err != nil {
		t.Fatal(err)
	}
	rec := records[env.obj]
	if rec.State != "C" || rec.LastTransition == nil || rec.LastTransition.Row != "R3" || rec.LastTransition.From != "B" {
		t.Fatalf("record %+v, want state C and lastTransition R3 from B", rec)
	}
	via := rec.LastTransition.Via
	want := []kit.ViaRow{{Table: "chain", Row: "R1", From: "A", To: "A", Action: "Mark", Message: "marked"}, {Table: "chain", Row: "R2", From: "A", To: "B"}}
	if len(via) != 2 || via[0] != want[0] || via[1] != want[1] {
		t.Errorf("via %+v, want %+v", via, want)
	}
	if c := meta.FindStatusCondition(r.spec.Status(env.obj).GetConditions(), "Where"); c == nil || c.Reason != "InC" {
		t.Errorf("condition Where %+v, want the last row's reason InC", c)
	}
	res, err := resultOfSteps(steps, nil)
	if err != nil || res.RequeueAfter.String() != "30s" {
		t.Errorf("result %+v, %v; want the path's requeue of 30s", res, err)
	}
	if note := pathNote(steps, steps[2].Trace); note != "A → C (rows R1, R2, R3): in C: poked" {
		t.Errorf("Event note %q does not name the path", note)
	}
}

func TestRunToCompletionStopsAtATerminalStateAndKeepsTheSoonestRequeue(t *testing.T) {
	r, _ := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}, marked: true}
	p := chainPlan(t, r, "C", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if got := rowsOf(steps); got != "R4,R5" {
		t.Fatalf("rows %s, want R4,R5 (Done is terminal)", got)
	}
	if res, _ := resultOfSteps(steps, nil); res.RequeueAfter.String() != "5s" {
		t.Errorf("requeue %s, want R4's 5s kept although R5 asked for none", res.RequeueAfter)
	}
}

func TestRunToCompletionDoesNotFollowAnImpureRow(t *testing.T) {
	r, _ := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}, marked: true}
	p := chainPlan(t, r, "B", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if got := rowsOf(steps); got != "R3" {
		t.Fatalf("rows %s, want only R3", got)
	}
}

// A finalizer added on the path is saved by its patch: until then, only
// rows of pure actions follow, so nothing outside the object is written
// that a deletion could leave behind.
func TestRunToCompletionWritesNothingElseBeforeAnAddedFinalizerIsSaved(t *testing.T) {
	r, _ := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}, finalize: true}
	p := chainPlan(t, r, "A", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if got := rowsOf(steps); got != "R1,R2" {
		t.Fatalf("rows %s, want R1,R2 (R2 has no action; R3 pokes the world and waits for the finalizer's patch)", got)
	}
	if env.pokes != 0 {
		t.Errorf("Poke ran %d times before the finalizer was saved", env.pokes)
	}

	// Saved (the object as read has it), the next reconcile goes on.
	p = chainPlan(t, r, "B", env)
	steps = r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if got := rowsOf(steps); got != "R3" || env.pokes != 1 {
		t.Fatalf("rows %s, pokes %d; want R3 poking once", got, env.pokes)
	}
}

func TestOwnWritesSkipOnlyReplacedVersions(t *testing.T) {
	w := newOwnWrites(func() time.Time { return toyTime })
	key := client.ObjectKey{Namespace: "ns", Name: "x"}
	w.wrote(key, "10")
	w.wrote(key, "11")
	if !w.behind(key, "10") || !w.behind(key, "11") {
		t.Error("a version the controller's write replaced is not seen as behind")
	}
	if w.behind(key, "12") || w.behind(client.ObjectKey{Name: "other"}, "10") {
		t.Error("a newer version or another object is seen as behind")
	}
	w.forget(key)
	if w.behind(key, "10") {
		t.Error("a forgotten object is still behind")
	}
}

// A write-through action wrote another object and put the answer back into
// the observation: the kit decides again at once, and stops at the first
// row that acts on the world otherwise.
func TestRunToCompletionFollowsAWriteThroughRow(t *testing.T) {
	r, records := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}, marked: true,
		other: map[string]string{}, server: map[string]string{}}
	p := chainPlan(t, r, "W", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if got := rowsOf(steps); got != "R6,R7,R3" {
		t.Fatalf("rows %s, want R6,R7,R3 (R6 writes through, R3 pokes the world)", got)
	}
	if env.server["owner"] != "x" || env.pokes != 1 {
		t.Errorf("server %v, pokes %d: want the adoption written and R3's action run once", env.server, env.pokes)
	}
	if err := r.recordSteps(p, steps, env.obj); err != nil {
		t.Fatal(err)
	}
	if lt := records[env.obj].LastTransition; lt == nil || lt.Row != "R3" || len(lt.Via) != 2 || lt.Via[0].Row != "R6" || lt.Via[0].Action != "Adopt" {
		t.Errorf("lastTransition %+v, want R3 via R6 (Adopt) and R7", lt)
	}
}

func TestWritesThroughAndPureExcludeEachOther(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("an action declared both pure and write-through was registered")
		}
	}()
	engine.NewRegistry[*chainEnv]("x").Action("Both", "", func(context.Context, *chainEnv) engine.Outcome { return engine.OK() },
		engine.Pure(), engine.WritesThrough())
}

// A row that fires again with the same result keeps the last transition as
// it was, its time and the path that reached it: status is not rewritten
// for a repeat (a wait, a steady state).
func TestARepeatedRowKeepsItsTransitionAndPath(t *testing.T) {
	r, records := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}, marked: true}
	earlier := metav1.NewTime(toyTime.Add(-time.Hour))
	via := []kit.ViaRow{{Table: "chain", Row: "R1", From: "A", To: "A", Action: "Mark", Message: "marked"}, {Table: "chain", Row: "R2", From: "A", To: "B"}}
	records[env.obj] = &kit.Record{State: "B", LastTransition: &kit.LastTransition{Table: "chain", Row: "R3", From: "B", To: "C", Action: "Poke",
		Outcome: "Done", Message: "poked", Time: earlier, Via: via}}
	p := chainPlan(t, r, "B", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if err := r.recordSteps(p, steps, env.obj); err != nil {
		t.Fatal(err)
	}
	lt := records[env.obj].LastTransition
	if lt == nil || lt.Row != "R3" || !lt.Time.Equal(&earlier) || len(lt.Via) != 2 {
		t.Fatalf("lastTransition %+v, want R3 as it was (time %s, via R1, R2)", lt, earlier)
	}
	// Another message is another transition: time and via are its own.
	env.pokes = 0
	records[env.obj].LastTransition.Message = "poked before"
	steps = r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if err := r.recordSteps(p, steps, env.obj); err != nil {
		t.Fatal(err)
	}
	if lt := records[env.obj].LastTransition; lt.Time.Equal(&earlier) || len(lt.Via) != 0 || lt.Message != "poked" {
		t.Errorf("lastTransition %+v, want a new one without via", lt)
	}
}

// An action that is neither pure nor write-through but says it wrote
// nothing this time leaves the observation true: the path goes on.
func TestRunToCompletionFollowsAnActionThatWroteNothing(t *testing.T) {
	r, _ := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}, marked: true, untouched: true}
	p := chainPlan(t, r, "B", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, env.obj.DeepCopy(), r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if got := rowsOf(steps); got != "R3,R4,R5" {
		t.Fatalf("rows %s, want R3,R4,R5 (R3's Poke wrote nothing)", got)
	}
}
