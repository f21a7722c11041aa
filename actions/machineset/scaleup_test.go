package machineset

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// A scale-up held by missing templates lists the failed preflight checks
// first, then the missing kinds, as Cluster API's setScalingUpCondition; a
// set not scaling up says a scale-up would be blocked.
func TestScalingUpBlockedByTemplates(t *testing.T) {
	set := &clusterv1.MachineSet{Spec: clusterv1.MachineSetSpec{Replicas: ptr.To(int32(2))}}
	s := &Scope{Set: set, Preflight: []string{"SimControlPlane ns/cp is upgrading (\"ControlPlaneIsStable\" preflight check failed)"},
		MissingKinds: []string{"SimBootstrapConfigTemplate", "SimMachineTemplate"}}
	want := "Scaling up from 0 to 2 replicas is blocked because:\n* SimControlPlane ns/cp is upgrading (\"ControlPlaneIsStable\" preflight check failed)\n* SimBootstrapConfigTemplate and SimMachineTemplate do not exist"
	if got := describeMissingTemplates(context.Background(), s).Message; got != want {
		t.Errorf("R04 says\n%q\nwant\n%q", got, want)
	}

	s = &Scope{Set: set, MissingKinds: []string{"SimMachineTemplate"}, Counts: Counts{Total: 2}}
	mirrorConditions(s)
	c := meta.FindStatusCondition(set.Status.Conditions, clusterv1.ScalingUpCondition)
	if c == nil || c.Status != "False" || c.Reason != "NotScalingUp" || c.Message != "Scaling up would be blocked because SimMachineTemplate does not exist" {
		t.Errorf("ScalingUp %+v, want False NotScalingUp saying a scale-up would be blocked", c)
	}
}
