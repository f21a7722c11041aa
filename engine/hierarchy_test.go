package engine

import (
	"context"
	"strings"
	"testing"
)

// A trip: Travelling groups the legs; a row for Travelling applies in every
// leg, and under hitPolicy first document order holds across the hierarchy
// (an earlier parent row beats a later leg row, a leg row written earlier
// beats a later parent row).
const trip = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: trip}
spec:
  initialState: Home
  hitPolicy: first
  states:
    - {name: Home, phase: Home, description: at home}
    - {name: Travelling, phase: Away, abstract: true, description: any leg}
    - {name: Flying, parent: Travelling, quiet: true, description: in the air}
    - {name: Driving, parent: Travelling, phase: Road, description: on the road}
    - {name: Back, terminal: true, parent: Travelling, description: done}
  facts:
    - {name: go, type: bool, description: want to travel}
    - {name: storm, type: bool, description: a storm}
    - {name: fuel, type: bool, description: fuel left}
  rows:
    - {id: R01, observed: home, trigger: go, action: leave, resulting: Flying, from: [Home], when: {go: true}, then: {state: Flying}}
    - {id: R02, observed: home, trigger: stay, action: nothing, resulting: "-", from: [Home], when: {go: false}}
    - {id: R03, observed: driving, trigger: out of fuel, action: refuel, resulting: "-", from: [Driving], when: {fuel: false}}
    - {id: R04, observed: travelling, trigger: storm, action: go home, resulting: Home, from: [Travelling], when: {storm: true}, then: {state: Home}}
    - {id: R05, observed: flying, trigger: landed, action: drive, resulting: Driving, from: [Flying], then: {state: Driving}}
    - {id: R06, observed: driving, trigger: arrived, action: stop, resulting: Back, from: [Driving], then: {state: Back}}
`

func TestHierarchy(t *testing.T) {
	s := mustLoadBytes(t, "trip", trip)
	if fs := Check(&Library{Sets: []*TableSet{s}}, nil); fs.HasErrors() {
		t.Fatalf("check: %v", fs)
	}
	if got := s.State("Flying").Phase; got != "Away" {
		t.Errorf("Flying inherits phase Away, got %q", got)
	}
	if got := s.State("Driving").Phase; got != "Road" {
		t.Errorf("Driving keeps its own phase, got %q", got)
	}
	if !s.State("Flying").Quiet || s.State("Driving").Quiet {
		t.Errorf("quiet is read per state: Flying %v (want true), Driving %v (want false)", s.State("Flying").Quiet, s.State("Driving").Quiet)
	}
	r04 := s.Row("trip", "R04")
	for _, st := range []string{"Flying", "Driving"} {
		if !r04.AppliesIn(s.State(st)) {
			t.Errorf("R04 (for Travelling) does not apply in %s", st)
		}
	}
	if r04.AppliesIn(s.State("Back")) || r04.AppliesIn(s.State("Travelling")) {
		t.Error("a parent row must not apply in a terminal or abstract state")
	}
	for _, c := range []struct {
		state, facts, row, to string
	}{
		{"Driving", "go=true storm=true fuel=false", "R03", "Driving"}, // leg row written first wins
		{"Flying", "go=true storm=true fuel=false", "R04", "Home"},     // parent row before the later leg row
		{"Driving", "go=true storm=true fuel=true", "R04", "Home"},
		{"Driving", "go=true storm=false fuel=true", "R06", "Back"},
		{"Flying", "go=true storm=false fuel=true", "R05", "Driving"},
	} {
		d, err := s.Decide(context.Background(), c.state, factsOf(t, s, c.facts))
		if err != nil {
			t.Fatalf("%s %s: %v", c.state, c.facts, err)
		}
		if d.Row.ID != c.row || d.To.Name != c.to {
			t.Errorf("%s %s: row %s to %s, want %s to %s", c.state, c.facts, d.Row.ID, d.To.Name, c.row, c.to)
		}
	}
	checkDecideAgrees(t, s)
}

func TestHierarchyFindings(t *testing.T) {
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"unknown parent", "parent: Travelling, quiet: true, description: in the air", "parent: Travel, quiet: true, description: in the air", `state Flying has unknown parent "Travel"`},
		{"abstract result", "then: {state: Flying}}", "then: {state: Travelling}}", `result state "Travelling" is abstract`},
		{"abstract initial", "initialState: Home", "initialState: Travelling", `initialState "Travelling" is abstract`},
		{"cycle", "abstract: true, description: any leg}", "abstract: true, parent: Flying, description: any leg}", "part of a parent cycle"},
		{"quiet abstract", "abstract: true, description: any leg}", "abstract: true, quiet: true, description: any leg}", "abstract state Travelling cannot be quiet"},
	} {
		doc := strings.Replace(trip, c.from, c.to, 1)
		_, fs := LoadBytes("trip.yaml", []byte(doc))
		if !strings.Contains(fs.Error(), c.want) || !strings.Contains(fs.Error(), "trip.yaml:") {
			t.Errorf("%s: findings do not say %q with the file:\n%v", c.name, c.want, fs)
		}
	}
}

func TestUndeclaredConditionType(t *testing.T) {
	doc := strings.Replace(trip, "  facts:", "  conditions:\n    - {type: Travelling, description: away}\n  facts:", 1)
	doc = strings.Replace(doc, "then: {state: Home}}", "then: {state: Home, conditions: [{type: Storm, status: \"True\", reason: Storm}]}}", 1)
	_, fs := LoadBytes("trip.yaml", []byte(doc))
	if !strings.Contains(fs.Error(), `condition type "Storm" is not one the set declares (Travelling)`) {
		t.Errorf("findings: %v", fs)
	}
}

// The compiled machine carries the hierarchy: its own graph export shows the
// legs as sub-states of Travelling.
func TestCompiledGraphShowsHierarchy(t *testing.T) {
	s := mustLoadBytes(t, "trip", trip)
	g := s.Table("trip").CompiledGraph()
	if !strings.Contains(g, "subgraph cluster_Travelling") || !strings.Contains(g, "Flying") {
		t.Errorf("graph has no Travelling cluster:\n%s", g)
	}
}
