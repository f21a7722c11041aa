// Package transition converts between the kit's record of the last row that
// fired and the lastTransition field the cluster.krtt.dev types share, so
// every controller's status mapping is field copying of its own fields only.
package transition

import (
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// ToKit returns the kit's view of a status lastTransition (nil for nil).
func ToKit(lt *clusterv1.LastTransition) *reconciler.Transition {
	if lt == nil {
		return nil
	}
	return &reconciler.Transition{Table: lt.Table, Row: lt.Row, From: lt.From, To: lt.To,
		Action: lt.Action, Outcome: lt.Outcome, Message: lt.Message, Time: lt.Time}
}

// FromKit returns the status lastTransition of the kit's record (nil for nil).
func FromKit(lt *reconciler.Transition) *clusterv1.LastTransition {
	if lt == nil {
		return nil
	}
	return &clusterv1.LastTransition{Table: lt.Table, Row: lt.Row, From: lt.From, To: lt.To,
		Action: lt.Action, Outcome: lt.Outcome, Message: lt.Message, Time: lt.Time}
}
