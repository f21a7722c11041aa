package machine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// A MachineDeployment wakes its Machines only for what can change their
// UpToDate condition, not for the scaling and status updates of a rollout.
func TestRolloutChangedWakesForWhatMakesMachinesOutOfDate(t *testing.T) {
	base := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.RevisionAnnotation: "1"}}}
	base.Spec.Replicas = ptr.To[int32](3)
	base.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachineTemplate", Name: "v1"}
	p := rolloutChanged()
	for _, tc := range []struct {
		name   string
		change func(*clusterv1.MachineDeployment)
		want   bool
	}{
		{"scaled", func(md *clusterv1.MachineDeployment) { md.Spec.Replicas = ptr.To[int32](5) }, false},
		{"status", func(md *clusterv1.MachineDeployment) { md.Status.AvailableReplicas = 2 }, false},
		{"a label of the template", func(md *clusterv1.MachineDeployment) {
			md.Spec.Template.ObjectMeta.Labels = map[string]string{"tier": "web"}
		}, false},
		{"a new infrastructure template", func(md *clusterv1.MachineDeployment) { md.Spec.Template.Spec.InfrastructureRef.Name = "v2" }, true},
		{"a new version", func(md *clusterv1.MachineDeployment) { md.Spec.Template.Spec.Version = "v1.37.1" }, true},
		{"rollout.after", func(md *clusterv1.MachineDeployment) {
			md.Spec.Rollout.After = &metav1.Time{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
		}, true},
		{"a new revision", func(md *clusterv1.MachineDeployment) { md.Annotations[clusterv1.RevisionAnnotation] = "2" }, true},
	} {
		cur := base.DeepCopy()
		tc.change(cur)
		if got := p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: cur}); got != tc.want {
			t.Errorf("%s: wakes %v, want %v", tc.name, got, tc.want)
		}
	}
	if p.Create(event.CreateEvent{Object: base}) || p.Delete(event.DeleteEvent{Object: base}) {
		t.Error("a deployment's creation or deletion wakes its Machines")
	}
}
