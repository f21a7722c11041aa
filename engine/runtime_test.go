package engine

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// mustLoadSet loads files that must load without errors and returns the
// named set.
func mustLoadSet(t testing.TB, name string, paths ...string) *TableSet {
	t.Helper()
	lib, fs := LoadPaths(paths...)
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load %v:\n%v", paths, fs)
	}
	s := lib.TableSet(name)
	if s == nil {
		t.Fatalf("no set %s in %v", name, paths)
	}
	return s
}

// mustLoadBytes loads an inline document that must load without errors.
func mustLoadBytes(t testing.TB, name, doc string) *TableSet {
	t.Helper()
	lib, fs := LoadBytes(name+".yaml", []byte(doc))
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load %s:\n%v", name, fs)
	}
	return lib.TableSet(name)
}

func doorFacts(t testing.TB, s *TableSet, locked bool, push string) Facts {
	t.Helper()
	f := s.NewFacts()
	if err := f.SetBool("locked", locked); err != nil {
		t.Fatal(err)
	}
	if err := f.Set("push", push); err != nil {
		t.Fatal(err)
	}
	return f
}

// factsOf sets every fact from name=value words; later words win.
func factsOf(t *testing.T, s *TableSet, words ...string) Facts {
	t.Helper()
	f := s.NewFacts()
	for _, w := range strings.Fields(strings.Join(words, " ")) {
		k, v, _ := strings.Cut(w, "=")
		if err := f.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if m := f.Missing(); len(m) > 0 {
		t.Fatalf("facts missing: %v", m)
	}
	return f
}

func TestDecideDoor(t *testing.T) {
	s := mustLoadSet(t, "door", "testdata/door.yaml")
	ctx := context.Background()
	for _, c := range []struct {
		state  string
		locked bool
		push   string
		row    string
		to     string
	}{
		{"Closed", false, "Push", "C1", "Open"},
		{"Closed", false, "None", "C2", "Closed"},
		{"Closed", true, "None", "C2", "Closed"},
		{"Closed", true, "Push", "C4", "Closed"},
		{"Closed", false, "Remove", "C3", "Gone"},
		{"Open", false, "None", "O1", "Closed"},
		{"Open", false, "Push", "O1", "Closed"},
		{"Open", true, "Remove", "O1", "Closed"},
	} {
		f := doorFacts(t, s, c.locked, c.push)
		d, err := s.Decide(ctx, c.state, f)
		if err != nil {
			t.Errorf("%s %v: %v", c.state, f, err)
			continue
		}
		if d.Row.ID != c.row || d.Table.Name != "door" || d.From.Name != c.state {
			t.Errorf("%s %v: decided %s/%s from %s, want door/%s", c.state, f, d.Table.Name, d.Row.ID, d.From.Name, c.row)
		}
		if res := d.Apply(OK()); res.To.Name != c.to || res.Branch != "then" {
			t.Errorf("%s %v: row %s leads to %s (%s), want %s", c.state, f, c.row, res.To.Name, res.Branch, c.to)
		}
		if dd := s.DecideDirect(c.state, f); dd == nil || dd.Row != d.Row {
			t.Errorf("%s %v: DecideDirect disagrees with Decide", c.state, f)
		}
	}
}

func TestDecideErrors(t *testing.T) {
	s := mustLoadSet(t, "door", "testdata/door.yaml")
	ctx := context.Background()

	f := s.NewFacts()
	if err := f.Set("push", "Push"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, "Closed", f); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("missing fact: err = %v, want it to name locked", err)
	}
	if got := f.Missing(); len(got) != 1 || got[0] != "locked" {
		t.Errorf("Missing() = %v", got)
	}
	if err := f.Set("push", "Pull"); err == nil {
		t.Error("Set accepted an unknown value")
	}
	if err := f.Set("colour", "red"); err == nil {
		t.Error("Set accepted an unknown fact")
	}

	f = doorFacts(t, s, false, "None")
	if _, err := s.Decide(ctx, "Ajar", f); err == nil {
		t.Error("Decide accepted an unknown state")
	}
	// A terminal state has no rows.
	if _, err := s.Decide(ctx, "Gone", f); !errors.Is(err, ErrNoDecision) {
		t.Errorf("terminal state: err = %v, want ErrNoDecision", err)
	}
	if d := s.DecideDirect("Gone", f); d != nil {
		t.Errorf("DecideDirect in terminal state = %v", d.Row.ID)
	}
	other := mustLoadSet(t, "door", "testdata/door.yaml")
	if _, err := s.Decide(ctx, "Closed", doorFacts(t, other, false, "None")); err == nil {
		t.Error("Decide accepted facts of another set")
	}
}

func TestDecideOverlapFailsCleanly(t *testing.T) {
	// Loading does not check; a table whose rows overlap must give an error
	// when both match, not crash.
	s := mustLoadSet(t, "overlap", "testdata/broken/overlap.yaml")
	_, err := s.Decide(context.Background(), "Closed", doorFacts(t, s, false, "Push"))
	if err == nil || !strings.Contains(err.Error(), "more than one row") {
		t.Fatalf("err = %v", err)
	}
}

// branches is a door whose opening row has every result branch.
const branches = `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: branches}
spec:
  registry: door
  initialState: Closed
  statusFields:
    - {name: openedBy, description: who opened the door}
  states:
    - {name: Closed, description: shut}
    - {name: Opening, description: being opened}
    - {name: Open, description: open}
    - {name: Broken, description: broken}
    - {name: Gone, description: removed, terminal: true}
  facts:
    - {name: locked, type: bool, description: the lock is engaged}
    - {name: push, type: enum, description: what the person does, values: [{name: None}, {name: Push}, {name: Remove}]}
  rows:
    - id: B1
      observed: o
      trigger: t
      action: a
      resulting: r
      from: [Closed, Opening]
      when: {push: Push}
      do: [Unlock, Swing]
      then:
        state: Open
        status: {openedBy: "{detail}"}
        conditions:
          - {type: Open, status: "True", reason: Opened, message: "opened: {detail}"}
          - {type: Locked, status: "False", reason: Unlocked, message: "no detail here"}
      inProgress:
        state: Opening
        requeueAfter: 5s
        conditions:
          - {type: Open, status: "False", reason: Opening, message: "waiting for {detail}"}
      onFailure:
        state: Broken
        requeueAfter: 1m
        retry: true
        conditions:
          - {type: Open, status: "False", reason: Jammed, message: "failed: {detail}"}
    - id: B2
      observed: o
      trigger: t
      action: a
      resulting: r
      from: [Closed, Opening, Open, Broken]
      when: {push: [None, Remove]}
      do: [Swing]
      then: {state: Gone}
    - id: B3
      observed: o
      trigger: t
      action: a
      resulting: r
      from: [Open, Broken]
      when: {push: Push}
      then: {}
`

func TestResolveBranches(t *testing.T) {
	s := mustLoadBytes(t, "branches", branches)
	d, err := s.Decide(context.Background(), "Closed", doorFacts(t, s, false, "Push"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Row.ID != "B1" {
		t.Fatalf("row %s", d.Row.ID)
	}

	res := d.Apply(OKf("by %s", "alice"))
	if res.Branch != "then" || res.To.Name != "Open" || !res.Changed(d.From) || res.Retry || res.RequeueAfter != 0 {
		t.Errorf("then: %+v", res)
	}
	if len(res.Conditions) != 2 || res.Conditions[0].Message != "opened: by alice" || res.Conditions[1].Message != "no detail here" {
		t.Errorf("then conditions: %+v", res.Conditions)
	}
	if res.Status["openedBy"] != "{detail}" || len(res.StatusOrder) != 1 {
		t.Errorf("then status: %v %v", res.Status, res.StatusOrder)
	}
	// Resolve must not write into the row.
	if d.Row.Then.Conditions[0].Message != "opened: {detail}" {
		t.Errorf("Resolve changed the row: %q", d.Row.Then.Conditions[0].Message)
	}

	res = d.Apply(Wait("the motor"))
	if res.Branch != "inProgress" || res.To.Name != "Opening" || res.RequeueAfter != 5*time.Second || res.Retry {
		t.Errorf("inProgress: %+v", res)
	}
	if len(res.Conditions) != 1 || res.Conditions[0].Message != "waiting for the motor" || res.Conditions[0].Reason != "Opening" {
		t.Errorf("inProgress conditions: %+v", res.Conditions)
	}

	res = d.Apply(Failf("hinge %d snapped", 2))
	if res.Branch != "onFailure" || res.To.Name != "Broken" || !res.Retry || res.RequeueAfter != time.Minute {
		t.Errorf("onFailure: %+v", res)
	}
	if len(res.Conditions) != 1 || res.Conditions[0].Message != "failed: hinge 2 snapped" {
		t.Errorf("onFailure conditions: %+v", res.Conditions)
	}
	if res.Outcome.Err == nil || res.Outcome.Status != Failed {
		t.Errorf("onFailure outcome: %+v", res.Outcome)
	}

	// The same row from another state: then still leads to Open.
	d2, err := s.Decide(context.Background(), "Opening", doorFacts(t, s, true, "Push"))
	if err != nil || d2.Row.ID != "B1" || d2.Apply(OK()).To.Name != "Open" {
		t.Errorf("from Opening: %v %v", d2, err)
	}

	// Without inProgress or onFailure the defaults apply: stay, and requeue
	// or retry.
	s = mustLoadSet(t, "door", "testdata/door.yaml")
	d, err = s.Decide(context.Background(), "Closed", doorFacts(t, s, false, "Push"))
	if err != nil {
		t.Fatal(err)
	}
	res = d.Apply(Wait("still swinging"))
	if res.Branch != "inProgress" || res.To != d.From || res.Changed(d.From) || res.RequeueAfter != DefaultInProgressRequeue || res.Retry || len(res.Conditions) != 0 {
		t.Errorf("default inProgress: %+v", res)
	}
	res = d.Apply(Fail(errors.New("stuck")))
	if res.Branch != "onFailure" || res.To != d.From || !res.Retry || res.RequeueAfter != 0 || len(res.Conditions) != 0 {
		t.Errorf("default onFailure: %+v", res)
	}
	// then without a state keeps the state.
	d, _ = s.Decide(context.Background(), "Closed", doorFacts(t, s, false, "None"))
	if res := d.Apply(OK()); res.To.Name != "Closed" || res.RequeueAfter != 30*time.Second {
		t.Errorf("C2: %+v", res)
	}
}

// doorEnv is what the door registry's observers and actions see.
type doorEnv struct {
	locked bool
	push   string
	swing  Outcome
	calls  *[]string
}

func doorRegistry(withSwing bool) *Registry[doorEnv] {
	reg := NewRegistry[doorEnv]("door")
	reg.Bool("locked", func(e doorEnv) bool { return e.locked })
	reg.Enum("push", func(e doorEnv) string { return e.push })
	reg.StatusField("openedBy", "Who opened the door.", func(doorEnv, string) {})
	if withSwing {
		reg.Action("Swing", "Swing the door.", func(_ context.Context, e doorEnv) Outcome {
			if e.calls != nil {
				*e.calls = append(*e.calls, "Swing")
			}
			return e.swing
		})
	}
	return reg
}

func TestRunnerStep(t *testing.T) {
	s := mustLoadSet(t, "door", "testdata/door.yaml")
	r, err := NewRunner(s, doorRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if r.Set() != s {
		t.Error("Set()")
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := t0
	r.SetClock(func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	var got1, got2 []Trace
	r.Subscribe(func(tr Trace) { got1 = append(got1, tr) })
	r.Subscribe(func(tr Trace) { got2 = append(got2, tr) })

	var calls []string
	env := doorEnv{push: "Push", swing: OKf("by %s", "bob"), calls: &calls}
	st, err := stepPublish(r, context.Background(), "default/front", "Closed", env)
	if err != nil {
		t.Fatal(err)
	}
	if st.Decision.Row.ID != "C1" || st.Result.To.Name != "Open" || st.Result.Conditions[0].Message != "opened: by bob" {
		t.Errorf("step: row %s to %s %+v", st.Decision.Row.ID, st.Result.To.Name, st.Result.Conditions)
	}
	if len(calls) != 1 {
		t.Errorf("Swing ran %d times", len(calls))
	}
	want := Trace{Set: "door", Table: "door", Row: "C1", Object: "default/front", From: "Closed", To: "Open",
		Action: "Swing", Outcome: Done, Message: "by bob", Reason: "Opened", Note: "opened: by bob",
		Time: t0.Add(time.Millisecond), Duration: 3 * time.Millisecond,
		// Each tick of the clock is 1ms: the action's own time is one.
		Actions: []ActionRun{{Name: "Swing", Duration: time.Millisecond}}}
	if !reflect.DeepEqual(st.Trace, want) {
		t.Errorf("trace\n got %+v\nwant %+v", st.Trace, want)
	}
	if len(got1) != 1 || len(got2) != 1 || !reflect.DeepEqual(got1[0], want) || !reflect.DeepEqual(got2[0], want) {
		t.Errorf("subscribers got %+v and %+v", got1, got2)
	}

	// A row without actions: Done, no action named, no reason.
	st, err = stepPublish(r, context.Background(), "default/front", "Closed", doorEnv{locked: true, push: "None", calls: &calls})
	if err != nil {
		t.Fatal(err)
	}
	if tr := st.Trace; tr.Row != "C2" || tr.Action != "" || tr.Outcome != Done || tr.To != "Closed" || tr.Reason != "" {
		t.Errorf("C2 trace %+v", tr)
	}
	if len(calls) != 1 {
		t.Errorf("Swing ran for C2")
	}

	// An action that waits: the row has no inProgress, so the state stays.
	st, err = stepPublish(r, context.Background(), "default/front", "Open", doorEnv{push: "None", swing: Wait("hinge %s", "oiling"), calls: &calls})
	if err != nil {
		t.Fatal(err)
	}
	if tr := st.Trace; tr.Row != "O1" || tr.Outcome != InProgress || tr.To != "Open" || tr.Message != "hinge oiling" || tr.Action != "Swing" {
		t.Errorf("O1 waiting trace %+v", tr)
	}
	if st.Result.RequeueAfter != DefaultInProgressRequeue {
		t.Errorf("O1 waiting requeue %v", st.Result.RequeueAfter)
	}

	// A failing action.
	st, err = stepPublish(r, context.Background(), "default/front", "Open", doorEnv{push: "None", swing: Failf("stuck"), calls: &calls})
	if err != nil {
		t.Fatal(err)
	}
	if tr := st.Trace; tr.Outcome != Failed || tr.To != "Open" || tr.Message != "stuck" || !st.Result.Retry {
		t.Errorf("O1 failing trace %+v", tr)
	}
	// An action that returns the zero Outcome counts as done.
	st, err = stepPublish(r, context.Background(), "default/front", "Open", doorEnv{push: "None", calls: &calls})
	if err != nil {
		t.Fatal(err)
	}
	if tr := st.Trace; tr.Outcome != Done || tr.To != "Closed" {
		t.Errorf("O1 zero outcome trace %+v", tr)
	}
	if len(got1) != 5 || len(got2) != 5 {
		t.Errorf("subscribers got %d and %d traces, want 5", len(got1), len(got2))
	}

	// Observer returning a value outside the domain.
	if _, err := stepPublish(r, context.Background(), "x", "Closed", doorEnv{push: "Kick"}); err == nil || !strings.Contains(err.Error(), "Kick") {
		t.Errorf("bad observer value: err = %v", err)
	}
	// Terminal state: no decision.
	if _, err := stepPublish(r, context.Background(), "x", "Gone", doorEnv{push: "None"}); !errors.Is(err, ErrNoDecision) {
		t.Errorf("terminal: err = %v", err)
	}
}

func TestRunnerStopsAtFirstUnfinishedAction(t *testing.T) {
	s := mustLoadBytes(t, "branches", branches)
	var calls []string
	reg := NewRegistry[doorEnv]("door")
	reg.Bool("locked", func(e doorEnv) bool { return e.locked })
	reg.Enum("push", func(e doorEnv) string { return e.push })
	reg.StatusField("openedBy", "", func(doorEnv, string) {})
	reg.Action("Unlock", "", func(_ context.Context, e doorEnv) Outcome {
		calls = append(calls, "Unlock")
		return e.swing
	}, MayWait())
	reg.Action("Swing", "", func(context.Context, doorEnv) Outcome {
		calls = append(calls, "Swing")
		return OK()
	})
	r, err := NewRunner(s, reg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := stepPublish(r, context.Background(), "x", "Closed", doorEnv{push: "Push", swing: Wait("key turning")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(calls, ",") != "Unlock" || st.Trace.Action != "Unlock" || st.Trace.To != "Opening" || st.Trace.Reason != "Opening" {
		t.Errorf("calls %v trace %+v", calls, st.Trace)
	}
	calls = nil
	st, err = stepPublish(r, context.Background(), "x", "Opening", doorEnv{push: "Push", swing: OK()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(calls, ",") != "Unlock,Swing" || st.Trace.Action != "Unlock,Swing" || st.Trace.To != "Open" {
		t.Errorf("calls %v trace %+v", calls, st.Trace)
	}
}

func TestNewRunnerRefusesIncompleteRegistry(t *testing.T) {
	s := mustLoadSet(t, "door", "testdata/door.yaml")
	_, err := NewRunner(s, doorRegistry(false))
	if err == nil || !strings.Contains(err.Error(), "action Swing") || !strings.Contains(err.Error(), "row C1") {
		t.Errorf("missing action: err = %v", err)
	}
	reg := NewRegistry[doorEnv]("door")
	reg.Enum("push", func(e doorEnv) string { return e.push })
	reg.Action("Swing", "", func(context.Context, doorEnv) Outcome { return OK() })
	_, err = NewRunner(s, reg)
	if err == nil || !strings.Contains(err.Error(), "fact locked") {
		t.Errorf("missing observer: err = %v", err)
	}
}

func TestRegistryCatalog(t *testing.T) {
	reg := doorRegistry(true)
	reg.Guard("hasKey", "The person holds the key.", []string{"locked"}, func(doorEnv) bool { return true })
	cat := reg.Catalog()
	if cat.Name != "door" || len(cat.Entries) != 5 {
		t.Fatalf("catalog %+v", cat)
	}
	if e, ok := cat.Lookup(EntryGuard, "hasKey"); !ok || len(e.Reads) != 1 {
		t.Errorf("guard entry %+v %v", e, ok)
	}
	if _, ok := cat.Lookup(EntryStatus, "openedBy"); !ok {
		t.Errorf("no status setter entry in %+v", cat)
	}
	if _, ok := cat.Lookup(EntryAction, "Swing"); !ok {
		t.Error("no Swing")
	}
	if _, ok := cat.Lookup(EntryFact, "Swing"); ok {
		t.Error("Swing found as a fact")
	}
	defer func() {
		if recover() == nil {
			t.Error("registering Swing twice did not panic")
		}
	}()
	reg.Action("Swing", "", nil)
}

// firstPolicy has overlapping rows; under hitPolicy first the earliest
// matching row in document order must win, also in the compiled machine.
const firstPolicy = `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: first}
spec:
  initialState: A
  hitPolicy: first
  states:
    - {name: A, description: a}
    - {name: B, description: b}
    - {name: Z, description: z, terminal: true}
  facts:
    - {name: x, type: bool, description: x}
    - {name: y, type: enum, description: y, values: [{name: p}, {name: q}, {name: r}]}
  rows:
    - {id: R1, observed: o, trigger: t, action: a, resulting: r, from: [A], when: {x: true, y: p}, then: {state: Z}}
    - {id: R2, observed: o, trigger: t, action: a, resulting: r, from: [A, B], when: {y: [p, q]}, then: {state: B}}
    - {id: R3, observed: o, trigger: t, action: a, resulting: r, from: [A], when: {x: true}, then: {}}
    - {id: R4, observed: o, trigger: t, action: a, resulting: r, from: ["*"], then: {state: A}}
`

func TestCompileHitPolicyFirst(t *testing.T) {
	s := mustLoadBytes(t, "first", firstPolicy)
	if fs := Check(&Library{Sets: []*TableSet{s}}, nil); len(fs) > 0 {
		t.Fatalf("first-policy table has findings:\n%s", lines(fs))
	}
	ctx := context.Background()
	for _, c := range []struct {
		state, x, y, row string
	}{
		{"A", "true", "p", "R1"},
		{"A", "false", "p", "R2"},
		{"A", "true", "q", "R2"},
		{"A", "true", "r", "R3"},
		{"A", "false", "r", "R4"},
		{"B", "true", "p", "R2"},
		{"B", "false", "r", "R4"},
	} {
		f := s.NewFacts()
		if err := f.Set("x", c.x); err != nil {
			t.Fatal(err)
		}
		if err := f.Set("y", c.y); err != nil {
			t.Fatal(err)
		}
		d, err := s.Decide(ctx, c.state, f)
		if err != nil {
			t.Errorf("%s %v: %v", c.state, f, err)
			continue
		}
		if d.Row.ID != c.row {
			t.Errorf("%s %v: row %s, want %s", c.state, f, d.Row.ID, c.row)
		}
		if dd := s.DecideDirect(c.state, f); dd == nil || dd.Row.ID != c.row {
			t.Errorf("%s %v: DecideDirect disagrees", c.state, f)
		}
	}
}

func TestSetsConsultTablesInOrder(t *testing.T) {
	// masked_across only warns: emergency is consulted before entrance.
	s := mustLoadSet(t, "masked_across", "testdata/broken/masked_across.yaml")
	ctx := context.Background()
	d, err := s.Decide(ctx, "Closed", doorFacts(t, s, false, "Remove"))
	if err != nil || d.Table.Name != "emergency" || d.Row.ID != "E1" {
		t.Fatalf("removal: %v %v", d, err)
	}
	d, err = s.Decide(ctx, "Closed", doorFacts(t, s, false, "Push"))
	if err != nil || d.Table.Name != "entrance" || d.Row.ID != "C1" {
		t.Fatalf("push: %v %v", d, err)
	}
	if !s.Table("emergency").Covers(s.State("Closed")) || s.Table("emergency").Covers(s.State("Open")) {
		t.Error("Covers")
	}
}

func TestRowHelpers(t *testing.T) {
	s := mustLoadSet(t, "door", "testdata/door.yaml")
	r := s.Row("door", "C3")
	if r == nil || r.Table().Name != "door" || len(r.FromStates()) != 1 || r.FromStates()[0].Name != "Closed" {
		t.Fatalf("row C3: %+v", r)
	}
	f := doorFacts(t, s, true, "Remove")
	m, got, ok := r.FirstMismatch(f)
	if !ok || m.Fact != "locked" || got != "true" {
		t.Errorf("FirstMismatch = %v %q %v", m, got, ok)
	}
	if r.Matches(f) {
		t.Error("C3 matches a locked door")
	}
	f = doorFacts(t, s, false, "Remove")
	if _, _, ok := r.FirstMismatch(f); ok || !r.Matches(f) {
		t.Error("C3 does not match an unlocked removal")
	}
	if g := f.Clone(); g.String() != "locked=false push=Remove" || g.Get("push") != "Remove" || g.Map()["locked"] != "false" {
		t.Errorf("facts helpers: %s", g)
	}
}

// TestRunnerConcurrent fires one compiled set from many goroutines; run
// with -race.
func TestRunnerConcurrent(t *testing.T) {
	s := mustLoadSet(t, "door", "testdata/door.yaml")
	r, err := NewRunner(s, doorRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	count := 0
	r.Subscribe(func(Trace) { mu.Lock(); count++; mu.Unlock() })
	cases := []struct {
		state string
		env   doorEnv
		to    string
	}{
		{"Closed", doorEnv{push: "Push", swing: OK()}, "Open"},
		{"Closed", doorEnv{locked: true, push: "Push"}, "Closed"},
		{"Closed", doorEnv{push: "Remove"}, "Gone"},
		{"Open", doorEnv{push: "None", swing: OK()}, "Closed"},
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				c := cases[(g+i)%len(cases)]
				st, err := stepPublish(r, context.Background(), "x", c.state, c.env)
				if err != nil {
					t.Error(err)
					return
				}
				if st.Result.To.Name != c.to {
					t.Errorf("%s %+v: to %s, want %s", c.state, c.env, st.Result.To.Name, c.to)
					return
				}
			}
		})
	}
	wg.Wait()
	if count != 8*200 {
		t.Errorf("%d traces, want %d", count, 8*200)
	}
}

func TestActionsSeeWhichActionTheyRunAs(t *testing.T) {
	s := mustLoadBytes(t, "branches", branches)
	var seen []RunningAction
	reg := NewRegistry[doorEnv]("door")
	reg.Bool("locked", func(e doorEnv) bool { return e.locked })
	reg.Enum("push", func(e doorEnv) string { return e.push })
	reg.StatusField("openedBy", "", func(doorEnv, string) {})
	note := func(ctx context.Context) {
		a, ok := RunningActionOf(ctx)
		if !ok {
			t.Error("an action's context names no running action")
		}
		seen = append(seen, a)
	}
	reg.Action("Unlock", "", func(ctx context.Context, _ doorEnv) Outcome { note(ctx); return OK() }, WritesThrough())
	reg.Action("Swing", "", func(ctx context.Context, _ doorEnv) Outcome { note(ctx); return OK() }, Pure())
	r, err := NewRunner(s, reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stepPublish(r, context.Background(), "ns/front", "Opening", doorEnv{push: "Push"}); err != nil {
		t.Fatal(err)
	}
	want := []RunningAction{
		{Set: "branches", Object: "ns/front", Action: "Unlock", WritesThrough: true},
		{Set: "branches", Object: "ns/front", Action: "Swing", Pure: true},
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("actions saw %+v, want %+v", seen, want)
	}
	if _, ok := RunningActionOf(context.Background()); ok {
		t.Error("a context no action was handed names a running action")
	}
}

// Named details reach the messages of the branch taken: every action's,
// a later action's value winning, and {detail} stays the last action's
// message.
func TestNamedDetailsReachMessages(t *testing.T) {
	const table = `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: named}
spec:
  registry: door
  initialState: Closed
  states:
    - {name: Closed, description: shut}
    - {name: Open, description: open}
    - {name: Gone, description: removed, terminal: true}
  facts:
    - {name: locked, type: bool, description: the lock is engaged}
    - {name: push, type: enum, description: what the person does, values: [{name: None}, {name: Push}, {name: Remove}]}
  rows:
    - id: N1
      observed: o
      trigger: t
      action: a
      resulting: r
      from: [Closed]
      when: {push: Push}
      do: [Unlock, Swing]
      then:
        state: Open
        conditions:
          - {type: Open, status: "True", reason: Opened, message: "opened {side} with {key} ({detail})"}
    - id: N2
      observed: o
      trigger: t
      action: a
      resulting: r
      from: [Closed, Open]
      when: {push: [None, Remove]}
      then: {state: Gone}
    - id: N3
      observed: o
      trigger: t
      action: a
      resulting: r
      from: [Open]
      when: {push: Push}
      then: {}
`
	s := mustLoadBytes(t, "named", table)
	reg := NewRegistry[doorEnv]("door")
	reg.Bool("locked", func(e doorEnv) bool { return e.locked })
	reg.Enum("push", func(e doorEnv) string { return e.push })
	reg.Action("Unlock", "", func(context.Context, doorEnv) Outcome {
		return OKf("unlocked").With("key", "the brass key").With("side", "inwards")
	}, Offers("key", "side"))
	reg.Action("Swing", "", func(context.Context, doorEnv) Outcome {
		return OKf("swung").With("side", "outwards")
	}, Offers("side"))
	lib, _ := LoadBytes("named.yaml", []byte(table))
	if fs := Check(lib, map[string]*Catalog{"door": reg.Catalog()}); fs.HasErrors() {
		t.Fatalf("findings: %s", fs)
	}
	r, err := NewRunner(s, reg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := stepPublish(r, context.Background(), "x", "Closed", doorEnv{push: "Push"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Result.Conditions[0].Message, "opened outwards with the brass key (swung)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got := st.Decision.Row.Then.Conditions[0].Message; got != "opened {side} with {key} ({detail})" {
		t.Errorf("the row changed: %q", got)
	}
	// A detail no action gave reads as empty; braces in what an action
	// says are its own words.
	res := st.Decision.Apply(OKf("swung {key}"))
	if got, want := res.Conditions[0].Message, "opened  with  (swung {key})"; got != want {
		t.Errorf("message without details %q, want %q", got, want)
	}
}
