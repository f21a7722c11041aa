package reconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

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
		steps = append(steps, r.runner.Act(ctx, object, d, p.Obs.Env))
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
	if len(steps) == 1 {
		r.publish(steps[0], before, after)
		return
	}
	for _, s := range steps {
		r.publishTraces(s)
	}
	last := steps[len(steps)-1].Trace
	if r.recorder == nil || !r.tells(r.spec.Status(before).GetRecord(), last) {
		return
	}
	r.event(after, last, pathNote(steps))
}

// pathNote tells a path of rows: "machine-normal row N07: Running →
// Deleting; machine-deletion row D01: Deleting → WaitingForPreDrainHook;
// …", each row with its actions, outcome and message, cut at the Event
// note's limit.
func pathNote(steps []*engine.Step) string {
	parts := make([]string, 0, len(steps))
	for _, s := range steps {
		tr := s.Trace
		part := fmt.Sprintf("%s row %s: %s → %s", tr.Table, tr.Row, tr.From, tr.To)
		if tr.Action != "" {
			part += fmt.Sprintf(" (%s %s)", tr.Action, tr.Outcome)
		}
		if tr.Message != "" {
			part += ": " + tr.Message
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
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
