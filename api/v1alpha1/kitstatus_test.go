package v1alpha1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/krtt-dev/krtt/api/kit"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestKitStatus: what the kit writes through each type's kit.Status lands in
// that type's own status fields (a Machine's phase is a MachinePhase) and
// reads back the same.
func TestKitStatus(t *testing.T) {
	since := metav1.Now()
	rec := kit.Record{State: "Running", StateSince: &since, Phase: "Running", ObservedGeneration: 3,
		LastTransition: &kit.LastTransition{Table: "t", Row: "N40", From: "Running", To: "Running",
			Via: []kit.ViaRow{{Table: "t", Row: "N39", From: "Provisioned", To: "Running"}}}}
	conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	m, ms, c, md := &clusterv1.Machine{}, &clusterv1.MachineSet{}, &clusterv1.Cluster{}, &clusterv1.MachineDeployment{}
	for _, o := range []kit.Status{m, ms, c, md} {
		o.SetRecord(rec)
		o.SetConditions(conds)
		if got := o.GetRecord(); !equality.Semantic.DeepEqual(got, rec) {
			t.Errorf("%T: record %+v, want %+v", o, got, rec)
		}
		if got := o.GetConditions(); len(got) != 1 || got[0].Type != "Ready" {
			t.Errorf("%T: conditions %+v", o, got)
		}
	}
	if m.Status.Phase != clusterv1.MachinePhaseRunning || m.Status.State != "Running" || m.Status.StateSince != &since ||
		m.Status.ObservedGeneration != 3 || m.Status.LastTransition.Row != "N40" || len(m.Status.Conditions) != 1 {
		t.Errorf("Machine status %+v", m.Status)
	}
	if ms.Status.Phase != "Running" || ms.Status.LastTransition.Via[0].Row != "N39" {
		t.Errorf("MachineSet status %+v", ms.Status)
	}
	if c.Status.State != "Running" || c.Status.ObservedGeneration != 3 {
		t.Errorf("Cluster status %+v", c.Status)
	}
}
