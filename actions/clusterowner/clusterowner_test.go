package clusterowner

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestEnsureThenSet(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: types.UID("u1")}}
	ms := &clusterv1.MachineSet{}
	if Set(ms, "c1", c) {
		t.Fatal("a bare MachineSet reads as set")
	}
	Ensure(ms, "c1", c)
	if !Set(ms, "c1", c) {
		t.Fatalf("after Ensure: labels %v, owners %v", ms.Labels, ms.OwnerReferences)
	}
	// The Cluster recreated under its name: the old reference is replaced.
	c2 := c.DeepCopy()
	c2.UID = "u2"
	if Set(ms, "c1", c2) {
		t.Fatal("a reference to the earlier Cluster of the name reads as set")
	}
	Ensure(ms, "c1", c2)
	if len(ms.OwnerReferences) != 1 || ms.OwnerReferences[0].UID != "u2" {
		t.Fatalf("owners %v, want the one reference to u2", ms.OwnerReferences)
	}
}

func TestControlledObjectGetsOnlyTheLabel(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: types.UID("u1")}}
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: "md", UID: "md", Controller: ptr.To(true)}}}}
	if Set(ms, "c1", c) {
		t.Fatal("set without the label")
	}
	Ensure(ms, "c1", c)
	if !Set(ms, "c1", c) || len(ms.OwnerReferences) != 1 {
		t.Fatalf("labels %v, owners %v: want the label and only the controller", ms.Labels, ms.OwnerReferences)
	}
}
