package machine

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
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

// TestNodeToMachines: a Node wakes the Machine its annotations name, when
// this operator's cache holds it, and before krtt has annotated it the
// Machines with its providerID, in any namespace.
func TestNodeToMachines(t *testing.T) {
	machine := func(ns, name, providerID string) clusterv1.Machine {
		m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1", UID: types.UID(ns + "/" + name)}}
		m.Spec.ProviderID = &providerID
		return m
	}
	c := memoryCache(t, &clusterv1.MachineList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []clusterv1.Machine{
		machine("east", "m1", "sim://a"), machine("west", "m1", "sim://b"), machine("east", "m2", "sim://c"), machine("west", "m3", "sim://b"),
	}})
	m := mapper{client: readFrom{r: c}}
	node := func(providerID string, machine ...string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{ProviderID: providerID}}
		if len(machine) == 2 {
			n.Annotations = map[string]string{clusterv1.ClusterNamespaceAnnotation: machine[0], clusterv1.MachineAnnotation: machine[1]}
		}
		return n
	}
	cases := []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"annotated, the Machine has the Node's providerID", node("sim://a", "east", "m1"), []string{"east/m1"}},
		{"annotated, no providerID on the Node", node("", "east", "m2"), []string{"east/m2"}},
		{"annotated, the Machine's providerID differs", node("sim://b", "east", "m1"), []string{"east/m1"}},
		{"annotated with a Machine this cache does not hold (another instance's)", node("sim://a", "north", "m1"), nil},
		{"annotated with a Machine of the same name in another namespace", node("sim://c", "west", "m2"), nil},
		{"not annotated yet: every Machine with its providerID", node("sim://b"), []string{"west/m1", "west/m3"}},
		{"not annotated, no providerID", node(""), nil},
		{"not annotated, no Machine has its providerID", node("sim://z"), nil},
		{"only half the annotations: by providerID", func() *corev1.Node {
			n := node("sim://c")
			n.Annotations = map[string]string{clusterv1.MachineAnnotation: "m1"}
			return n
		}(), []string{"east/m2"}},
		{"not a Node", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "east", Name: "m1"}}, nil},
	}
	for _, tc := range cases {
		var got []string
		for _, r := range m.nodeToMachines(context.Background(), tc.obj) {
			got = append(got, r.String())
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: wakes %v, want %v", tc.name, got, tc.want)
		}
	}
}
