package reconciler

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
)

// Run to completion: a row whose actions are all pure (engine.Pure: they
// change nothing but the object in memory) or write-through
// (engine.WritesThrough: what they write, they put back into the
// observation) leaves the observation as truthful as it was, so what the
// next reconcile would decide is known now. When the row moved the object
// to another state, or its actions changed a fact (a finalizer added, a
// label set, a provider object adopted), the kit decides again at once,
// from the new state and the facts observed anew from the same environment
// (the same reads, as the actions left them), and goes on until a row acts
// on the world otherwise, waits, fails, changes neither state nor fact, or
// reaches a terminal state. The whole path is one status
// patch and at most one Event; every row of it is still published (traces,
// metrics, coverage), the Event names the path, and status.lastTransition
// keeps the earlier rows in via.
//
// A finalizer the path added is not saved before the path's patch: until
// it is, the path goes on only through rows whose actions are all pure
// (they change the object in memory, saved by the same patch). A row that
// writes anything else, write-through or not, waits for the next reconcile,
// so nothing outside the object exists that a deletion could leave behind
// with no finalizer to clean it up.

// chainsAfter reports whether the kit may decide again after step: the
// row kept the observation (its actions are pure or write-through, or
// reported that they wrote nothing this time), ended Done, asks for no retry, does not stop at a terminal
// state, and the observation had no error.
func (r *Reconciler[O, E]) chainsAfter(step *engine.Step, observeErr error) bool {
	res := step.Result
	return observeErr == nil && res.Outcome.Status == engine.Done && !res.Retry && !res.StatusUnchanged &&
		!res.To.Terminal && step.KeptObservation
}

// runToCompletion returns the steps of one reconcile, first included. The
// path is bounded by the number of states: such rows moving in a cycle
// (which lint reports) stop there and go on at the next reconcile.
func (r *Reconciler[O, E]) runToCompletion(ctx context.Context, object string, p *Plan[O, E], before O, first *engine.Step) []*engine.Step {
	steps := []*engine.Step{first}
	set := r.spec.Set
	for len(steps) <= len(set.States) {
		last := steps[len(steps)-1]
		if !r.chainsAfter(last, p.Obs.Err) {
			break
		}
		facts, err := r.runner.Observe(p.Obs.Env)
		if err != nil {
			break
		}
		if last.Result.To == last.Decision.From && facts.Equal(last.Decision.Facts) {
			// Neither the state nor a fact moved: the same row would fire
			// again.
			break
		}
		d, err := set.Decide(ctx, last.Result.To.Name, facts)
		if err != nil {
			// The next reconcile decides (and reports) it.
			break
		}
		if !r.allPure(d.Row.Do) && finalizerAdded(before, p.Obs.Object) {
			break
		}
		step := r.runner.Act(ctx, object, d, p.Obs.Env)
		r.told(p.Obs.Env).stamp(step.Trace.Row)
		steps = append(steps, step)
	}
	return steps
}

// allPure reports whether every action is registered engine.Pure.
func (r *Reconciler[O, E]) allPure(actions []string) bool {
	for _, a := range actions {
		if !r.pure[a] {
			return false
		}
	}
	return true
}

// finalizerAdded reports whether after has a finalizer before (the object
// as read) does not.
func finalizerAdded(before, after client.Object) bool {
	for _, f := range after.GetFinalizers() {
		if !slices.Contains(before.GetFinalizers(), f) {
			return true
		}
	}
	return false
}

// recordSteps projects every step onto the object in order, then gives
// status.lastTransition the path: the last row, via the earlier ones.
func (r *Reconciler[O, E]) recordSteps(p *Plan[O, E], steps []*engine.Step, obj O) error {
	for i, s := range steps {
		sp := p
		if i > 0 {
			// Only the first row decided in the persisted state.
			c := *p
			c.PersistedState = ""
			sp = &c
		}
		if err := r.record(sp, s, obj); err != nil {
			return err
		}
	}
	// A last row that leaves status alone (a pause) did not write
	// lastTransition: the path ends at the row before it.
	written := steps
	if steps[len(steps)-1].Result.StatusUnchanged {
		written = steps[:len(steps)-1]
	}
	if len(written) < 2 {
		return nil
	}
	rec := r.spec.Status(obj).GetRecord()
	if rec.LastTransition == nil {
		return nil
	}
	via := make([]kit.ViaRow, 0, len(written)-1)
	for i, s := range written[:len(written)-1] {
		from := s.Trace.From
		if i == 0 && p.PersistedState != "" && p.PersistedState != p.State.Name {
			from = p.PersistedState
		}
		via = append(via, kit.ViaRow{Table: s.Trace.Table, Row: s.Trace.Row, From: from, To: s.Trace.To,
			Action: s.Trace.Action, Message: s.Trace.Message})
	}
	lt := *rec.LastTransition
	if !slices.Equal(lt.Via, via) {
		// A row that repeats the last one kept its time; reached by
		// another path, it is a transition of its own.
		lt.Time = metav1.NewTime(steps[len(written)-1].Trace.Time.Truncate(time.Second))
	}
	lt.Via = via
	rec.LastTransition = &lt
	r.spec.Status(obj).SetRecord(rec)
	return nil
}

// publishSteps publishes every step's traces and records one Event for the
// path when its end is worth one (see tells).
func (r *Reconciler[O, E]) publishSteps(steps []*engine.Step, before, after O) {
	for _, s := range steps {
		r.publishTraces(s)
	}
	if r.recorder == nil || !r.tells(r.spec.Status(before).GetRecord(), steps) {
		return
	}
	r.event(after, steps)
}

// tells reports whether the reconcile whose path is steps is worth an
// Event, given the status it started from (prev): the state changed (an
// empty status.state is the initial state) and the path entered a state
// the tables do not mark quiet or had a row that failed or needs a person;
// or its last row failed or needs a person (warning) with another row or
// message than last time. A wait that stays in its state (its message
// changing as Pods go) and a step through quiet states are told by the
// conditions and lastTransition, not by an Event: Events are the bulk of
// an operator's writes.
func (r *Reconciler[O, E]) tells(prev kit.Record, steps []*engine.Step) bool {
	tr := steps[len(steps)-1].Trace
	if !r.patcher.sameState(prev.State, tr.To) {
		return r.worthTelling(steps)
	}
	if tr.Outcome != engine.Failed && !tr.Warning {
		return false
	}
	lt := prev.LastTransition
	return lt == nil || lt.Table != tr.Table || lt.Row != tr.Row || lt.Outcome != string(tr.Outcome) || lt.Message != tr.Message
}

// worthTelling reports whether a path that changed the state says
// something a person would look for: it entered a state not marked quiet,
// or one of its rows failed or needs a person.
func (r *Reconciler[O, E]) worthTelling(steps []*engine.Step) bool {
	for _, s := range steps {
		tr := s.Trace
		if tr.Warning || tr.Outcome == engine.Failed {
			return true
		}
		if tr.To != tr.From && !r.quiet(tr.To) && !tr.Quiet {
			return true
		}
	}
	return false
}

// phase is the phase the tables give a state; "" for none or a state they
// do not know.
func (r *Reconciler[O, E]) phase(state string) string {
	if r.spec.Set == nil {
		return ""
	}
	if st := r.spec.Set.State(state); st != nil {
		return st.Phase
	}
	return ""
}

// quiet reports whether the tables mark the state quiet; a state they do
// not know is not.
func (r *Reconciler[O, E]) quiet(state string) bool {
	st := r.spec.Set.State(state)
	return st != nil && st.Quiet
}

// event records the one Event of a path of rows. Its reason is what a
// person reads in a list of Events, so never a row id: for the last row
// whose result needs a person (warning: true, a Warning Event) its
// eventReason, else its condition reason; else the state the path ended
// in; else (a row that failed in its state) the row's condition reason or
// the failed action. The rows go into the Event's action (the row that
// gave the reason) and note.
func (r *Reconciler[O, E]) event(obj O, steps []*engine.Step) {
	kind := corev1.EventTypeNormal
	first, last := steps[0].Trace, steps[len(steps)-1].Trace
	at := last
	for _, s := range steps {
		if s.Trace.Warning {
			kind, at = corev1.EventTypeWarning, s.Trace
		}
	}
	var reason string
	switch {
	case kind == corev1.EventTypeWarning && at.EventReason != "":
		reason = at.EventReason
	case kind == corev1.EventTypeWarning && at.Reason != "":
		reason = at.Reason
	case first.From != last.To:
		reason = last.To
	case at.Reason != "":
		reason = at.Reason
	case at.Outcome == engine.Failed && at.Action != "":
		ran := strings.Split(at.Action, ",")
		reason = ran[len(ran)-1] + "Failed"
	default:
		reason = last.To
	}
	note := pathNote(steps, at)
	if r.spec.PhaseNote != nil && kind == corev1.EventTypeNormal {
		if from, to := r.phase(first.From), r.phase(last.To); to != "" && to != from {
			note = r.spec.PhaseNote(obj, to) + ": " + note
		}
	}
	if len(note) > 1000 {
		note = note[:1000]
	}
	r.recorder.Eventf(obj, nil, kind, reason, at.Row, "%s", note)
}

// pathNote tells a path short: "Running → DrainingNode (rows N07, D01,
// D04): Draining the Node", the words those of the row that gave the
// reason or, when it has none, of the last row that has some.
func pathNote(steps []*engine.Step, at engine.Trace) string {
	first, last := steps[0].Trace, steps[len(steps)-1].Trace
	rows := make([]string, 0, len(steps))
	for _, s := range steps {
		rows = append(rows, s.Trace.Row)
	}
	label := "row "
	if len(rows) > 1 {
		label = "rows "
	}
	note := last.To
	if first.From != last.To {
		note = first.From + " → " + last.To
	}
	note += " (" + label + strings.Join(rows, ", ") + ")"
	words := ""
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Trace.Row == at.Row {
			words = stepWords(steps[i])
		}
	}
	for i := len(steps) - 1; words == "" && i >= 0; i-- {
		words = stepWords(steps[i])
	}
	if at.Outcome == engine.Failed && at.Action != "" && !strings.Contains(words, at.Message) {
		words = strings.TrimPrefix(words+"; "+at.Action+" failed: "+at.Message, "; ")
	}
	if words != "" {
		note += ": " + words
	}
	return note
}

// stepWords is what a row said: its condition's message, and the
// action's message when the condition does not carry it already; without
// either, the values its result writes into status (a failureReason and
// failureMessage).
func stepWords(s *engine.Step) string {
	tr := s.Trace
	switch {
	case tr.Note == "" && tr.Message == "":
		vals := make([]string, 0, len(s.Result.StatusOrder))
		for _, k := range s.Result.StatusOrder {
			vals = append(vals, s.Result.Status[k])
		}
		return strings.Join(vals, ": ")
	case tr.Note == "":
		return tr.Message
	case tr.Message == "" || strings.Contains(tr.Note, tr.Message):
		return tr.Note
	default:
		return tr.Note + ": " + tr.Message
	}
}

// resultOfSteps is the last step's result, requeued as soon as any row of
// the path asked (an earlier row's timer, such as a health timeout, must
// not be lost because the path went on).
func resultOfSteps(steps []*engine.Step, observeErr error) (reconcile.Result, error) {
	res, err := result(steps[len(steps)-1], observeErr)
	if err != nil {
		return res, err
	}
	for _, s := range steps[:len(steps)-1] {
		if ra := s.Result.RequeueAfter; ra > 0 && (res.RequeueAfter == 0 || ra < res.RequeueAfter) {
			res.RequeueAfter = ra
		}
	}
	return res, nil
}

// cacheBehindOwnWrite reports whether the plan was made on a version of
// the object this controller's own write already replaced (see
// ownWrites); a gone object is forgotten.
func (r *Reconciler[O, E]) cacheBehindOwnWrite(key client.ObjectKey, p *Plan[O, E]) bool {
	own := r.patcher.own
	if !p.Obs.Found {
		own.forget(key)
		return false
	}
	return own.behind(key, p.Obs.Object.GetResourceVersion())
}
