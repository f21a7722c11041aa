package timeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// blindWindow is a span the recorder may have missed events in: a watch
// ended with an error, and the informer re-lists from the current state.
type blindWindow struct {
	from, to uint64
	open     bool
	r        *toolscache.Reflector
	lastSync string
	// until is, for a window the driver opened (r nil), the
	// resourceVersion every informer must have synced to before it closes
	// (0: not known yet, Resynced sets it).
	until uint64
}

// lastSyncer is the part of an informer that says how far it has synced.
type lastSyncer interface{ LastSyncResourceVersion() string }

// Recorder watches one namespace (and the cluster-scoped Nodes and
// VolumeAttachments) with an informer per kind and records every add,
// update and delete. Its informers re-list by themselves after a broken
// watch or an API server restart.
type Recorder struct {
	mu     sync.Mutex
	start  time.Time
	events []Event
	seq    int
	maxRV  uint64
	// states is each Machine's last recorded status.state; steps counts
	// the deletion steps entered (a deleting Machine's state changing, or
	// the Machine going); live counts the Machines present.
	states map[string]string
	steps  int
	blind  []*blindWindow
	synced []lastSyncer
	ns     string

	cache  cache.Cache
	cancel context.CancelFunc
	done   chan error
}

var recordedKinds = []struct {
	kind Kind
	obj  client.Object
}{
	{Machine, &clusterv1.Machine{}},
	{SimMachine, &simv1.SimMachine{}},
	{SimBootstrapConfig, &simv1.SimBootstrapConfig{}},
	{Secret, &corev1.Secret{}},
	{Node, &corev1.Node{}},
	{Pod, &corev1.Pod{}},
	{PDB, &policyv1.PodDisruptionBudget{}},
	{VolumeAttachment, &storagev1.VolumeAttachment{}},
	{MachineEvent, &eventsv1.Event{}},
}

// Record starts recording namespace ns through cfg (talk to the API server
// directly, not through a fault-injecting proxy) and returns once every
// informer has synced. Stop ends it.
func Record(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, ns string) (*Recorder, error) {
	r := &Recorder{start: time.Now(), done: make(chan error, 1), states: map[string]string{}, ns: ns}
	// Cluster-wide informers (filtered here) rather than namespaced ones:
	// they report how far they have synced, which Resynced needs.
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultWatchErrorHandler: r.watchError})
	if err != nil {
		return nil, err
	}
	r.cache = c
	for _, k := range recordedKinds {
		inf, err := c.GetInformer(ctx, k.obj)
		if err != nil {
			return nil, fmt.Errorf("timeline: informer for %s: %w", k.kind, err)
		}
		ls, ok := inf.(lastSyncer)
		if !ok {
			return nil, fmt.Errorf("timeline: the informer for %s (%T) does not report its last synced resourceVersion", k.kind, inf)
		}
		r.synced = append(r.synced, ls)
		kind := k.kind
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(o any) { r.add(kind, Added, o) },
			UpdateFunc: func(old, o any) {
				oo, ok1 := old.(client.Object)
				no, ok2 := o.(client.Object)
				// A re-list replays unchanged objects as updates.
				if ok1 && ok2 && oo.GetResourceVersion() == no.GetResourceVersion() {
					return
				}
				r.add(kind, Updated, o)
			},
			DeleteFunc: func(o any) { r.add(kind, Deleted, o) },
		}); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	go func() { r.done <- c.Start(runCtx) }()
	syncCtx, cancelSync := context.WithTimeout(ctx, 60*time.Second)
	defer cancelSync()
	if !c.WaitForCacheSync(syncCtx) {
		r.Stop()
		return nil, fmt.Errorf("timeline: informers did not sync for namespace %s", ns)
	}
	return r, nil
}

// watchError is called when an informer's watch ends with an error and it
// is about to re-list: from here until the re-list, changes can be missed
// (only their end state is seen).
func (r *Recorder) watchError(_ context.Context, refl *toolscache.Reflector, _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.blind {
		if w.open && w.r == refl {
			return
		}
	}
	r.blind = append(r.blind, &blindWindow{from: r.maxRV, open: true, r: refl, lastSync: refl.LastSyncResourceVersion()})
}

// BlindFrom opens a blind window now: the driver is about to take the API
// server down, and the informers will re-list (seeing only end states)
// once it is back. Resynced closes it.
func (r *Recorder) BlindFrom() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blind = append(r.blind, &blindWindow{from: r.maxRV, open: true})
}

// Resynced closes the window BlindFrom opened once every informer has
// synced to at least rv (the resourceVersion of a write made after the API
// server came back): from then on nothing is missed. The window ends at
// the newest resourceVersion any informer synced to by then. An informer
// still behind after timeout (its reflector backs off up to 30 s between
// list attempts after an outage) keeps the window open: it closes when the
// last informer gets there (see closeWindows), and until then every check
// is against a state that may be stale; the error says so.
func (r *Recorder) Resynced(ctx context.Context, rv uint64, timeout time.Duration) error {
	r.mu.Lock()
	for _, w := range r.blind {
		if w.open && w.r == nil && w.until == 0 {
			w.until = rv
		}
	}
	r.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for {
		r.mu.Lock()
		r.closeWindows()
		behind := r.behind(rv)
		r.mu.Unlock()
		if behind == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("timeline: %d informers had not synced to resourceVersion %d within %s; the blind window stays open until they have", behind, rv, timeout)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// syncedRange returns the newest and oldest resourceVersion the informers
// synced to.
func (r *Recorder) syncedRange() (newest, oldest uint64) {
	for i, ls := range r.synced {
		v := ParseRV(ls.LastSyncResourceVersion())
		newest = max(newest, v)
		if i == 0 || v < oldest {
			oldest = v
		}
	}
	return newest, oldest
}

// behind counts the informers not yet synced to rv.
func (r *Recorder) behind(rv uint64) int {
	n := 0
	for _, ls := range r.synced {
		if ParseRV(ls.LastSyncResourceVersion()) < rv {
			n++
		}
	}
	return n
}

// closeWindows ends the windows whose informer has re-listed: its last
// synced resourceVersion moved on, to at least the list's.
func (r *Recorder) closeWindows() {
	var newest, oldest uint64
	for _, w := range r.blind {
		switch {
		case !w.open:
		case w.r != nil:
			if rv := w.r.LastSyncResourceVersion(); rv != w.lastSync {
				w.open, w.to = false, max(ParseRV(rv), w.from)
			}
		case w.until > 0:
			// A window the driver opened: closed once every informer has
			// synced past the write Resynced was given.
			if newest == 0 {
				newest, oldest = r.syncedRange()
			}
			if oldest >= w.until {
				w.open, w.to = false, max(newest, w.until, r.maxRV, w.from)
			}
		}
	}
}

func (r *Recorder) add(kind Kind, op Op, o any) {
	approx := false
	if tomb, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o, approx = tomb.Obj, true
	}
	obj, ok := o.(client.Object)
	if !ok || (obj.GetNamespace() != "" && obj.GetNamespace() != r.ns) {
		return
	}
	if ev, ok := obj.(*eventsv1.Event); ok && (op == Deleted || ev.Regarding.Kind != "Machine") {
		return // only what the operator says about Machines
	}
	obj = obj.DeepCopyObject().(client.Object)
	obj.SetManagedFields(nil)
	rv := ParseRV(obj.GetResourceVersion())
	r.mu.Lock()
	defer r.mu.Unlock()
	if approx {
		// The deletion happened while no watch was open; the newest
		// revision seen so far is the earliest it can be placed.
		rv = max(rv, r.maxRV)
	}
	r.maxRV = max(r.maxRV, rv)
	r.closeWindows()
	if m, ok := obj.(*clusterv1.Machine); ok {
		r.machineStep(op, m)
	}
	r.seq++
	r.events = append(r.events, Event{Seq: r.seq, At: time.Now(), RV: rv, Approx: approx, Kind: kind, Op: op, Obj: obj})
}

// machineStep counts a deletion step: a deleting Machine whose state
// changed, or a Machine gone.
func (r *Recorder) machineStep(op Op, m *clusterv1.Machine) {
	k := key(m)
	prev, seen := r.states[k]
	switch {
	case op == Deleted:
		if seen {
			r.steps++
		}
		delete(r.states, k)
		return
	case seen && m.DeletionTimestamp != nil && m.Status.State != prev:
		r.steps++
	}
	r.states[k] = m.Status.State
}

// Steps is how many deletion steps the recorded Machines entered so far
// (a deleting Machine's status.state changing, or a Machine going): the
// operator's progress, which the chaos drivers time their faults by.
func (r *Recorder) Steps() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.steps
}

// Machines is how many Machines are present (recorded and not deleted).
func (r *Recorder) Machines() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.states)
}

// Mark adds a note of the run's driver at the newest revision seen.
func (r *Recorder) Mark(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	r.events = append(r.events, Event{Seq: r.seq, At: time.Now(), RV: r.maxRV, Kind: Mark, Note: fmt.Sprintf(format, args...)})
}

// Len is how many events were recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Timeline returns a sorted copy of what was recorded so far.
func (r *Recorder) Timeline() *Timeline {
	r.mu.Lock()
	t := &Timeline{Start: r.start, Events: append([]Event(nil), r.events...)}
	r.closeWindows()
	for _, w := range r.blind {
		to := w.to
		if w.open {
			to = r.maxRV // still re-listing: everything up to now is suspect
		}
		t.Blind = append(t.Blind, Window{From: w.from, To: to})
	}
	r.mu.Unlock()
	t.Sort()
	return t
}

// Stop ends recording.
func (r *Recorder) Stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel = nil
}
