package record

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

func TestRoundTrip(t *testing.T) {
	lt := &clusterv1.LastTransition{Table: "t", Row: "R1", From: "A", To: "B", Action: "Do", Outcome: "Done", Message: "m", Time: metav1.Now(),
		Via: []clusterv1.ViaRow{{Table: "t", Row: "R0", From: "Z", To: "A", Action: "Mark", Message: "marked"}}}
	if got := LastTransition(Transition(lt)); !equality.Semantic.DeepEqual(got, lt) {
		t.Errorf("round trip %+v, want %+v", got, lt)
	}
	if Transition(nil) != nil || LastTransition(nil) != nil {
		t.Error("nil stays nil")
	}
}

// TestStatus: the kit's reader and writer built from Fields reach the
// Machine's own status fields, MachinePhase included.
func TestStatus(t *testing.T) {
	st := Status(func(m *clusterv1.Machine) Fields {
		s := &m.Status
		return Fields{State: &s.State, StateSince: &s.StateSince, Phase: (*string)(&s.Phase),
			ObservedGeneration: &s.ObservedGeneration, LastTransition: &s.LastTransition, Conditions: &s.Conditions}
	})
	since := metav1.Now()
	m := &clusterv1.Machine{}
	st.Set(m, reconciler.Record{State: "Running", StateSince: &since, Phase: "Running", ObservedGeneration: 3,
		LastTransition: &reconciler.Transition{Table: "t", Row: "N40", From: "Running", To: "Running"}})
	if m.Status.State != "Running" || m.Status.Phase != clusterv1.MachinePhaseRunning || m.Status.StateSince != &since ||
		m.Status.ObservedGeneration != 3 || m.Status.LastTransition == nil || m.Status.LastTransition.Row != "N40" {
		t.Fatalf("Set wrote %+v", m.Status)
	}
	got := st.Get(m)
	if got.State != "Running" || got.Phase != "Running" || got.ObservedGeneration != 3 || got.LastTransition.Row != "N40" {
		t.Errorf("Get read %+v", got)
	}
	conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	st.SetConditions(m, conds)
	if len(m.Status.Conditions) != 1 || st.GetConditions(m)[0].Type != "Ready" {
		t.Errorf("conditions %+v", m.Status.Conditions)
	}
}
