// Package record converts between the kit's record of the last row that
// fired and the LastTransition every krtt API type shows in its status, so
// each controller's Status is only field copying.
package record

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// Fields points at the status fields the kit keeps in one object: every
// krtt API type has them under the same names.
type Fields struct {
	State              *string
	StateSince         **metav1.Time
	Phase              *string
	ObservedGeneration *int64
	LastTransition     **clusterv1.LastTransition
	Conditions         *[]metav1.Condition
}

// Status is the kit's reader and writer of an object's status, from where
// its fields are: a controller says only that, once.
func Status[O client.Object](fields func(O) Fields) reconciler.Status[O] {
	return reconciler.Status[O]{
		Get: func(o O) reconciler.Record {
			f := fields(o)
			return reconciler.Record{State: *f.State, StateSince: *f.StateSince, Phase: *f.Phase,
				ObservedGeneration: *f.ObservedGeneration, LastTransition: Transition(*f.LastTransition)}
		},
		Set: func(o O, rec reconciler.Record) {
			f := fields(o)
			*f.State, *f.StateSince, *f.Phase = rec.State, rec.StateSince, rec.Phase
			*f.ObservedGeneration = rec.ObservedGeneration
			*f.LastTransition = LastTransition(rec.LastTransition)
		},
		GetConditions: func(o O) []metav1.Condition { return *fields(o).Conditions },
		SetConditions: func(o O, c []metav1.Condition) { *fields(o).Conditions = c },
	}
}

// Transition is the kit's view of status.lastTransition.
func Transition(lt *clusterv1.LastTransition) *reconciler.Transition {
	if lt == nil {
		return nil
	}
	t := &reconciler.Transition{Table: lt.Table, Row: lt.Row, From: lt.From, To: lt.To,
		Action: lt.Action, Outcome: lt.Outcome, Message: lt.Message, Time: lt.Time}
	for _, v := range lt.Via {
		t.Via = append(t.Via, reconciler.ViaRow{Table: v.Table, Row: v.Row, From: v.From, To: v.To, Action: v.Action, Message: v.Message})
	}
	return t
}

// LastTransition is status.lastTransition for the kit's record.
func LastTransition(t *reconciler.Transition) *clusterv1.LastTransition {
	if t == nil {
		return nil
	}
	lt := &clusterv1.LastTransition{Table: t.Table, Row: t.Row, From: t.From, To: t.To,
		Action: t.Action, Outcome: t.Outcome, Message: t.Message, Time: t.Time}
	for _, v := range t.Via {
		lt.Via = append(lt.Via, clusterv1.ViaRow{Table: v.Table, Row: v.Row, From: v.From, To: v.To, Action: v.Action, Message: v.Message})
	}
	return lt
}
