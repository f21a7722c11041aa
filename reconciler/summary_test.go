package reconciler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A summary lists issues and unknowns in the gates' order; a
// negative gate is an issue while True; an optional gate not set is left
// out and a required one is Unknown "not yet reported".
func TestSummarize(t *testing.T) {
	c := func(typ string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg}
	}
	gates := []Gate{{Type: "Deleting", Negative: true}, {Type: "A"}, {Type: "B"}, {Type: "C", Optional: true}}
	for _, tc := range []struct {
		name       string
		conds      []metav1.Condition
		wantStatus metav1.ConditionStatus
		wantMsg    string
	}{
		{"all fine", []metav1.Condition{c("Deleting", "False", "NotDeleting", ""), c("A", "True", "Ok", ""), c("B", "True", "Ok", "")}, "True", ""},
		{"required missing", []metav1.Condition{c("Deleting", "False", "NotDeleting", ""), c("A", "True", "Ok", "")}, "Unknown", "* B: Condition not yet reported"},
		{"issues and unknowns in gate order",
			[]metav1.Condition{c("Deleting", "False", "NotDeleting", ""), c("A", "Unknown", "Probing", "no answer yet"), c("B", "False", "Down", "")},
			"False", "* A: no answer yet\n* B: Down"},
		{"a bulleted message goes below",
			[]metav1.Condition{c("Deleting", "False", "NotDeleting", ""), c("A", "False", "NotHealthy", "* Node.Ready: down\n* Node.DiskPressure: full"), c("B", "True", "Ok", "")},
			"False", "* A:\n  * Node.Ready: down\n  * Node.DiskPressure: full"},
		{"plain lines among bullets are made bullets",
			[]metav1.Condition{c("Deleting", "False", "NotDeleting", ""), c("A", "True", "Ok", ""), c("B", "False", "Down", "Drain not completed yet\n* Pod p1: stuck")},
			"False", "* B:\n  * Drain not completed yet\n    * Pod p1: stuck"},
		{"negative gate True", []metav1.Condition{c("Deleting", "True", "WaitingForWorkersDeletion", "3 Machines"), c("A", "True", "Ok", ""), c("B", "True", "Ok", "")},
			"False", "* Deleting: 3 Machines"},
		{"optional set and False", []metav1.Condition{c("Deleting", "False", "NotDeleting", ""), c("A", "True", "Ok", ""), c("B", "True", "Ok", ""), c("C", "False", "Bad", "c is bad")},
			"False", "* C: c is bad"},
	} {
		st, msg := Summarize(tc.conds, gates...)
		if st != tc.wantStatus || msg != tc.wantMsg {
			t.Errorf("%s: %s %q, want %s %q", tc.name, st, msg, tc.wantStatus, tc.wantMsg)
		}
	}
}

// A gate whose condition type is read already is not added again.
func TestAddGate(t *testing.T) {
	gates := []Gate{{Type: "Deleting", Negative: true}, {Type: "A"}}
	gates = AddGate(gates, Gate{Type: "A", Negative: true})
	gates = AddGate(gates, Gate{Type: "example.com/X", Negative: true})
	gates = AddGate(gates, Gate{Type: "example.com/X"})
	if len(gates) != 3 || gates[1].Negative || gates[2].Type != "example.com/X" || !gates[2].Negative {
		t.Errorf("gates %+v", gates)
	}
}
