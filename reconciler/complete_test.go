package reconciler

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// The run-to-completion tables: R1 marks (pure, stays, but a fact moves),
// R2 moves on without actions, R3 pokes the world (not pure) and moves on,
// R4 and R5 are pure moves into a terminal state.
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
    - {name: Done, terminal: true, description: done}
  conditions:
    - {type: Where, description: where the object is}
  facts:
    - {name: marked, type: bool, description: the object is marked}
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
`

type chainEnv struct {
	obj    *unstructured.Unstructured
	marked bool
	pokes  int
}

func chainReconciler(t *testing.T) (*Reconciler[*unstructured.Unstructured, *chainEnv], map[*unstructured.Unstructured]*Record) {
	t.Helper()
	lib, findings := engine.LoadBytes("chain.yaml", []byte(chainTables))
	if lib == nil || findings.HasErrors() {
		t.Fatalf("chain tables: %v", findings)
	}
	reg := engine.NewRegistry[*chainEnv]("chain")
	reg.Bool("marked", "", func(e *chainEnv) bool { return e.marked })
	reg.Action("Mark", "mark in memory", func(_ context.Context, e *chainEnv) engine.Outcome {
		e.marked = true
		return engine.OKf("marked")
	}, engine.Pure())
	reg.Action("Poke", "poke the world", func(_ context.Context, e *chainEnv) engine.Outcome {
		e.pokes++
		return engine.OKf("poked")
	})
	records := map[*unstructured.Unstructured]*Record{}
	conds := map[*unstructured.Unstructured][]metav1.Condition{}
	status := Status[*unstructured.Unstructured]{
		Get: func(u *unstructured.Unstructured) Record {
			if r := records[u]; r != nil {
				return *r
			}
			return Record{}
		},
		Set:           func(u *unstructured.Unstructured, r Record) { records[u] = &r },
		GetConditions: func(u *unstructured.Unstructured) []metav1.Condition { return conds[u] },
		SetConditions: func(u *unstructured.Unstructured, c []metav1.Condition) { conds[u] = c },
	}
	r, err := New(Spec[*unstructured.Unstructured, *chainEnv]{Name: "chain", Set: lib.Set("chain"), Registry: reg,
		NewObject: func() *unstructured.Unstructured { return &unstructured.Unstructured{} }, Status: status}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, records
}

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
	steps := r.runToCompletion(context.Background(), "ns/x", p, r.runner.Act(context.Background(), "ns/x", p.Decision, env))
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
	want := []ViaRow{{Table: "chain", Row: "R1", From: "A", To: "A", Action: "Mark", Message: "marked"}, {Table: "chain", Row: "R2", From: "A", To: "B"}}
	if len(via) != 2 || via[0] != want[0] || via[1] != want[1] {
		t.Errorf("via %+v, want %+v", via, want)
	}
	if c := meta.FindStatusCondition(r.spec.Status.GetConditions(env.obj), "Where"); c == nil || c.Reason != "InC" {
		t.Errorf("condition Where %+v, want the last row's reason InC", c)
	}
	res, err := resultOfSteps(steps, nil)
	if err != nil || res.RequeueAfter.String() != "30s" {
		t.Errorf("result %+v, %v; want the path's requeue of 30s", res, err)
	}
	if note := pathNote(steps); !strings.Contains(note, "chain row R1: A → A (Mark Done): marked; chain row R2: A → B; chain row R3: B → C (Poke Done): poked") {
		t.Errorf("Event note %q does not name the path", note)
	}
}

func TestRunToCompletionStopsAtATerminalStateAndKeepsTheSoonestRequeue(t *testing.T) {
	r, _ := chainReconciler(t)
	env := &chainEnv{obj: &unstructured.Unstructured{Object: map[string]any{}}, marked: true}
	p := chainPlan(t, r, "C", env)
	steps := r.runToCompletion(context.Background(), "ns/x", p, r.runner.Act(context.Background(), "ns/x", p.Decision, env))
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
	steps := r.runToCompletion(context.Background(), "ns/x", p, r.runner.Act(context.Background(), "ns/x", p.Decision, env))
	if got := rowsOf(steps); got != "R3" {
		t.Fatalf("rows %s, want only R3", got)
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
