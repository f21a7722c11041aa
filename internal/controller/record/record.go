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
	return &reconciler.Transition{Table: lt.Table, Row: lt.Row, From: lt.From, To: lt.To,
		Action: lt.Action, Outcome: lt.Outcome, Message: lt.Message, Time: lt.Time}
}

// LastTransition is status.lastTransition for the kit's record.
func LastTransition(t *reconciler.Transition) *clusterv1.LastTransition {
	if t == nil {
		return nil
	}
	return &clusterv1.LastTransition{Table: t.Table, Row: t.Row, From: t.From, To: t.To,
		Action: t.Action, Outcome: t.Outcome, Message: t.Message, Time: t.Time}
}
