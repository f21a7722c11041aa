package engine

import (
	"context"
	"strings"
	"testing"
)

type parcel struct {
	fragile bool
	size    string
}

func parcelRegistry() *Registry[parcel] {
	reg := NewRegistry[parcel]("parcel")
	reg.Bool("fragile", func(p parcel) bool { return p.fragile })
	reg.Enum("size", func(p parcel) string { return p.size })
	return reg
}

func loadParcel(t *testing.T) (*Library, *DecisionTable) {
	t.Helper()
	lib, fs := LoadPaths("testdata/decision/parcel.yaml")
	if fs.HasErrors() {
		t.Fatalf("load: %v", fs)
	}
	d := lib.Decision("parcel")
	if d == nil {
		t.Fatal("decision table parcel not loaded")
	}
	return lib, d
}

func TestDecisionTableLoadsAndChecksClean(t *testing.T) {
	lib, d := loadParcel(t)
	if got := Check(lib, map[string]*Catalog{"parcel": parcelRegistry().Catalog()}); len(got) != 0 {
		t.Fatalf("want no findings, got:\n%v", got)
	}
	if d.HitPolicy != HitFirst || len(d.Rows) != 3 || d.Verdict("Hand") == nil {
		t.Fatalf("unexpected table: %+v", d)
	}
}

func TestDecisionTableDecidesFirstMatch(t *testing.T) {
	_, d := loadParcel(t)
	dec, err := NewDecider(d, parcelRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in        parcel
		row, verd string
	}{
		{parcel{fragile: true, size: "Large"}, "P1", "Hand"},
		{parcel{size: "Large"}, "P2", "Hand"},
		{parcel{size: "Small"}, "P3", "Post"},
	} {
		got, err := dec.Decide(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Row.ID != tc.row || got.Verdict() != tc.verd {
			t.Errorf("%+v: got %s/%s, want %s/%s", tc.in, got.Row.ID, got.Verdict(), tc.row, tc.verd)
		}
	}
	if _, err := dec.Decide(parcel{size: "Huge"}); err == nil || !strings.Contains(err.Error(), "Huge") {
		t.Errorf("an observer value outside the domain must fail, got %v", err)
	}
}

func TestNewDeciderRefusesMissingObserver(t *testing.T) {
	_, d := loadParcel(t)
	reg := NewRegistry[parcel]("parcel")
	reg.Bool("fragile", func(p parcel) bool { return p.fragile })
	if _, err := NewDecider(d, reg); err == nil || !strings.Contains(err.Error(), "size") {
		t.Fatalf("want an error naming fact size, got %v", err)
	}
}

// A decision recorded by an action is published with the row's trace: it
// lands in Step.Decisions, not before.
func TestDecisionTracesTravelWithTheStep(t *testing.T) {
	_, d := loadParcel(t)
	dec, err := NewDecider(d, parcelRegistry())
	if err != nil {
		t.Fatal(err)
	}
	lib, fs := LoadPaths("testdata/door.yaml")
	if fs.HasErrors() {
		t.Fatal(fs)
	}
	set := lib.Sets[0]
	reg := NewRegistry[parcel]("door")
	reg.Bool("locked", func(parcel) bool { return false })
	reg.Enum("push", func(parcel) string { return "Push" })
	reg.Action("Swing", "", func(ctx context.Context, p parcel) Outcome {
		got, err := dec.Decide(p)
		if err != nil {
			return Fail(err)
		}
		dec.Record(ctx, "ns/door", got, "the parcel at the door")
		return OK()
	})
	run, err := NewRunner(set, reg)
	if err != nil {
		t.Fatal(err)
	}
	var published []Trace
	run.Subscribe(func(tr Trace) { published = append(published, tr) })
	step, err := run.Step(context.Background(), "ns/door", "Closed", parcel{size: "Small"})
	if err != nil {
		t.Fatal(err)
	}
	if len(published) != 0 {
		t.Fatalf("nothing may be published before the controller publishes, got %v", published)
	}
	if len(step.Decisions) != 1 {
		t.Fatalf("want one decision trace, got %v", step.Decisions)
	}
	tr := step.Decisions[0]
	if tr.Table != "parcel" || tr.Row != "P3" || tr.Action != "Post" || tr.Object != "ns/door" || tr.Message != "the parcel at the door" {
		t.Errorf("unexpected decision trace %+v", tr)
	}
	// Outside a runner's firing nothing is collected (and nothing breaks).
	dec.Record(context.Background(), "ns/door", ItemDecision{Row: d.Rows[0]}, "")
}

func TestDecisionTableFindings(t *testing.T) {
	const head = `apiVersion: krtt.dev/v1alpha1
kind: DecisionTable
metadata: {name: bad}
spec:
  registry: parcel
  hitPolicy: %s
  facts:
    - {name: fragile, type: bool, description: fragile}
    - name: size
      type: enum
      description: size
      values: [{name: Small, description: s}, {name: Large, description: l}]
  verdicts: [{name: Post, description: post}, {name: Hand, description: hand}]
  rows:
`
	row := func(id, when, verdict string) string {
		return "    - {id: " + id + ", cites: c, observed: o, trigger: t, action: a, when: " + when + ", verdict: " + verdict + "}\n"
	}
	for _, tc := range []struct {
		name, policy, rows, want string
	}{
		{"gap", "first", row("A", "{fragile: true}", "Hand"), "completeness [bad]: no row gives a verdict when fragile=false"},
		{"masked", "first", row("A", "{}", "Post") + row("B", "{size: Large}", "Hand"), "masking [bad row B]: row B can never fire: A (line 15) match first"},
		{"overlap", "unique", row("A", "{fragile: true}", "Hand") + row("B", "{size: Large}", "Hand") + row("C", "{fragile: false}", "Post"), "determinism [bad row B]: rows A (line 15) and B (line 16) both match"},
		{"unknown verdict", "first", row("A", "{}", "Shred"), `unknown verdict "Shred"`},
		{"unknown fact", "first", row("A", "{heavy: true}", "Post"), `unknown fact "heavy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(head, "%s", tc.policy, 1) + tc.rows
			lib, fs := LoadBytes("bad.yaml", []byte(src))
			all := append(Findings(nil), fs...)
			if lib != nil {
				all = append(all, Check(lib, map[string]*Catalog{"parcel": parcelRegistry().Catalog()})...)
			}
			if !strings.Contains(all.Error(), tc.want) {
				t.Fatalf("want a finding containing %q, got:\n%s", tc.want, all.Error())
			}
		})
	}
}
