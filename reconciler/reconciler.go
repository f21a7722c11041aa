package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
)

// staleRequeue is how soon an object whose patch met a conflict is decided
// again if no event brings it back first.
const staleRequeue = 2 * time.Second

// FactsConsistentCondition is the condition the kit sets to False (and
// removes again) when an object's observed facts fall into a combination
// its tables declare impossible.
const FactsConsistentCondition = "FactsConsistent"

// Options wire a Reconciler to a cluster.
type Options struct {
	Client client.Client
	// APIReader reads uncached, to rebase a status patch after a conflict.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Now is the clock of observers and traces; time.Now when nil.
	Now func() time.Time
	// Traces, when set, receives every row the controller fires.
	Traces func(engine.Trace)
	// ClockJumps, for a clock that can jump rather than pass (a test clock
	// a scenario advances), registers a function the clock calls after each
	// jump, so the objects whose wait deadline it passed wake at once. Nil
	// for the real clock.
	ClockJumps func(jumped func())
}

// Reconciler runs one controller's tables for one object per call.
type Reconciler[O client.Object, E any] struct {
	spec     Spec[O, E]
	runner   *engine.Runner[E]
	client   client.Client
	recorder events.EventRecorder
	now      func() time.Time
	patcher  patcher[O]
	// deadlines wakes objects at their state's wait deadline.
	deadlines *deadlines
	// ctrl is the built controller, once Setup ran.
	ctrl controller.Controller
	// pure are the actions registered engine.Pure.
	pure map[string]bool
}

// New binds a controller's spec to its registry; it refuses a registry that
// misses an observer, action or status setter the tables name.
func New[O client.Object, E any](spec Spec[O, E], opts Options) (*Reconciler[O, E], error) {
	if spec.Status == nil {
		var probe O
		if _, ok := any(probe).(kit.Status); !ok {
			return nil, fmt.Errorf("controller %s: %T does not implement kit.Status and the spec gives no Status", spec.Name, probe)
		}
		spec.Status = func(o O) kit.Status { return any(o).(kit.Status) }
	}
	runner, err := engine.NewRunner(spec.Set, spec.Registry)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	runner.SetClock(now)
	if opts.Traces != nil {
		runner.Subscribe(opts.Traces)
	}
	owned := map[string]bool{FactsConsistentCondition: true}
	for _, c := range spec.Set.Conditions {
		owned[c.Type] = true
	}
	reader := opts.APIReader
	if reader == nil {
		reader = opts.Client
	}
	r := &Reconciler[O, E]{spec: spec, runner: runner, client: opts.Client, recorder: opts.Recorder, now: now,
		patcher: patcher[O]{client: opts.Client, apiReader: reader, newObject: spec.NewObject, status: spec.Status,
			owned: owned, finalizer: spec.Finalizer, initialState: spec.Set.InitialState, own: newOwnWrites(time.Now)},
		deadlines: newDeadlines(now), pure: map[string]bool{}}
	for _, e := range spec.Registry.Catalog().Entries {
		if e.Kind == engine.EntryAction && e.Pure {
			r.pure[e.Name] = true
		}
	}
	if opts.ClockJumps != nil {
		opts.ClockJumps(r.deadlines.jumped)
	}
	return r, nil
}

// Runner returns the runner, for subscribing to traces.
func (r *Reconciler[O, E]) Runner() *engine.Runner[E] { return r.runner }

// Builder starts the controller-runtime builder for the object type; the
// controller adds its own watches and calls Complete through Setup.
func (r *Reconciler[O, E]) Builder(mgr ctrl.Manager, opts ...BuilderOption) *builder.Builder {
	var o builderOptions
	for _, opt := range opts {
		opt(&o)
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(r.spec.Name)
	if o.statusDelay <= 0 {
		return b.For(r.spec.NewObject())
	}
	return b.For(r.spec.NewObject(), builder.WithPredicates(predicate.Not[client.Object](statusOnly))).
		Watches(r.spec.NewObject(), EnqueueCoalesced(o.statusDelay, func(_ context.Context, obj client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
		}), builder.WithPredicates(statusOnly))
}

// Setup builds the controller from b, registers the metrics and binds the
// kind watcher (may be nil) to it.
func (r *Reconciler[O, E]) Setup(mgr ctrl.Manager, b *builder.Builder, concurrency int, w *KindWatcher) error {
	wake := make(chan event.GenericEvent)
	b = b.WatchesRawSource(source.Channel(wake, &handler.EnqueueRequestForObject{}))
	c, err := b.WithOptions(controller.Options{MaxConcurrentReconciles: max(1, concurrency)}).Build(r)
	if err != nil {
		return err
	}
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		r.deadlines.run(ctx, func(ctx context.Context, key client.ObjectKey) {
			o := r.spec.NewObject()
			o.SetNamespace(key.Namespace)
			o.SetName(key.Name)
			select {
			case wake <- event.GenericEvent{Object: o}:
			case <-ctx.Done():
			}
		})
		return nil
	}))
	if err != nil {
		return err
	}
	r.ctrl = c
	if w != nil {
		w.Bind(c, mgr.GetCache(), mgr.GetClient())
	}
	status := r.spec.Status
	registerMetrics(r.spec.Name, r.spec.Set, r.spec.NewList, func(o client.Object) kit.Record {
		t, ok := o.(O)
		if !ok {
			return kit.Record{}
		}
		return status(t).GetRecord()
	}, mgr.GetClient())
	return nil
}

// Controller returns the controller Setup built (nil before), for watches
// started at run time.
func (r *Reconciler[O, E]) Controller() controller.Controller { return r.ctrl }

// Plan is one object's observation and the decision the tables make on it,
// before any action runs. Explanations stop here.
type Plan[O client.Object, E any] struct {
	Obs Observation[O, E]
	// PersistedState is status.state as read; State is where the tables
	// decide (the initial state when empty, the set's unknownState when the
	// tables do not know it).
	PersistedState string
	State          *engine.State
	Facts          engine.Facts
	Impossible     *engine.Impossible
	Decision       *engine.Decision
	Now            time.Time
	// FinalizersAsRead are the object's finalizers as read when it carried
	// a legacy finalizer (Spec.LegacyFinalizers), which the plan reads as
	// the current one; nil otherwise.
	FinalizersAsRead []string
}

// Plan observes the object and decides, without acting.
func (r *Reconciler[O, E]) Plan(ctx context.Context, key client.ObjectKey) (*Plan[O, E], error) {
	now := r.now()
	octx := ctx
	if r.spec.ObserveTimeout > 0 {
		var cancel context.CancelFunc
		octx, cancel = context.WithTimeout(ctx, r.spec.ObserveTimeout)
		defer cancel()
	}
	p := &Plan[O, E]{Obs: r.spec.Observe(octx, key, now), Now: now}
	set := r.spec.Set
	p.State = set.State(set.InitialState)
	if p.Obs.Found {
		if len(r.spec.LegacyFinalizers) > 0 {
			p.FinalizersAsRead = migrateFinalizers(p.Obs.Object, r.spec.Finalizer, r.spec.LegacyFinalizers)
		}
		p.PersistedState = r.spec.Status(p.Obs.Object).GetRecord().State
		if p.PersistedState != "" {
			st := set.State(p.PersistedState)
			switch {
			case st != nil && !st.Abstract:
				p.State = st
			case set.UnknownState != "":
				p.State = set.State(set.UnknownState)
			default:
				return p, fmt.Errorf("status.state %q is not a state of the %s tables, and they declare no unknownState", p.PersistedState, set.Name)
			}
		}
	}
	facts, err := r.runner.Observe(p.Obs.Env)
	if err != nil {
		return p, err
	}
	p.Facts = facts
	p.Impossible = set.ImpossibleHit(facts)
	if p.State.Terminal {
		return p, nil
	}
	d, err := set.Decide(ctx, p.State.Name, facts)
	if err != nil {
		return p, err
	}
	p.Decision = d
	return p, nil
}

// Reconcile is observe → decide → act → record → patch → publish.
func (r *Reconciler[O, E]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	p, err := r.Plan(ctx, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("decide: %w", err)
	}
	if p.Obs.Err != nil {
		log.Error(p.Obs.Err, "observing failed")
	}
	if p.Decision == nil {
		// A terminal state: nothing is left to do.
		r.deadlines.set(req.NamespacedName, time.Time{})
		return reconcile.Result{}, nil
	}
	if r.cacheBehindOwnWrite(req.NamespacedName, p) {
		// The event of this controller's own write brings the object back.
		return reconcile.Result{RequeueAfter: staleRequeue}, nil
	}
	if p.Impossible != nil {
		impossibleFactsTotal.WithLabelValues(r.spec.Name, p.Impossible.Name).Inc()
		log.Info("observed facts fall into a combination the tables declare impossible; deciding anyway",
			"impossible", p.Impossible.Name, "facts", p.Facts.String())
	}
	var before O
	if p.Obs.Found {
		// Actions change the object in memory; the patch is the difference.
		before = p.Obs.Object.DeepCopyObject().(O)
		if p.FinalizersAsRead != nil && before.GetDeletionTimestamp() == nil {
			// The patch carries the legacy finalizer's replacement. An
			// object being deleted may take no new finalizer: its legacy
			// one goes with the row that removes the finalizer.
			before.SetFinalizers(p.FinalizersAsRead)
		}
	}
	step := r.runner.Act(ctx, req.String(), p.Decision, p.Obs.Env)
	r.told(p.Obs.Env).stamp(step.Trace.Row)
	if p.Obs.Err != nil && step.Trace.Message == "" {
		// The row that handles an API error says only "retry"; what failed
		// belongs on the object (lastTransition) and its Event, not only in
		// the operator's log.
		step.Trace.Message = p.Obs.Err.Error()
	}
	if !p.Obs.Found {
		r.deadlines.set(req.NamespacedName, time.Time{})
		r.publishTraces(step)
		return reconcile.Result{}, nil
	}
	steps := r.runToCompletion(ctx, req.String(), p, before, step)
	// What the actions (and the status's mirrors, in recordSteps) told is
	// recorded however the reconcile ends: what they did stays done.
	defer func() { r.recordTold(p.Obs.Object, p.Obs.Env, steps) }()
	lost := steps[len(steps)-1]
	conflict := conflicted(lost)
	if conflict {
		// An action's write met a newer version of the object it wrote
		// (optimistic locking): nothing is wrong, the row is decided again
		// on the newer version. No Event, no error, no back-off; the rows
		// before it in the path are recorded as usual.
		lost.Trace.Unwritten = "an action's write met a newer version; decided again on it: " + lost.Trace.Message
		r.publishTraces(lost)
		log.V(1).Info("an action's write met a newer version; will decide again", "row", lost.Trace.Row, "error", lost.Trace.Message)
		steps = steps[:len(steps)-1]
		if len(steps) == 0 {
			return reconcile.Result{RequeueAfter: staleRequeue}, nil
		}
	}
	step = steps[len(steps)-1]
	log = log.WithValues("table", step.Trace.Table, "row", step.Trace.Row, "from", steps[0].Trace.From, "to", step.Trace.To)
	after := p.Obs.Object
	if err := r.recordSteps(p, steps, after); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.patcher.patch(ctx, before, after, succeeded(step, p.Obs.Err)); err != nil {
		// The row acted (its actions ran, and what they did outside the
		// object stays done) although its result was not written: its trace
		// says so, so a row that acted is never missing from the traces and
		// metrics. No Event: the object does not show the change.
		unwritten := err.Error()
		if IsStale(err) {
			unwritten = "the object changed meanwhile; decided again on the newer version: " + err.Error()
		}
		for _, s := range steps {
			// Every row of the path acted; none was written.
			s.Trace.Unwritten = unwritten
			r.publishTraces(s)
		}
		if IsStale(err) {
			// Someone (often this controller's previous patch, not yet in
			// the cache) wrote a newer version; its event brings the object
			// back to be decided again, so this is no failure. The short
			// requeue covers a conflict with no newer version behind it (a
			// proxy answering 409), which sends no event.
			log.V(1).Info("object changed meanwhile; will decide again on the newer version", "error", err.Error())
			return reconcile.Result{RequeueAfter: staleRequeue}, nil
		}
		reconcileErrorsTotal.WithLabelValues(r.spec.Name, step.Trace.Table, step.Trace.Row).Inc()
		return reconcile.Result{}, fmt.Errorf("row %s: %w", step.Trace.Row, err)
	}
	r.deadlines.set(req.NamespacedName, soonest(r.deadline(step.Result.To, p.Obs.Env), wakeAt(steps)))
	r.publishSteps(steps, before, after)
	log.V(1).Info("row fired", "action", step.Trace.Action, "outcome", step.Trace.Outcome, "message", step.Trace.Message, "rows", len(steps))
	res, err := resultOfSteps(steps, p.Obs.Err)
	if conflict && err == nil && (res.RequeueAfter == 0 || res.RequeueAfter > staleRequeue) {
		res.RequeueAfter = staleRequeue
	}
	if err != nil {
		reconcileErrorsTotal.WithLabelValues(r.spec.Name, step.Trace.Table, step.Trace.Row).Inc()
	}
	return res, err
}

// wakeAt is the soonest time a row of the path asked to be woken at
// (requeueAt); an earlier row's must not be lost because the path went on.
func wakeAt(steps []*engine.Step) time.Time {
	var at time.Time
	for _, s := range steps {
		at = soonest(at, s.Result.WakeAt)
	}
	return at
}

// soonest is the earlier of two times, a zero one counting as none.
func soonest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// deadline is when the timeout of the state's wait ends for the object as
// the row's actions left it, by the engine's timing (the one its timed-out
// fact reads); zero when the state has no timed wait or its timeout has
// passed already (the facts just observed said so, and the tables
// decided on it).
func (r *Reconciler[O, E]) deadline(st *engine.State, env E) time.Time {
	if st == nil || st.Wait == nil || st.Wait.Timeout == "" {
		return time.Time{}
	}
	t := engine.WaitTimingOf(r.spec.Registry, st.Wait, env)
	if t.TimedOut {
		return time.Time{}
	}
	return t.Deadline
}

// conflicted: the step's action failed only because a write met a newer
// version of the object (HTTP 409, optimistic locking).
func conflicted(step *engine.Step) bool {
	o := step.Result.Outcome
	return o.Status == engine.Failed && o.Err != nil && apierrors.IsConflict(o.Err)
}

// succeeded: the reconcile did what the row asked without a failure.
func succeeded(step *engine.Step, observeErr error) bool {
	return observeErr == nil && !step.Result.Retry && step.Result.Outcome.Status != engine.Failed
}

// record projects the step onto the object in memory: state, phase and
// lastTransition, then the registered setters (status fields, mirrors, the
// row's conditions, summaries), the facts check, and observedGeneration
// when the reconcile succeeded.
func (r *Reconciler[O, E]) record(p *Plan[O, E], step *engine.Step, obj O) error {
	rec := r.spec.Status(obj).GetRecord()
	res := step.Result
	tr := step.Trace
	gen := obj.GetGeneration()
	prev := slices.Clone(r.spec.Status(obj).GetConditions())
	defer func() {
		r.spec.Status(obj).SetConditions(stampTransitions(r.spec.Status(obj).GetConditions(), prev, tr.Time))
	}()
	if res.StatusUnchanged {
		conds := r.spec.Status(obj).GetConditions()
		for _, c := range res.Conditions {
			meta.SetStatusCondition(&conds, metav1.Condition{Type: c.Type, Status: metav1.ConditionStatus(c.Status),
				Reason: c.Reason, Message: c.Message, ObservedGeneration: gen})
		}
		// The one exception to "only its own conditions": FactsConsistent
		// says what was observed, not what the row decided, and a row that
		// leaves status alone (a paused object) still decided on those
		// facts; without it, the log and the metric would name a
		// combination the object never shows.
		r.setFactsConsistent(p, &conds, gen)
		r.spec.Status(obj).SetConditions(conds)
		return nil
	}
	if rec.State != res.To.Name || rec.StateSince == nil {
		rec.StateSince = &metav1.Time{Time: tr.Time.Truncate(time.Second)}
	}
	rec.State = res.To.Name
	if res.To.Phase != "" {
		if res.To.Phase != rec.Phase {
			rec.PhaseSince = &metav1.Time{Time: tr.Time.Truncate(time.Second)}
		}
		rec.Phase = res.To.Phase
	}
	if succeeded(step, p.Obs.Err) {
		rec.ObservedGeneration = obj.GetGeneration()
	}
	from := tr.From
	if p.PersistedState != "" && p.PersistedState != p.State.Name {
		from = p.PersistedState
	}
	next := &kit.LastTransition{Table: tr.Table, Row: tr.Row, From: from, To: tr.To, Action: tr.Action,
		Outcome: string(tr.Outcome), Message: tr.Message}
	if !repeats(next, rec.LastTransition) {
		// An unchanged wait keeps its time and via (how the object reached
		// the row), so a row firing again does not rewrite status;
		// recordSteps gives a path its own via and time.
		next.Time = metav1.NewTime(tr.Time.Truncate(time.Second))
		rec.LastTransition = next
	}
	r.spec.Status(obj).SetRecord(rec)

	err := r.runner.Project(p.Obs.Env, res, func(cs []engine.Condition) {
		conds := r.spec.Status(obj).GetConditions()
		for _, c := range cs {
			meta.SetStatusCondition(&conds, metav1.Condition{Type: c.Type, Status: metav1.ConditionStatus(c.Status),
				Reason: c.Reason, Message: c.Message, ObservedGeneration: gen})
		}
		r.spec.Status(obj).SetConditions(conds)
	})
	if err != nil {
		return err
	}
	conds := r.spec.Status(obj).GetConditions()
	r.setFactsConsistent(p, &conds, gen)
	r.spec.Status(obj).SetConditions(conds)
	return nil
}

// setFactsConsistent sets FactsConsistent to False when the observed facts
// fall into a combination the tables declare impossible, and removes it
// when they do not.
func (r *Reconciler[O, E]) setFactsConsistent(p *Plan[O, E], conds *[]metav1.Condition, gen int64) {
	if p.Impossible == nil {
		meta.RemoveStatusCondition(conds, FactsConsistentCondition)
		return
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: FactsConsistentCondition, Status: metav1.ConditionFalse,
		Reason: "ImpossibleFacts", ObservedGeneration: gen,
		Message: fmt.Sprintf("the observed facts fall into %s (%s), which the tables declare impossible: %s",
			p.Impossible.Name, p.Impossible.Description, p.Facts.String())})
}

// stampTransitions gives every condition whose status changed during record
// (or that is new) the step's time, from the reconciler's clock (the one the
// observers read), as its lastTransitionTime: the row conditions, the
// summaries (Go code, which calls meta.SetStatusCondition with the wall
// clock) and FactsConsistent alike. Timeouts and the times status shows
// then agree, also when tests advance the clock.
func stampTransitions(conds, prev []metav1.Condition, at time.Time) []metav1.Condition {
	for i := range conds {
		c := &conds[i]
		if p := meta.FindStatusCondition(prev, c.Type); p == nil || p.Status != c.Status {
			c.LastTransitionTime = metav1.NewTime(at.Truncate(time.Second))
		}
	}
	return conds
}

// publishTraces hands the row's trace, then the traces of the decision-table
// verdicts its actions acted on, to subscribers and metrics.
func (r *Reconciler[O, E]) publishTraces(step *engine.Step) {
	for _, tr := range append([]engine.Trace{step.Trace}, step.Decisions...) {
		r.runner.Publish(tr)
		countTrace(r.spec.Name, tr)
	}
}

// result turns the row's result into what controller-runtime expects.
func result(step *engine.Step, observeErr error) (reconcile.Result, error) {
	res := step.Result
	if res.Retry {
		switch {
		case res.Outcome.Err != nil:
			return reconcile.Result{}, res.Outcome.Err
		case observeErr != nil:
			return reconcile.Result{}, observeErr
		default:
			return reconcile.Result{}, errors.New("row " + step.Trace.Row + " asks to retry")
		}
	}
	return reconcile.Result{RequeueAfter: res.RequeueAfter}, nil
}
