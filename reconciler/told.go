package reconciler

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// Told holds what a reconcile's actions did to other objects that a person
// reads in the object's Events: a MachineSet's "Created Machine m-1", a
// MachineDeployment's "Scaled up MachineSet md-abc: 1 -> 2", as Cluster
// API's controllers record them one per object acted on. The state Events
// (one per reconcile, see tells) say where the object went; these say what
// was done on the way. A controller's scope holds one and its Spec.Told
// hands it to the kit, which records them on the reconciled object with
// the row whose action told them, whether or not the status patch lands:
// what the actions did stays done.
//
// Actions may tell from several goroutines (a burst of creations).
type Told struct {
	mu      sync.Mutex
	tells   []Tell
	stamped int
}

// Tell is one Event an action tells.
type Tell struct {
	// Warning marks a failure a person should look at (FailedCreate).
	Warning bool
	// Reason is Cluster API's reason (SuccessfulCreate, SuccessfulScale).
	Reason string
	// Related is the object acted on (the Machine created); it tells
	// Events about different objects apart, so they are never folded into
	// one series.
	Related client.Object
	// Note is what a person reads: Cluster API's words.
	Note string
	// Row is the row whose action told it; the kit fills it in.
	Row string
}

// Tell keeps an Event for the kit to record.
func (t *Told) Tell(tell Tell) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tells = append(t.tells, tell)
}

// stamp names row as the teller of every Event told since the last stamp.
func (t *Told) stamp(row string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := t.stamped; i < len(t.tells); i++ {
		t.tells[i].Row = row
	}
	t.stamped = len(t.tells)
}

// Take returns the Events told and forgets them.
func (t *Told) Take() []Tell {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.tells
	t.tells, t.stamped = nil, 0
	return out
}

// told returns the Told of a reconcile's scope; nil when the controller
// tells nothing.
func (r *Reconciler[O, E]) told(env E) *Told {
	if r.spec.Told == nil {
		return nil
	}
	return r.spec.Told(env)
}

// recordTold records the Events told on obj. What the status's mirrors
// told while the path was recorded names the path's last row, which
// wrote that status: an Event needs an action.
func (r *Reconciler[O, E]) recordTold(obj O, env E, steps []*engine.Step) {
	told := r.told(env)
	if len(steps) > 0 {
		told.stamp(steps[len(steps)-1].Trace.Row)
	}
	tells := told.Take()
	if r.recorder == nil {
		return
	}
	for _, t := range tells {
		kind := corev1.EventTypeNormal
		if t.Warning {
			kind = corev1.EventTypeWarning
		}
		r.recorder.Eventf(obj, t.Related, kind, t.Reason, t.Row, "%s", t.Note)
	}
}
