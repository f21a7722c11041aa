package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"
)

// Decision is the row that fires for one state and one assignment of facts.
type Decision struct {
	Table *Table
	Row   *Row
	From  *State
	// To is the state the compiled machine moved to: where the object goes
	// when the row's actions finish.
	To    *State
	Facts Facts
}

// ErrNoDecision is wrapped by Decide when no table of the set has a matching
// row; the completeness check rules it out for checked tables.
var ErrNoDecision = errors.New("no row matches")

// Decide fires the compiled machines of the set's tables, in order, for the
// state and facts, and returns the row that matched.
func (s *TableSet) Decide(ctx context.Context, state string, f Facts) (*Decision, error) {
	st := s.State(state)
	if st == nil {
		return nil, fmt.Errorf("set %s has no state %q", s.Name, state)
	}
	if f.set != s {
		return nil, fmt.Errorf("facts were built for another set")
	}
	for i, x := range f.v {
		if x == unset {
			return nil, fmt.Errorf("set %s: fact %s has no value (missing: %s)", s.Name, s.Facts[i].Name, strings.Join(f.Missing(), ", "))
		}
	}
	fr := &firing{Context: ctx, v: f.v}
	for _, t := range s.Tables {
		if !t.covers[st.index] {
			continue
		}
		err := t.fire(fr, st.index)
		if errors.Is(err, errNoRow) {
			continue
		}
		if err != nil {
			return nil, err
		}
		to := s.State(fr.state.(string))
		if to == nil {
			return nil, fmt.Errorf("table %s moved to unknown state %v", t.Name, fr.state)
		}
		return &Decision{Table: t, Row: fr.row, From: st, To: to, Facts: f}, nil
	}
	return nil, fmt.Errorf("%w in state %s of set %s for %s", ErrNoDecision, state, s.Name, f)
}

// ImpossibleHit returns the first declared impossible combination the facts
// fall into, or nil. Observers that produce one contradict the tables'
// assumptions; controllers report it instead of trusting the decision.
func (s *TableSet) ImpossibleHit(f Facts) *Impossible {
	for _, im := range s.Impossible {
		if im.cube.matches(f.v) {
			return im
		}
	}
	return nil
}

// Effect is a row's result for one action outcome, ready to apply: the one
// noun for what a fired row does to its object (Decision is the row that
// fires, Outcome what its actions reported, Step all of it, Trace its
// published record).
type Effect struct {
	Outcome Outcome
	// Branch says which result applied: then, inProgress or onFailure.
	Branch string
	// To is the next state (equal to the current one when unchanged).
	To           *State
	Conditions   []Condition
	RequeueAfter time.Duration
	// RequeueAt names the row's requeue hook; Act asks it for WakeAt, when
	// the controller should look again by its own clock (zero: no
	// particular time).
	RequeueAt string
	WakeAt    time.Time
	Retry     bool
	// StatusUnchanged: write only the conditions (see Result).
	StatusUnchanged bool
	// Warning: the result needs a person (see Result).
	Warning     bool
	EventReason string
	// Quiet: the result's state change records no Event (see Result).
	Quiet       bool
	Status      map[string]string
	StatusOrder []string
}

// Changed reports whether the state changes.
func (r Effect) Changed(from *State) bool { return r.To != from }

// DefaultInProgressRequeue is used when an action unexpectedly waits in a
// row that has no inProgress result.
const DefaultInProgressRequeue = 10 * time.Second

// Apply picks the row's result for the outcome: then on Done, inProgress
// while an action waits, onFailure when one failed. A missing inProgress
// keeps the state and requeues; a missing onFailure keeps the state and
// retries with back-off.
func (d *Decision) Apply(o Outcome) Effect {
	r := d.Row
	var res *Result
	out := Effect{Outcome: o, To: d.From}
	switch o.Status {
	case InProgress:
		out.Branch = "inProgress"
		if r.InProgress == nil {
			out.RequeueAfter = DefaultInProgressRequeue
			return out
		}
		res = r.InProgress
	case Failed:
		out.Branch = "onFailure"
		if r.OnFailure == nil {
			out.Retry = true
			return out
		}
		res = r.OnFailure
	default:
		out.Branch = "then"
		res = &r.Then
	}
	switch {
	case out.Branch == "then" && d.To != nil:
		out.To = d.To
	case res.State != "":
		out.To = d.Table.set.State(res.State)
	}
	out.RequeueAfter = res.RequeueAfter
	out.RequeueAt = res.RequeueAt
	out.Retry = res.Retry
	out.StatusUnchanged = res.StatusUnchanged
	out.Warning = res.Warning
	out.EventReason = res.EventReason
	out.Quiet = res.Quiet
	out.Status = res.Status
	out.StatusOrder = res.StatusOrder
	if len(res.Conditions) > 0 {
		out.Conditions = make([]Condition, len(res.Conditions))
		for i, c := range res.Conditions {
			if n := strings.Count(c.Message, "{"); n > 0 {
				// The row's own words first, so that braces in what an
				// action says are never taken for a placeholder. A named
				// detail the actions did not give (one stopped before the
				// action offering it ran) reads as empty, never as braces.
				// Most rows name {detail} alone: no pattern runs for them.
				if n > strings.Count(c.Message, "{detail}") {
					c.Message = placeholder.ReplaceAllStringFunc(c.Message, func(m string) string {
						name := m[1 : len(m)-1]
						if name == "detail" {
							return m
						}
						return o.Details[name]
					})
				}
				c.Message = strings.ReplaceAll(c.Message, "{detail}", o.Message)
			}
			out.Conditions[i] = c
		}
	}
	return out
}

// Trace is the record of one firing, delivered to every subscriber.
type Trace struct {
	Set    string
	Table  string
	Row    string
	Object string
	From   string
	To     string
	// Action lists the actions that ran, comma separated.
	Action string
	// Actions are the actions that ran, each with its own duration.
	Actions  []ActionRun
	Outcome  OutcomeStatus
	Message  string
	Duration time.Duration
	Time     time.Time
	// Reason and Note are the reason and message of the result's first
	// condition, if any.
	Reason string
	Note   string
	// Warning: the row's result is declared to need a person.
	Warning bool
	// EventReason names the Warning Event when the row gives one.
	EventReason string
	// Quiet: the row's result records no Event for its state change.
	Quiet bool
	// Unwritten says why the row's result did not reach the object (its
	// patch met a newer version, or failed) although its actions ran;
	// empty when it was written.
	Unwritten string
}

// ActionRun is one action of a row that ran, and how long it took.
type ActionRun struct {
	Name     string
	Duration time.Duration
}

// Runner binds a set to a registry and runs observe → decide → act →
// result for one object per call. It is safe for concurrent use.
type Runner[E any] struct {
	set       *TableSet
	reg       *Registry[E]
	observers []observer[E]
	// waits are the facts computed from states' waits (their observers
	// stay unset).
	waits   []waitFact
	actions map[*Row]rowActions[E]

	mu   sync.RWMutex
	subs []func(Trace)
	now  func() time.Time
}

type waitFact struct {
	index int
	wait  *StateWait
}

// rowActions are a row's bound actions; ran[i] names the actions up to and
// including run[i], comma separated, for the trace.
type rowActions[E any] struct {
	run []action[E]
	ran []string
}

// NewRunner binds every fact and action of the set to the registry and
// refuses to start when one is missing.
func NewRunner[E any](set *TableSet, reg *Registry[E]) (*Runner[E], error) {
	r := &Runner[E]{set: set, reg: reg, actions: map[*Row]rowActions[E]{}, now: time.Now}
	var missing []string
	r.observers = make([]observer[E], len(set.Facts))
	for i, f := range set.Facts {
		if w := set.timedOutWait(f.Name); w != nil {
			missing = append(missing, bindWait(reg, f.Name, w)...)
			r.waits = append(r.waits, waitFact{index: i, wait: w})
			continue
		}
		o, ok := reg.observers[f.Name]
		if !ok {
			missing = append(missing, "observer for fact "+f.Name)
			continue
		}
		r.observers[i] = o
	}
	for _, t := range set.Tables {
		for _, row := range t.Rows {
			for _, name := range row.Do {
				a, ok := reg.actions[name]
				if !ok {
					missing = append(missing, fmt.Sprintf("action %s (table %s row %s)", name, t.Name, row.ID))
					continue
				}
				ra := r.actions[row]
				ra.run = append(ra.run, a)
				if len(ra.ran) == 0 {
					ra.ran = append(ra.ran, name)
				} else {
					ra.ran = append(ra.ran, ra.ran[len(ra.ran)-1]+","+name)
				}
				r.actions[row] = ra
			}
		}
	}
	for _, t := range set.Tables {
		for _, row := range t.Rows {
			for _, res := range []*Result{&row.Then, row.InProgress, row.OnFailure} {
				if res == nil || res.RequeueAt == "" {
					continue
				}
				if _, ok := reg.requeueAt[res.RequeueAt]; !ok {
					missing = append(missing, fmt.Sprintf("requeueAt hook %s (table %s row %s)", res.RequeueAt, t.Name, row.ID))
				}
			}
		}
	}
	for _, sf := range set.StatusFields {
		if _, ok := reg.status[sf.Name]; !ok {
			missing = append(missing, "setter for status field "+sf.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("registry %s cannot run set %s: missing %s", reg.name, set.Name, strings.Join(missing, "; "))
	}
	return r, nil
}

// Project writes a step's result onto the environment's object through the
// registered setters: the row's status fields, then every mirror, then the
// given condition writer for the row's conditions, then the summaries of
// condition types the row did not write.
func (r *Runner[E]) Project(env E, res Effect, writeConditions func([]Condition)) error {
	for _, k := range res.StatusOrder {
		st, ok := r.reg.status[k]
		if !ok {
			return fmt.Errorf("registry %s has no setter for status field %s", r.reg.name, k)
		}
		st.set(env, res.Status[k])
	}
	for _, m := range r.reg.mirrors {
		m.fn(env)
	}
	writeConditions(res.Conditions)
	for _, sm := range r.reg.summaries {
		written := false
		for _, c := range res.Conditions {
			written = written || c.Type == sm.entry.Name
		}
		if !written {
			sm.fn(env)
		}
	}
	return nil
}

// Set returns the set the runner runs.
func (r *Runner[E]) Set() *TableSet { return r.set }

// Subscribe adds a receiver of trace records; it is called synchronously
// after each firing, so it must be quick.
func (r *Runner[E]) Subscribe(fn func(Trace)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = append(r.subs, fn)
}

// SetClock replaces the clock used for trace times (tests).
func (r *Runner[E]) SetClock(now func() time.Time) { r.now = now }

// Observe computes every fact of the set for the environment.
func (r *Runner[E]) Observe(env E) (Facts, error) {
	f := r.set.NewFacts()
	if len(r.waits) > 0 {
		// One read of the fields for every wait fact of the observation.
		fields := r.reg.waitFields(env)
		for _, w := range r.waits {
			f.v[w.index] = 0
			if waitTiming(r.reg, w.wait, env, fields).TimedOut {
				f.v[w.index] = 1
			}
		}
	}
	for i, o := range r.observers {
		if o.value == nil {
			continue
		}
		v := o.value(env)
		vi := r.set.Facts[i].ValueIndex(v)
		if vi < 0 {
			return f, fmt.Errorf("observer %s returned %q, not one of %s", o.entry.Name, v, strings.Join(r.set.Facts[i].valueNames(), ", "))
		}
		f.v[i] = uint8(vi)
	}
	return f, nil
}

// Step is everything one firing produced.
type Step struct {
	Decision *Decision
	Result   Effect
	Trace    Trace
	// Decisions are the traces of the decision-table verdicts the row's
	// actions acted on; publish them with Trace.
	Decisions []Trace
	// KeptObservation: every action that ran is pure or write-through, or
	// reported that it wrote nothing this time; the observation is still
	// true, so the kit may decide again at once (run to completion).
	KeptObservation bool
}

// Step observes the environment, decides, runs the row's actions in order
// (stopping at the first that does not finish) and resolves the result.
func (r *Runner[E]) Step(ctx context.Context, object, state string, env E) (*Step, error) {
	f, err := r.Observe(env)
	if err != nil {
		return nil, err
	}
	d, err := r.set.Decide(ctx, state, f)
	if err != nil {
		return nil, err
	}
	return r.Act(ctx, object, d, env), nil
}

// Act runs a decision's actions and builds the trace; it does not publish
// it: a controller publishes once its write of the result landed
// (Publish), so subscribers never count a transition that did not happen.
func (r *Runner[E]) Act(ctx context.Context, object string, d *Decision, env E) *Step {
	start := r.now()
	o := OK()
	ctx, log := withDecisionLog(ctx)
	ra := r.actions[d.Row]
	ran := ""
	kept := true
	var runs []ActionRun
	// Every action's named details reach the messages, a later action's
	// winning over an earlier one's.
	var details map[string]string
	for i, a := range ra.run {
		ran = ra.ran[i]
		began := r.now()
		o = a.fn(WithRunningAction(ctx, RunningAction{Set: r.set.Name, Object: object, Action: a.entry.Name,
			Pure: a.entry.Pure, WritesThrough: a.entry.WritesThrough}), env)
		if o.Status == "" {
			o.Status = Done
		}
		if len(details) > 0 {
			merged := make(map[string]string, len(details)+len(o.Details))
			maps.Copy(merged, details)
			maps.Copy(merged, o.Details)
			o.Details = merged
		}
		details = o.Details
		runs = append(runs, ActionRun{Name: a.entry.Name, Duration: r.now().Sub(began)})
		kept = kept && (a.entry.Pure || a.entry.WritesThrough || o.WroteNothing)
		if o.Status != Done {
			break
		}
	}
	res := d.Apply(o)
	r.requeueAt(&res, env)
	tr := Trace{
		Set: r.set.Name, Table: d.Table.Name, Row: d.Row.ID, Object: object,
		From: d.From.Name, To: res.To.Name, Action: ran,
		Outcome: o.Status, Message: o.Message, Time: start, Duration: r.now().Sub(start), Warning: res.Warning,
		EventReason: res.EventReason, Quiet: res.Quiet,
		Actions: runs,
	}
	if len(res.Conditions) > 0 {
		tr.Reason = res.Conditions[0].Reason
		tr.Note = res.Conditions[0].Message
	}
	return &Step{Decision: d, Result: res, Trace: tr, Decisions: log.take(), KeptObservation: kept}
}

// MinWakeDelay is the soonest a requeue hook wakes an object: a time that
// has come (the facts said otherwise a moment ago) is looked at again
// shortly, never in a busy loop.
const MinWakeDelay = 100 * time.Millisecond

// requeueAt asks the result's requeue hook when to look again (WakeAt), no
// sooner than MinWakeDelay by the runner's clock. It is a time, not a
// delay: the controller keeps it as a deadline by its own clock, as it
// keeps a wait's timeout, so a clock that jumps (tests) wakes the object
// as production's does when the time comes.
func (r *Runner[E]) requeueAt(res *Effect, env E) {
	if res.RequeueAt == "" {
		return
	}
	at := r.reg.requeueAt[res.RequeueAt].fn(env)
	if at.IsZero() {
		return
	}
	res.WakeAt = maxTime(at, r.now().Add(MinWakeDelay))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Publish delivers a trace to every subscriber.
func (r *Runner[E]) Publish(tr Trace) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, fn := range r.subs {
		fn(tr)
	}
}
