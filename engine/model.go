package engine

import (
	"time"
)

// APIVersion is the only apiVersion the loader accepts.
const APIVersion = "krtt.dev/v1alpha1"

// Kinds of documents the loader accepts.
const (
	KindTable = "TransitionTable"
	KindSet   = "TableSet"
)

// Decision returns the set's decision table with the given name, or nil.
func (s *TableSet) Decision(name string) *DecisionTable {
	for _, d := range s.Decisions {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Wildcard in a row's `from` list stands for every non-terminal state.
const Wildcard = "*"

// HitPolicy says what happens when more than one row of a table matches.
type HitPolicy string

const (
	// HitUnique allows at most one matching row; the checker proves it.
	HitUnique HitPolicy = "unique"
	// HitFirst lets the first matching row in document order win.
	HitFirst HitPolicy = "first"
)

// Pos is where something was written: file, 1-based line and column.
type Pos struct {
	File   string
	Line   int
	Column int
}

// FactType is the domain kind of a fact.
type FactType string

const (
	FactBool FactType = "bool"
	FactEnum FactType = "enum"
)

// Value is one member of a fact's finite domain.
type Value struct {
	Name        string
	Description string
	Pos         Pos
}

// Fact is a named observation with a finite domain. Observers registered in
// Go compute it; tables only match it.
type Fact struct {
	Name        string
	Type        FactType
	Description string
	Values      []Value // bool facts get false,true
	// Guard marks a fact that stands for a registered guard (a predicate too
	// awkward to state as a fact); Reads lists the facts the guard reads.
	Guard bool
	Reads []string
	Pos   Pos

	index int
}

// Index is the fact's position in its set's assignments.
func (f *Fact) Index() int { return f.index }

// ValueIndex returns the index of the named value, or -1.
func (f *Fact) ValueIndex(name string) int {
	for i, v := range f.Values {
		if v.Name == name {
			return i
		}
	}
	return -1
}

// State is a state of the controlled object, persisted by the controller.
// States form a hierarchy: a row written for a parent state applies in every
// state below it, which is how a table says "checked in every step of this
// stage" once instead of in each step.
type State struct {
	Name        string
	Description string
	// Phase is the user-facing phase the object shows in this state; a state
	// without one shows its parent's.
	Phase    string
	Terminal bool
	// Parent names the state this one is a sub-state of, if any.
	Parent string
	// Abstract marks a state that only groups sub-states: rows may apply in
	// it, but an object is never in it.
	Abstract bool
	// DeletionStep marks the states of an object's deletion (inherited from
	// the parent); metrics report how long objects spend in each.
	DeletionStep bool
	// Quiet marks a step on the way to a state worth telling: a path of
	// rows that only enters quiet states records no Event (its status,
	// conditions and traces still do), unless a row of it failed or needs
	// a person. Events are most of an operator's writes per object, so
	// they are kept for what a person would look for. Not inherited.
	Quiet bool
	// Wait says what an object in this state waits on, for explanations.
	Wait *StateWait
	Pos  Pos

	index  int
	parent int // index of the parent, -1 for none
}

// StateWait describes the wait of a state for humans and tools: what ends it,
// which status field records since when, and which spec field bounds it.
// Fields are JSON paths into the object (status.deletion.nodeDrainStartTime).
type StateWait struct {
	Step    string
	On      string
	Since   string
	Timeout string
	// NoTimeout explains why the wait has no timeout, when it has none.
	NoTimeout string
	// Object names an observed object whose deletion the state waits for.
	Object string
	// TimedOut names the bool fact the engine computes from Since and
	// Timeout (see StateWait.Timing): true once the timeout has passed.
	// States naming the same fact must describe the same wait.
	TimedOut string
	// CountFrom names a hook registered in Go (Registry.CountFrom) that
	// moves the start the timeout counts from later, for what the fields
	// alone do not tell (a workload cluster that was unreachable).
	CountFrom string
	// ArmedBy is the path of a field that must be set before the timeout
	// runs at all (a step attempted once before its timeout may end it).
	ArmedBy string
	Pos     Pos
}

// ParentState returns the parent state, or nil.
func (s *State) ParentState(set *TableSet) *State {
	if s.parent < 0 {
		return nil
	}
	return set.States[s.parent]
}

// Within reports whether the state is anc or lies below it.
func (s *State) Within(set *TableSet, anc *State) bool {
	for cur := s; cur != nil; cur = cur.ParentState(set) {
		if cur == anc {
			return true
		}
	}
	return false
}

// Index is the state's position in its set.
func (s *State) Index() int { return s.index }

// Impossible declares a combination of fact values that cannot occur, so
// the checks do not report overlaps or gaps that no cluster can produce.
type Impossible struct {
	Name        string
	Description string
	When        []Match
	Pos         Pos

	cube cube
}

// ConditionType is a condition type the set's controller owns: rows and
// registered mirrors write it, and the status patch merges exactly these
// types into the object's conditions, leaving other controllers' alone.
type ConditionType struct {
	Type        string
	Description string
	Pos         Pos
}

// StatusField is a status field a row result may set by name.
type StatusField struct {
	Name        string
	Description string
	Pos         Pos
}

// Match constrains one fact to a set of values.
type Match struct {
	Fact   string
	Values []string
	Pos    Pos
}

// Condition is a condition a row result writes (metav1.Condition shape).
type Condition struct {
	Type    string
	Status  string
	Reason  string
	Message string
	Pos     Pos
}

// Result is what a row leaves behind for one action outcome.
type Result struct {
	// State is the next state; empty means the state does not change.
	State        string
	Conditions   []Condition
	RequeueAfter time.Duration
	// RequeueAt names a hook registered in Go (Registry.RequeueAt) that
	// says, from the observation, when to look again (a time the facts
	// know, such as the end of minReadySeconds); with RequeueAfter too,
	// the sooner wins.
	RequeueAt string
	// Retry asks the controller to return an error so the work queue backs
	// off; used for failures.
	Retry bool
	// StatusUnchanged asks the controller to write nothing but the row's
	// conditions: no state, phase, lastTransition or mirrored status (a
	// paused object keeps its status as it was).
	StatusUnchanged bool
	// Warning marks a result that needs a person (a timeout that gave up,
	// a refusal, a forced deletion, a creation the API server refused): its
	// Event is a Warning, and it is told again whenever its message
	// changes. Every other result's Event is Normal.
	Warning bool
	// EventReason, with Warning, names the Warning Event instead of the
	// first condition's reason: a condition that keeps Cluster API's
	// reason while an action fails (ScalingUp stays ScalingUp) still
	// gives the person reading Events a word for what went wrong.
	EventReason string
	// Quiet: entering the result's state records no Event of its own, as
	// for a state marked quiet, because the row's actions tell what a
	// person reads (N31 tells SuccessfulSetNodeRef, Cluster API's word for
	// a Machine that found its Node, where the state would say Running).
	Quiet  bool
	Status map[string]string
	// statusOrder keeps Status keys in document order for rendering.
	StatusOrder []string
	Pos         Pos
}

// Row is one line of a KRTT table.
type Row struct {
	ID string
	// Cites names the source row (seed table and row) this row implements.
	Cites string

	// The five human columns.
	Observed  string
	Desired   string
	Trigger   string
	Action    string
	Resulting string

	From   []string
	When   []Match
	Guards []string
	Do     []string

	Then       Result
	InProgress *Result
	OnFailure  *Result

	Pos Pos

	table   *Table
	fromIdx []int
	// declared holds the states the row names in from (wildcard expanded),
	// where the compiled machine configures it; fromIdx adds their sub-states.
	declared []int
	cube     cube
	thenTo   int // index of the state after a done outcome, -1 = unchanged
	position int // index in table.Rows
}

// Table returns the table the row belongs to.
func (r *Row) Table() *Table { return r.table }

// FromStates returns the resolved states the row applies to.
func (r *Row) FromStates() []*State {
	out := make([]*State, 0, len(r.fromIdx))
	for _, i := range r.fromIdx {
		out = append(out, r.table.set.States[i])
	}
	return out
}

// WhenClause returns the row's when clause with its guards appended as
// guard: facts that must be true, the way the checks and the runtime read
// it.
func (r *Row) WhenClause() []Match {
	out := append([]Match{}, r.When...)
	for _, g := range r.Guards {
		out = append(out, Match{Fact: GuardFactPrefix + g, Values: []string{"true"}, Pos: r.Pos})
	}
	return out
}

// Table is one KRTT table.
type Table struct {
	Name        string
	Title       string
	Description string
	Source      string
	HitPolicy   HitPolicy
	Rows        []*Row
	Pos         Pos

	set     *TableSet
	covers  []bool // covers[state index]: some row applies in that state
	machine *compiled
}

// Set returns the table set this table belongs to.
func (t *Table) Set() *TableSet { return t.set }

// Covers reports whether some row of the table applies in the state.
func (t *Table) Covers(state *State) bool { return t.covers[state.index] }

// Row returns the row with the given id, or nil.
func (t *Table) Row(id string) *Row {
	for _, r := range t.Rows {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// TableSet is a group of tables that share states and facts and are consulted in
// order: for a state, the first table (in Tables order) with a matching row
// decides. A table file without a set forms a set of its own.
type TableSet struct {
	Name         string
	Description  string
	Registry     string
	InitialState string
	States       []*State
	Facts        []*Fact
	Impossible   []*Impossible
	StatusFields []*StatusField
	// Conditions are the condition types the controller owns.
	Conditions []*ConditionType
	// UnknownState is the state an object whose persisted state the tables
	// do not know is decided in, so a row says what happens to it.
	UnknownState string
	Tables       []*Table
	// Decisions are the decision tables the set's controller consults for
	// items it handles (the Pods of a drain); they name the set in spec.set.
	Decisions []*DecisionTable
	Pos       Pos

	factIndex  map[string]int
	stateIndex map[string]int
}

// State returns the named state, or nil.
func (s *TableSet) State(name string) *State {
	i, ok := s.stateIndex[name]
	if !ok {
		return nil
	}
	return s.States[i]
}

// Fact returns the named fact, or nil.
func (s *TableSet) Fact(name string) *Fact {
	i, ok := s.factIndex[name]
	if !ok {
		return nil
	}
	return s.Facts[i]
}

// Table returns the named table, or nil.
func (s *TableSet) Table(name string) *Table {
	for _, t := range s.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Row finds a row by table and id.
func (s *TableSet) Row(table, id string) *Row {
	if t := s.Table(table); t != nil {
		return t.Row(id)
	}
	return nil
}
