package machine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestNodeUpdatesThatOnlyHeartbeatWakeNoMachine(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	base := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "1", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.NodeSpec{ProviderID: "sim://ns/m1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: t0, LastTransitionTime: t0},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: t0, LastTransitionTime: t0},
		}},
	}
	heartbeat := func(n *corev1.Node) {
		n.ResourceVersion = "2"
		n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
		for i := range n.Status.Conditions {
			n.Status.Conditions[i].LastHeartbeatTime = metav1.NewTime(t0.Add(time.Minute))
		}
	}
	cases := []struct {
		name   string
		change func(*corev1.Node)
		wakes  bool
	}{
		{"heartbeat only", heartbeat, false},
		{"nothing at all (a resync)", func(*corev1.Node) {}, false},
		{"Ready goes False", func(n *corev1.Node) { heartbeat(n); n.Status.Conditions[0].Status = corev1.ConditionFalse }, true},
		{"a condition's message", func(n *corev1.Node) { heartbeat(n); n.Status.Conditions[1].Message = "disk nearly full" }, true},
		{"a condition's transition time", func(n *corev1.Node) { n.Status.Conditions[1].LastTransitionTime = metav1.NewTime(t0.Add(time.Second)) }, true},
		{"a new condition", func(n *corev1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: "KernelDeadlock", Status: corev1.ConditionTrue})
		}, true},
		{"a label", func(n *corev1.Node) { heartbeat(n); n.Labels["c"] = "d" }, true},
		{"an annotation", func(n *corev1.Node) { n.Annotations = map[string]string{"x": "y"} }, true},
		{"cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true }, true},
		{"a volume attached", func(n *corev1.Node) {
			n.Status.VolumesAttached = []corev1.AttachedVolume{{Name: "kubernetes.io/csi/d^v1", DevicePath: "/dev/x"}}
		}, true},
		{"being deleted", func(n *corev1.Node) { n.DeletionTimestamp = &t0 }, true},
	}
	p := nodeChangedBeyondHeartbeat()
	for _, c := range cases {
		n := base.DeepCopy()
		c.change(n)
		if got := p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n}); got != c.wakes {
			t.Errorf("%s: wakes the Machine = %v, want %v", c.name, got, c.wakes)
		}
	}
	if !p.Create(event.CreateEvent{Object: base}) || !p.Delete(event.DeleteEvent{Object: base}) {
		t.Error("a Node created or deleted must wake its Machine")
	}
}

// TestVolumeEventsThatWakeAMachine: only a VolumeAttachment that goes, or
// stops being attached, can end a volume wait.
func TestVolumeEventsThatWakeAMachine(t *testing.T) {
	p := volumeDetached()
	va := func(attached bool) *storagev1.VolumeAttachment {
		return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"},
			Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}, Status: storagev1.VolumeAttachmentStatus{Attached: attached}}
	}
	if p.Create(event.CreateEvent{Object: va(true)}) {
		t.Error("a new attachment wakes a Machine")
	}
	if !p.Delete(event.DeleteEvent{Object: va(true)}) {
		t.Error("a deleted attachment does not wake its Machine")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: va(true), ObjectNew: va(false)}) {
		t.Error("a detached volume does not wake its Machine")
	}
	if p.Update(event.UpdateEvent{ObjectOld: va(false), ObjectNew: va(true)}) {
		t.Error("an attach wakes a Machine")
	}
	if p.Update(event.UpdateEvent{ObjectOld: va(true), ObjectNew: va(true)}) {
		t.Error("an update that leaves it attached wakes a Machine")
	}
}
