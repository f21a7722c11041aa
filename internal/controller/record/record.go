// Package record converts between the kit's record of the last row that
// fired and the LastTransition every krtt API type shows in its status, so
// each controller's Status is only field copying.
package record

import (
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

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
