package machinedeployment

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Each MachineSet scaled is an Event in Cluster API's words: a rollout's
// steps say up or down, a scaling while paused names the set with its
// namespace, a failed patch is a Warning, an unchanged size says nothing.
func TestScalingIsToldInClusterAPIsWords(t *testing.T) {
	s := &Scope{}
	ms := func(replicas int) *clusterv1.MachineSet {
		return &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "md-abc"},
			Spec: clusterv1.MachineSetSpec{Replicas: ptr.To(int32(replicas))}}
	}
	from := &Set{MS: ms(2)}
	tellScaled(s, false)(from, ms(3), nil)
	tellScaled(s, false)(from, ms(1), nil)
	tellScaled(s, false)(from, ms(2), nil)
	tellScaled(s, true)(from, ms(4), nil)
	tellScaled(s, false)(from, ms(3), errors.New("conflict"))
	tellScaled(s, true)(from, ms(3), errors.New("conflict"))
	want := []string{
		"Normal SuccessfulScale Scaled up MachineSet md-abc: 2 -> 3",
		"Normal SuccessfulScale Scaled down MachineSet md-abc: 2 -> 1",
		"Normal SuccessfulScale Scaled MachineSet ns/md-abc: 2 -> 4",
		"Warning FailedUpdate Failed to update MachineSet ns/md-abc: conflict",
		"Warning FailedScale Failed to scale MachineSet ns/md-abc: conflict",
	}
	got := s.Told.Take()
	if len(got) != len(want) {
		t.Fatalf("told %d Events, want %d: %+v", len(got), len(want), got)
	}
	for i, tell := range got {
		kind := "Normal"
		if tell.Warning {
			kind = "Warning"
		}
		if line := kind + " " + tell.Reason + " " + tell.Note; line != want[i] {
			t.Errorf("Event %d: %q, want %q", i, line, want[i])
		}
		if tell.Related == nil || tell.Related.GetName() != "md-abc" {
			t.Errorf("Event %d relates to %v, want the MachineSet", i, tell.Related)
		}
	}
}

// Adoption asks for the selector's labels and the deployment's Cluster; an
// empty selector adopts nothing.
func TestAdoptable(t *testing.T) {
	md := &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c1",
		Selector: clusterv1.MachineSetSelector{MatchLabels: map[string]string{"pool": "a"}}}}
	ms := func(cluster string, labels map[string]string) *clusterv1.MachineSet {
		return &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: clusterv1.MachineSetSpec{ClusterName: cluster}}
	}
	for _, tc := range []struct {
		name string
		ms   *clusterv1.MachineSet
		want bool
	}{
		{"match", ms("c1", map[string]string{"pool": "a", "x": "y"}), true},
		{"other value", ms("c1", map[string]string{"pool": "b"}), false},
		{"no labels", ms("c1", nil), false},
		{"other Cluster", ms("c2", map[string]string{"pool": "a"}), false},
	} {
		if got := adoptable(md, tc.ms); got != tc.want {
			t.Errorf("%s: adoptable %v, want %v", tc.name, got, tc.want)
		}
	}
	empty := md.DeepCopy()
	empty.Spec.Selector.MatchLabels = nil
	if adoptable(empty, ms("c1", map[string]string{"pool": "a"})) {
		t.Error("an empty selector adopted a MachineSet")
	}
}

// The current MachineSet is the one whose template rolls out nothing
// against the deployment's, whatever its name and labels (an adopted one),
// the one with the most replicas of several.
func TestCurrentComparesTemplates(t *testing.T) {
	md := &clusterv1.MachineDeployment{}
	md.Spec.Template.Spec.Version = "v1.34.0"
	md.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{Kind: "SimMachineTemplate", Name: "t1"}
	mk := func(name, version string, replicas int) *Set {
		ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.MachineSetSpec{Replicas: ptr.To(int32(replicas))}}
		ms.Spec.Template.Spec = *md.Spec.Template.Spec.DeepCopy()
		ms.Spec.Template.Spec.Version = version
		return &Set{MS: ms}
	}
	s := &Scope{MD: md, Sets: []*Set{mk("old", "v1.33.0", 5), mk("adopted", "v1.34.0", 1), mk("bigger", "v1.34.0", 2)}}
	if got := current(s); got == nil || got.MS.Name != "bigger" {
		t.Errorf("current %v, want bigger", got)
	}
	s.Sets = s.Sets[:2]
	if got := current(s); got == nil || got.MS.Name != "adopted" {
		t.Errorf("current %v, want adopted", got)
	}
	s.Sets = s.Sets[:1]
	if got := current(s); got != nil {
		t.Errorf("current %s, want none", got.MS.Name)
	}
}
