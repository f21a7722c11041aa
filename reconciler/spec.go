package reconciler

import (
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// Record is the part of an object's status the kit itself writes.
type Record struct {
	// State is the table state, persisted so a restart resumes there.
	State      string
	StateSince *metav1.Time
	// Phase is the phase the tables give the state.
	Phase string
	// ObservedGeneration is written only after a successful reconcile.
	ObservedGeneration int64
	LastTransition     *Transition
}

// Transition is the row that fired last, as the object's status shows it.
type Transition struct {
	Table, Row, From, To, Action, Outcome, Message string
	Time                                           metav1.Time
	// Via are the rows that fired before it in the same reconcile, oldest
	// first: rows whose actions are pure, after which the kit decided again
	// at once (run to completion).
	Via []ViaRow
}

// ViaRow is a row a reconcile passed through on its way to the last one.
type ViaRow struct {
	Table, Row, From, To, Action, Message string
}

// repeats reports whether t is the same row with the same result as o,
// whatever o's time and via: a wait or a steady state firing again.
func (t *Transition) repeats(o *Transition) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.Table == o.Table && t.Row == o.Row && t.From == o.From && t.To == o.To && t.Action == o.Action &&
		t.Outcome == o.Outcome && t.Message == o.Message
}

// sameAs compares everything but the time.
func (t *Transition) sameAs(o *Transition) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.repeats(o) && slices.Equal(t.Via, o.Via)
}

// Status reads and writes the kit's part of an API type's status. Each
// controller gives one for its type (a few lines of field copying), which
// keeps the kit free of any API type.
type Status[O client.Object] struct {
	Get func(O) Record
	Set func(O, Record)
	// GetConditions and SetConditions read and write status.conditions.
	GetConditions func(O) []metav1.Condition
	SetConditions func(O, []metav1.Condition)
}

// Observation is what an observer returns for one reconcile.
type Observation[O client.Object, E any] struct {
	// Env is what facts, actions and setters work on.
	Env E
	// Object is the observed object; nil when it does not exist.
	Object O
	// Found is false when the object does not exist (Object is then unset).
	Found bool
	// Err is the first API error met while observing, for the log; rows
	// decide what it means through a fact.
	Err error
}

// Spec is everything that makes one controller.
type Spec[O client.Object, E any] struct {
	// Name names the controller: the metrics' controller label, the
	// controller-runtime controller, the Events' reporter and metric names
	// (krtt_<name>s{phase}).
	Name     string
	Set      *engine.TableSet
	Registry *engine.Registry[E]
	// NewObject returns an empty object of the API type, for watches.
	NewObject func() O
	// NewList returns an empty list of the API type, for the metrics.
	NewList func() client.ObjectList
	Status  Status[O]
	// Finalizer is the controller's finalizer: once a row removes it the
	// object is about to go, and its status is not written.
	Finalizer string
	// Observe reads the world of one object once; now is the reconcile's
	// clock reading (injected in tests).
	Observe func(ctx context.Context, key client.ObjectKey, now time.Time) Observation[O, E]
	// ObserveTimeout bounds Observe (reads come from the cache; a kind
	// whose informer cannot sync would otherwise hold a worker forever).
	ObserveTimeout time.Duration
}
