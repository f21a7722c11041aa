// Package kit holds the status types the controller kit (reconciler/) writes
// into every krtt API object, and the interface through which it does: the
// API types embed the types and implement the interface, the kit uses both,
// and neither imports the other.
//
// +kubebuilder:object:generate=true
package kit

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Status is an API object whose status the kit reads and writes: its
// record (state, phase, last row) and its conditions. Each krtt API type
// implements it with a few methods on its own status fields.
//
// +kubebuilder:object:generate=false
type Status interface {
	GetRecord() Record
	SetRecord(Record)
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// Record is the part of an object's status the kit itself writes; every
// krtt API type has these fields under the same names.
//
// +kubebuilder:object:generate=false
type Record struct {
	// State is the table state, persisted so a restart resumes there.
	State      string
	StateSince *metav1.Time
	// Phase is the phase the tables give the state.
	Phase string
	// PhaseSince is when Phase last changed (a Machine's status.lastUpdated,
	// as Cluster API's setMachinePhaseAndLastUpdated); types without such a
	// field drop it.
	PhaseSince *metav1.Time
	// ObservedGeneration is written only after a successful reconcile.
	ObservedGeneration int64
	LastTransition     *LastTransition
}

// LastTransition records the last transition-table row the controller fired
// for this object.
type LastTransition struct {
	// table is the name of the transition table.
	// +required
	Table string `json:"table"`

	// row is the id of the row within the table.
	// +required
	Row string `json:"row"`

	// from is the state the object was in when the row fired.
	// +required
	From string `json:"from"`

	// to is the state the row moved the object to (equal to from when the
	// row does not change state).
	// +required
	To string `json:"to"`

	// action names the action(s) the row ran.
	// +optional
	Action string `json:"action,omitempty"`

	// outcome is the outcome the action reported (for example done,
	// waiting, failed).
	// +optional
	Outcome string `json:"outcome,omitempty"`

	// time is when the row fired.
	// +required
	Time metav1.Time `json:"time"`

	// message is a human-readable note about the transition.
	// +optional
	Message string `json:"message,omitempty"`

	// via lists, oldest first, the rows that fired before this one in the
	// reconcile that made this transition: rows whose actions left what was
	// observed true (they only set status, or wrote another object and kept
	// its answer), after which the controller decided again at once instead
	// of writing status and waiting for the next reconcile. A later
	// reconcile firing the same row with the same result keeps them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Via []ViaRow `json:"via,omitempty"`
}

// ViaRow is a row a reconcile passed through before the one in
// lastTransition.
type ViaRow struct {
	// table is the name of the transition table.
	// +required
	Table string `json:"table"`

	// row is the id of the row within the table.
	// +required
	Row string `json:"row"`

	// from is the state the object was in when the row fired.
	// +required
	From string `json:"from"`

	// to is the state the row moved the object to.
	// +required
	To string `json:"to"`

	// action names the action(s) the row ran.
	// +optional
	Action string `json:"action,omitempty"`

	// message is what the row's actions reported.
	// +optional
	Message string `json:"message,omitempty"`
}
