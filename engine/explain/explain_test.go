package explain

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/krtt-dev/krtt/engine"
)

// verdicts renders OtherRows as "table/row verdict: reason" lines.
func verdicts(vs []RowVerdict, most int) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Table.Name+"/"+v.Row.ID+" "+string(v.Verdict)+": "+v.Reason(most))
	}
	return strings.Join(out, "\n")
}

func TestColumnsAndResultsDoor(t *testing.T) {
	s := mustLoadSet(t, "door", "../testdata/door.yaml")
	d, err := s.Decide(context.Background(), "Closed", doorFacts(t, s, false, "Push"))
	if err != nil || d.Row.ID != "C1" {
		t.Fatalf("decide: %v %+v", err, d)
	}
	if got, want := strings.Join(ColumnsOf(d.Row).Lines(), "\n"), `Observed Status:       Door closed
Desired Spec:          Door open
Trigger / Condition:   Pushed, not locked
Reconciliation Action: Swing it open
Resulting Status:      Door open`; got != want {
		t.Errorf("columns:\n%s\nwant:\n%s", got, want)
	}
	if got := (Columns{Cites: "seed 3", Desired: " "}).Lines(); got[0] != "cites:                 seed 3" || got[2] != "Desired Spec:          -" {
		t.Errorf("cites and empty desired: %q", got)
	}

	var lines []string
	for _, r := range Results(d) {
		lines = append(lines, r.Line())
		lines = append(lines, r.Details()...)
	}
	if got, want := strings.Join(lines, "\n"), `then (every action done):      Closed -> Open
condition Open=True reason Opened message "opened: {detail}"
inProgress (an action waits):  stays Closed; requeue after 10s (default: the row gives no inProgress)
onFailure (an action failed):  stays Closed; return an error (work queue back-off) (default: the row gives no onFailure)`; got != want {
		t.Errorf("results:\n%s\nwant:\n%s", got, want)
	}

	// C2 runs no actions: only then arises, and it requeues.
	d, err = s.Decide(context.Background(), "Closed", doorFacts(t, s, false, "None"))
	if err != nil || d.Row.ID != "C2" {
		t.Fatalf("decide: %v %+v", err, d)
	}
	res := Results(d)
	if len(res) != 3 || res[0].Changed() || res[0].RequeueAfter != 30*time.Second || !res[0].Given {
		t.Fatalf("C2 results: %+v", res)
	}
	if got, want := res[0].Line(), "then (every action done):      stays Closed; requeue after 30s"; got != want {
		t.Errorf("C2 then: %q, want %q", got, want)
	}
	for _, r := range res[1:] {
		if r.Arises || r.Given || !strings.HasSuffix(r.Line(), " does not arise: the row runs no actions") {
			t.Errorf("C2 %s: %+v %q", r.Branch, r, r.Line())
		}
	}
}

func TestOtherRowsDoor(t *testing.T) {
	s := mustLoadSet(t, "door", "../testdata/door.yaml")
	f := doorFacts(t, s, true, "Push")
	d, err := s.Decide(context.Background(), "Closed", f)
	if err != nil || d.Row.ID != "C4" {
		t.Fatalf("decide: %v %+v", err, d)
	}
	// C3 wants push=Remove and locked=false: both facts are reported, in the
	// order the row writes them; Reason(1) names only the first.
	if got, want := verdicts(RowVerdicts(s, s.State("Closed"), f, d), 0), `door/C1 mismatch: locked=true, the row wants locked=false
door/C2 mismatch: push=Push, the row wants push=None
door/C3 mismatch: push=Push, the row wants push=Remove; locked=true, the row wants locked=false`; got != want {
		t.Errorf("other rows:\n%s\nwant:\n%s", got, want)
	}
	if got := verdicts(RowVerdicts(s, s.State("Closed"), f, d), 1); !strings.HasSuffix(got, "door/C3 mismatch: push=Push, the row wants push=Remove") {
		t.Errorf("other rows, first mismatch only:\n%s", got)
	}
	for _, v := range RowVerdicts(s, s.State("Closed"), f, d) {
		m, got, ok := v.Row.FirstMismatch(f)
		if !ok || v.Mismatches[0].Match.Fact != m.Fact || v.Mismatches[0].Value != got {
			t.Errorf("%s: Mismatches %+v disagree with FirstMismatch %v %q", v.Row.ID, v.Mismatches, m, got)
		}
	}
	// O1 applies only in Open: no row but the one that fires is listed there.
	fo := doorFacts(t, s, false, "None")
	if d, err := s.Decide(context.Background(), "Open", fo); err != nil || len(RowVerdicts(s, s.State("Open"), fo, d)) != 0 {
		t.Errorf("Open: %+v", d)
	}
}

// TestOtherRowsFirstAndGuards covers masked rows of a hitPolicy first table,
// guards as guard: facts, unset facts and the verdicts without a decision.
func TestOtherRowsFirstAndGuards(t *testing.T) {
	s := mustLoadBytes(t, "gate", `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata:
  name: gate
spec:
  registry: gate
  initialState: Shut
  hitPolicy: first
  states:
    - name: Shut
    - name: Up
  facts:
    - {name: car, type: bool, description: A car waits.}
    - name: light
      type: enum
      description: The traffic light.
      values: [{name: Red}, {name: Green}, {name: Off}]
  rows:
    - {id: G1, observed: o, trigger: t, action: a, resulting: r, from: [Shut], when: {car: true}, guards: [paid], do: [Lift], then: {state: Up}}
    - {id: G2, observed: o, trigger: t, action: a, resulting: r, from: [Shut], when: {car: true}, then: {requeueAfter: 1m}}
    - {id: G3, observed: o, trigger: t, action: a, resulting: r, from: [Shut], when: {light: [Red, Off]}, then: {}}
    - {id: G4, observed: o, trigger: t, action: a, resulting: r, from: [Shut], then: {}}
    - {id: U1, observed: o, trigger: t, action: a, resulting: r, from: [Up], then: {state: Shut}}
`)
	g := s.Table("gate").Row("G1")
	if got := g.WhenClause(); len(got) != 2 || got[1].Fact != engine.GuardFactPrefix+"paid" || MatchText(got[1]) != "guard:paid=true" || len(g.When) != 1 {
		t.Errorf("G1 when clause: %+v", got)
	}
	if got := MatchText(s.Table("gate").Row("G3").When[0]); got != "light in [Red, Off]" {
		t.Errorf("MatchText: %s", got)
	}

	f := s.NewFacts()
	for k, v := range map[string]string{"car": "true", "light": "Green", engine.GuardFactPrefix + "paid": "false"} {
		if err := f.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	d, err := s.Decide(context.Background(), "Shut", f)
	if err != nil || d.Row.ID != "G2" {
		t.Fatalf("decide: %v %+v", err, d)
	}
	if got, want := verdicts(RowVerdicts(s, s.State("Shut"), f, d), 0), `gate/G1 mismatch: guard paid is false, the row needs it true
gate/G3 mismatch: light=Green, the row wants light in [Red, Off]
gate/G4 masked: matches too, but row G2 comes first (hitPolicy first)`; got != want {
		t.Errorf("other rows:\n%s\nwant:\n%s", got, want)
	}

	// Without a decision (facts left unset) a matching row just matches too.
	u := s.NewFacts()
	if got, want := verdicts(RowVerdicts(s, s.State("Shut"), u, nil), 0), `gate/G1 mismatch: car=(unset), the row wants car=true; guard paid is (unset), the row needs it true
gate/G2 mismatch: car=(unset), the row wants car=true
gate/G3 mismatch: light=(unset), the row wants light in [Red, Off]
gate/G4 masked: matches too`; got != want {
		t.Errorf("other rows without a decision:\n%s\nwant:\n%s", got, want)
	}
}

// drainingNode are the shipped machine set's facts of a Machine whose drain
// is in progress.
const drainingNode = `machineFound=true apiError=false hasFinalizer=true deleting=true paused=false
cluster=Found ownerAndLabelsSet=true dataSecretNameSet=true bootstrapConfig=Ready infrastructure=Provisioned
wasProvisioned=true hasProviderID=true hasNodeRef=true node=Found controlPlane=ExternallyManaged controlPlaneMachine=false otherControlPlaneMachines=false bootstrapControlledByOther=false infrastructureControlledByOther=false bootstrapAdoptable=false infrastructureAdoptable=false providerIDMismatch=false infrastructureDeleting=false nodeUnreachable=false providerFailure=false
preDrainHooks=false excludeDrain=false drainTimedOut=false excludeVolumeWait=false volumeWaitTimedOut=false
preTerminateHooks=false nodeDeletionTimedOut=false nodeHealth=Healthy healthTimedOut=false nodeConditionsGraceTimedOut=false creationTimedOut=false forceDeletion=No onDrainTimeout=Skip workloadCluster=SelfHosted availabilityPending=false`

func TestOtherRowsShipped(t *testing.T) {
	lib, fs := engine.LoadPaths("../../transitions")
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load ../../transitions:\n%v", fs)
	}
	s := lib.TableSet("machine")
	if s == nil {
		t.Fatal("no set machine")
	}
	st := s.State("DrainingNode")

	f := factsOf(t, s, drainingNode)
	d, err := s.Decide(context.Background(), st.Name, f)
	if err != nil || d.Row.ID != "D05" {
		t.Fatalf("decide: %v %+v", err, d)
	}
	vs := RowVerdicts(s, st, f, d)
	byRow := map[string]RowVerdict{}
	for _, v := range vs {
		if !v.Row.AppliesIn(st) || v.Row == d.Row {
			t.Errorf("%s listed: it does not apply or it fired", v.Row.ID)
		}
		if v.Verdict != VerdictMismatch || len(v.Mismatches) == 0 {
			t.Errorf("%s: %s %+v, want a mismatch: D05 is the only row that matches", v.Row.ID, v.Verdict, v.Mismatches)
		}
		byRow[v.Row.ID] = v
	}
	// E02 wants apiError=true and deleting=false: both are reported.
	if e := byRow["E02"]; len(e.Mismatches) != 2 || e.Mismatches[0].Match.Fact != "apiError" || e.Mismatches[1].Match.Fact != "deleting" {
		t.Errorf("E02 mismatches %+v, want apiError and deleting", e.Mismatches)
	} else if one, all := e.Reason(1), e.Reason(0); !strings.HasPrefix(all, one+"; ") || strings.Contains(one, "deleting") {
		t.Errorf("E02 reasons: %q, %q", one, all)
	}

	// An API error decides in the errors table, consulted first: the
	// deletion rows are not consulted, and D05, which still matches, is
	// shadowed.
	f = factsOf(t, s, drainingNode, "apiError=true")
	d, err = s.Decide(context.Background(), st.Name, f)
	if err != nil || d.Table.Name != "machine-errors" {
		t.Fatalf("decide with apiError: %v %+v", err, d)
	}
	counts := map[Verdict]int{}
	for _, v := range RowVerdicts(s, st, f, d) {
		counts[v.Verdict]++
		switch {
		case v.Table == d.Table && v.Verdict != VerdictMismatch:
			t.Errorf("%s of the deciding table: %s", v.Row.ID, v.Verdict)
		case v.Table.Name == "machine-workload-cluster":
			// Consulted before the errors table: its rows did not match.
			if v.Verdict != VerdictMismatch {
				t.Errorf("%s of a table consulted earlier: %s", v.Row.ID, v.Verdict)
			}
		case v.Table != d.Table && v.Decided != d.Table:
			t.Errorf("%s: decided by %v, want %s", v.Row.ID, v.Decided, d.Table.Name)
		case v.Row.ID == "D05":
			if want := "shadowed: it would match, but table machine-errors, earlier in the set, decided"; v.Verdict != VerdictShadowed || v.Reason(0) != want {
				t.Errorf("D05: %s %q", v.Verdict, v.Reason(0))
			}
		case v.Table != d.Table:
			if v.Verdict != VerdictNotConsulted || !strings.HasPrefix(v.Reason(0), "not consulted: table machine-errors, earlier in the set, decided (it would not match anyway: ") {
				t.Errorf("%s: %s %q", v.Row.ID, v.Verdict, v.Reason(0))
			}
		}
	}
	if counts[VerdictShadowed] != 1 || counts[VerdictNotConsulted] == 0 {
		t.Errorf("verdicts %v, want one shadowed row and not-consulted ones", counts)
	}

	// Every result of the firing row resolves to a state of the set.
	for _, r := range Results(d) {
		if s.State(r.To) == nil || r.From != st.Name {
			t.Errorf("%s: %+v", r.Branch, r)
		}
	}
}
