package reconciler

import (
	"context"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
)

// repeats reports whether t is the same row with the same result as o,
// whatever o's time and via: a wait or a steady state firing again.
func repeats(t, o *kit.LastTransition) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.Table == o.Table && t.Row == o.Row && t.From == o.From && t.To == o.To && t.Action == o.Action &&
		t.Outcome == o.Outcome && t.Message == o.Message
}

// sameAs compares everything but the time.
func sameAs(t, o *kit.LastTransition) bool {
	if t == nil || o == nil {
		return t == o
	}
	return repeats(t, o) && slices.Equal(t.Via, o.Via)
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
	// Status is the kit's view of an object's status; nil: the object
	// itself, an API type implementing kit.Status (every krtt type does).
	// Tests on unstructured objects give one.
	Status func(O) kit.Status
	// Finalizer is the controller's finalizer: once a row removes it the
	// object is about to go, and its status is not written.
	Finalizer string
	// LegacyFinalizers are names the controller's finalizer had before:
	// the kit reads an object carrying one as carrying Finalizer, and
	// writes the replacement with the reconcile's metadata patch (one
	// patch: the old name out, the new one in). An object being deleted
	// cannot take a new finalizer; it keeps the old one until the row that
	// removes Finalizer removes it too.
	LegacyFinalizers []string
	// Observe reads the world of one object once; now is the reconcile's
	// clock reading (injected in tests).
	Observe func(ctx context.Context, key client.ObjectKey, now time.Time) Observation[O, E]
	// PhaseNote, when given, opens the note of a Normal Event whose path
	// changed the object's phase with the controller's own sentence for
	// the new phase (Cluster API's "Cluster c1 is Provisioned"), so the
	// Event reads as the one the phase's owner API records.
	PhaseNote func(obj O, phase string) string
	// Told returns the Told of a reconcile's scope, where its actions tell
	// what they did to other objects; nil when the controller tells
	// nothing beyond its state Events.
	Told func(E) *Told
	// ObserveTimeout bounds Observe (reads come from the cache; a kind
	// whose informer cannot sync would otherwise hold a worker forever).
	ObserveTimeout time.Duration
}
