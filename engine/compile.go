package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/qmuntal/stateless"
)

// reconcileTrigger is the single trigger of every compiled machine: a
// reconcile observed the world and asks what happens next.
const reconcileTrigger = "reconcile"

// errNoRow is returned by a compiled machine when no row of the table
// matches in the state; the runtime then consults the next table.
var errNoRow = errors.New("no row matches")

// firing carries one decision through a compiled machine. The machines keep
// their state outside (in the firing, reached through the context), so one
// compiled machine serves any number of concurrent reconciles. A firing is
// itself the context the machine fires with, so a decision allocates no
// context of its own.
type firing struct {
	context.Context
	// state is the current state's name, boxed once at compile time
	// (compiled.states) so firing does not allocate.
	state stateless.State
	v     []uint8
	row   *Row
}

type firingKey struct{}

// Value returns the firing itself for firingKey and defers to the parent
// context otherwise.
func (f *firing) Value(key any) any {
	if _, ok := key.(firingKey); ok {
		return f
	}
	return f.Context.Value(key)
}

// firingOf returns the firing a machine callback runs for.
func firingOf(ctx context.Context) *firing {
	if f, ok := ctx.(*firing); ok {
		return f
	}
	return ctx.Value(firingKey{}).(*firing)
}

type compiled struct {
	sm *stateless.StateMachine
	// states holds the set's state names by index, as stateless.State.
	states []stateless.State
}

// compileSet builds one stateless machine per table: table states are
// machine states, each row a guarded transition (internal when the row does
// not change the state), guards derived from the row's when clause.
func compileSet(s *TableSet) {
	for _, t := range s.Tables {
		t.machine = compileTable(t)
	}
}

func compileTable(t *Table) *compiled {
	sm := stateless.NewStateMachineWithExternalStorage(
		func(ctx context.Context) (stateless.State, error) {
			if f, ok := ctx.Value(firingKey{}).(*firing); ok {
				return f.state, nil
			}
			// Outside a firing (the graph export): the initial state.
			return t.set.InitialState, nil
		},
		func(ctx context.Context, st stateless.State) error {
			firingOf(ctx).state = st
			return nil
		},
		stateless.FiringImmediate,
	)
	sm.OnUnhandledTrigger(func(context.Context, stateless.State, stateless.Trigger, []string) error {
		return errNoRow
	})
	set := t.set
	states := make([]stateless.State, len(set.States))
	for i, st := range set.States {
		states[i] = st.Name
	}
	// The state hierarchy becomes stateless's: a row written for a parent is
	// configured on the parent, and stateless consults it from every
	// sub-state whose own rows do not fire.
	for _, st := range set.States {
		if p := st.ParentState(set); p != nil {
			sm.Configure(st.Name).SubstateOf(p.Name)
		}
	}
	for _, st := range set.States {
		var here []*Row
		for _, r := range t.Rows {
			if r.declaredIn(st.index) {
				here = append(here, r)
			}
		}
		if len(here) == 0 {
			continue
		}
		cfg := sm.Configure(st.Name)
		for _, r := range here {
			guard := rowGuard(r, t.HitPolicy, t.earlierAt(r, st))
			row := r
			if r.thenTo < 0 || r.thenTo == st.index {
				cfg.InternalTransition(reconcileTrigger, func(ctx context.Context, _ ...any) error {
					firingOf(ctx).row = row
					return nil
				}, guard)
				continue
			}
			dest := states[r.thenTo]
			cfg.PermitDynamic(reconcileTrigger, func(ctx context.Context, _ ...any) (stateless.State, error) {
				firingOf(ctx).row = row
				return dest, nil
			}, guard)
		}
	}
	return &compiled{sm: sm, states: states}
}

// declaredIn reports whether the row is configured on the state.
func (r *Row) declaredIn(state int) bool {
	for _, i := range r.declared {
		if i == state {
			return true
		}
	}
	return false
}

// earlierAt lists the rows before r in the table that are configured on st
// or on one of its ancestors: under hitPolicy first these win over r, and
// stateless only falls back from a state to its parent when no row of the
// state fires, so excluding them keeps document order across the hierarchy.
func (t *Table) earlierAt(r *Row, st *State) []*Row {
	var out []*Row
	for _, e := range t.Rows[:r.position] {
		for cur := st; cur != nil; cur = cur.ParentState(t.set) {
			if e.declaredIn(cur.index) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// rowGuard is the row's when clause; under hitPolicy first it also requires
// that no earlier row of the state matches, which keeps the guards mutually
// exclusive as stateless demands.
func rowGuard(r *Row, hp HitPolicy, earlier []*Row) stateless.GuardFunc {
	c := r.cube
	if hp != HitFirst || len(earlier) == 0 {
		return func(ctx context.Context, _ ...any) bool {
			return c.matches(firingOf(ctx).v)
		}
	}
	prev := make([]cube, len(earlier))
	for i, e := range earlier {
		prev[i] = e.cube
	}
	return func(ctx context.Context, _ ...any) bool {
		v := firingOf(ctx).v
		if !c.matches(v) {
			return false
		}
		for _, p := range prev {
			if p.matches(v) {
				return false
			}
		}
		return true
	}
}

// fire runs the table's compiled machine for one decision; fr.Context and
// fr.v must be set.
func (t *Table) fire(fr *firing, state int) (err error) {
	fr.state = t.machine.states[state]
	fr.row = nil
	defer func() {
		// stateless panics when two guards hold at once; the checker rules
		// that out for shipped tables, but a table loaded without checks must
		// still fail with a message rather than crash the operator.
		if p := recover(); p != nil {
			err = fmt.Errorf("table %s: more than one row matches in state %s: %v", t.Name, fr.state, p)
		}
	}()
	return t.machine.sm.FireCtx(fr, reconcileTrigger)
}

// CompiledGraph is the compiled stateless machine's own Graphviz export:
// the state hierarchy (sub-states as clusters) and the rows that keep the
// state, as internal transitions. Rows that change the state are compiled
// as dynamic transitions (PermitDynamic: the firing row is recorded as it
// fires), which stateless v1.7 does not draw; `krtt render --format dot`
// draws every row with krtt's own renderer for that reason.
func (t *Table) CompiledGraph() string { return t.machine.sm.ToGraph() }
