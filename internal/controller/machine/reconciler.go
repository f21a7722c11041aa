// Package machine is the Machine controller: observe (one snapshot of the
// world) → decide (the Machine tables) → act (registered actions) → record
// (status, conditions, Events, metrics) and one patch of the Machine.
package machine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	machineactions "github.com/krtt-dev/krtt/actions/machine"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// observeTimeout bounds reading a Machine's world in one reconcile.
const observeTimeout = 10 * time.Second

// Reconciler runs the Machine tables for one Machine per call.
type Reconciler struct {
	Client   client.Client
	Observer *machineactions.Observer
	Runner   *engine.Runner[*machineactions.Scope]
	Recorder events.EventRecorder

	controller controller.Controller
	cache      cache.Cache
	watched    sync.Map // schema.GroupVersionKind → struct{}
}

// Options configure the controller.
type Options struct {
	MaxConcurrentReconciles int
}

// New builds the reconciler for a checked Machine table set.
func New(mgr ctrl.Manager, set *engine.Set) (*Reconciler, error) {
	runner, err := engine.NewRunner(set, machineactions.Registry())
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		Client:   mgr.GetClient(),
		Runner:   runner,
		Recorder: mgr.GetEventRecorder("krtt-machine-controller"),
	}
	registerMetrics(mgr.GetClient())
	runner.Subscribe(observeTrace)
	r.Observer = &machineactions.Observer{
		Client:   mgr.GetClient(),
		Clusters: machineactions.LocalClusterClients{Client: mgr.GetClient()},
		Watcher:  r,
	}
	return r, nil
}

// SetupWithManager registers indexes and watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &corev1.Node{}, machineactions.NodeProviderIDIndex, machineactions.NodeProviderIDIndexer); err != nil {
		return fmt.Errorf("index Nodes by providerID: %w", err)
	}
	if err := idx.IndexField(ctx, &corev1.Pod{}, machineactions.PodNodeNameIndex, machineactions.PodNodeNameIndexer); err != nil {
		return fmt.Errorf("index Pods by node name: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1.Machine{}, machineProviderIDIndex, indexMachineByProviderID); err != nil {
		return fmt.Errorf("index Machines by providerID: %w", err)
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&clusterv1.Machine{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachines)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.nodeToMachines)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToMachines), builder.WithPredicates(podGoneOrGoing())).
		Watches(&policyv1.PodDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(r.drainingMachines)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, opts.MaxConcurrentReconciles)}).
		Named("machine").
		Build(r)
	if err != nil {
		return err
	}
	r.controller = c
	r.cache = mgr.GetCache()
	return nil
}

// Watch starts, once per kind, a watch on bootstrap and infrastructure
// objects that wakes their controlling Machine.
func (r *Reconciler) Watch(_ context.Context, obj *unstructured.Unstructured) error {
	if r.controller == nil {
		return nil
	}
	gvk := obj.GroupVersionKind()
	if _, loaded := r.watched.LoadOrStore(gvk, struct{}{}); loaded {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := r.controller.Watch(source.Kind(r.cache, u, handler.TypedEnqueueRequestForOwner[*unstructured.Unstructured](
		r.Client.Scheme(), r.Client.RESTMapper(), &clusterv1.Machine{}, handler.OnlyControllerOwner())))
	if err != nil {
		r.watched.Delete(gvk)
	}
	return err
}

// Reconcile is observe → decide → act → record for one Machine.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	// Reads come from the cache; a provider kind whose API is broken never
	// syncs, and the bound turns that into an API error a row reports
	// instead of a worker that waits forever.
	octx, cancel := context.WithTimeout(ctx, observeTimeout)
	s := r.Observer.Observe(octx, req.NamespacedName)
	cancel()
	set := r.Runner.Set()
	state := set.InitialState
	if s.Machine != nil && s.Machine.Status.State != "" {
		if set.State(s.Machine.Status.State) != nil {
			state = s.Machine.Status.State
		} else {
			log.Info("Machine is in a state the tables do not know; starting from the initial state", "state", s.Machine.Status.State)
		}
	}
	var before *clusterv1.Machine
	if s.Machine != nil {
		before = s.Machine.DeepCopy()
	}
	step, err := r.Runner.Step(ctx, req.String(), state, s)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("decide: %w", err)
	}
	log = log.WithValues("table", step.Trace.Table, "row", step.Trace.Row, "from", step.Trace.From, "to", step.Trace.To)
	if s.Err != nil {
		log.Error(s.Err, "observing the Machine failed")
	}
	if !s.MachineFound {
		return reconcile.Result{}, nil
	}
	applyStep(s, step)
	if err := r.patch(ctx, before, s.Machine, step); err != nil {
		if apierrors.IsConflict(err) {
			// Someone (often our own previous patch, not yet in the cache)
			// wrote a newer Machine; its watch event brings us back with a
			// fresh read, so this is no failure.
			log.V(1).Info("Machine changed meanwhile; will decide again on the newer version", "error", err.Error())
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	r.emitEvent(s.Machine, before, step)
	log.V(1).Info("row fired", "action", step.Trace.Action, "outcome", step.Trace.Outcome, "message", step.Trace.Message)
	res, err := result(step, s.Err)
	if err != nil {
		reconcileErrorsTotal.WithLabelValues(step.Trace.Table, step.Trace.Row).Inc()
	}
	return res, err
}

// patch writes metadata and spec first, then status, each only when it
// changed. Metadata goes first with optimistic locking: a merge patch
// replaces whole lists such as finalizers, so a concurrent writer's change
// must not be lost, and when it conflicts nothing else is written and the
// reconcile starts again from a fresh read (the state never runs ahead of
// the spec it depends on). A Machine whose finalizer was just removed is
// gone, so its status is not written.
func (r *Reconciler) patch(ctx context.Context, before, after *clusterv1.Machine, step *engine.Step) error {
	if !equality.Semantic.DeepEqual(before.ObjectMeta, after.ObjectMeta) || !equality.Semantic.DeepEqual(before.Spec, after.Spec) {
		obj := after.DeepCopy()
		if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patch Machine (row %s): %w", step.Trace.Row, err)
		}
		after.ResourceVersion = obj.ResourceVersion
	}
	if hasFinalizer(before) && !hasFinalizer(after) {
		return nil
	}
	if !equality.Semantic.DeepEqual(before.Status, after.Status) {
		if err := r.Client.Status().Patch(ctx, after.DeepCopy(), client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("patch Machine status (row %s): %w", step.Trace.Row, err)
		}
	}
	return nil
}

func hasFinalizer(m *clusterv1.Machine) bool {
	for _, f := range m.Finalizers {
		if f == clusterv1.MachineFinalizer {
			return true
		}
	}
	return false
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

// emitEvent records an Event when the row, its outcome or its message
// changed, so a Machine waiting on the same thing does not flood Events.
func (r *Reconciler) emitEvent(after, before *clusterv1.Machine, step *engine.Step) {
	if r.Recorder == nil {
		return
	}
	tr := step.Trace
	if prev := before.Status.LastTransition; prev != nil && prev.Table == tr.Table && prev.Row == tr.Row &&
		prev.To == tr.To && prev.Outcome == string(tr.Outcome) && prev.Message == tr.Message {
		return
	}
	kind := corev1.EventTypeNormal
	if tr.Outcome == engine.Failed {
		kind = corev1.EventTypeWarning
	}
	reason := tr.Reason
	if reason == "" {
		reason = "Row" + tr.Row
	}
	note := fmt.Sprintf("%s row %s: %s → %s", tr.Table, tr.Row, tr.From, tr.To)
	if tr.Action != "" {
		note += fmt.Sprintf("; %s %s", tr.Action, tr.Outcome)
	}
	if tr.Message != "" {
		note += ": " + tr.Message
	}
	if len(note) > 1000 {
		note = note[:1000]
	}
	r.Recorder.Eventf(after, nil, kind, reason, tr.Row, "%s", note)
}
