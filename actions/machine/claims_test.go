package machine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Whom a provider object belongs to, for each kind of owner a Machine may
// meet; an empty claim lets the Machine adopt and delete the object.
func TestClaimOf(t *testing.T) {
	krtt := clusterv1.GroupVersion.String()
	setRef := metav1.OwnerReference{APIVersion: krtt, Kind: "MachineSet", Name: "workers", UID: "set-uid", Controller: ptr.To(true)}
	machine := func(labels map[string]string, owners ...metav1.OwnerReference) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "m1-uid", Labels: labels, OwnerReferences: owners},
			Spec: clusterv1.MachineSpec{ClusterName: "c1"}}
	}
	object := func(kind, name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("sim.krtt.dev/v1alpha1")
		u.SetKind(kind)
		u.SetName(name)
		u.SetOwnerReferences(owners)
		return u
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}}}
	set := clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "workers"}}
	set.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachineTemplate", Name: "workers"}
	set.Spec.Template.Spec.Bootstrap.ConfigRef = &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfigTemplate", Name: "workers"}
	mine := metav1.OwnerReference{APIVersion: krtt, Kind: "Machine", Name: "m1", UID: "m1-uid", Controller: ptr.To(true)}

	for _, tc := range []struct {
		name    string
		machine *clusterv1.Machine
		obj     *unstructured.Unstructured
		want    string
	}{
		{"free", machine(nil), object("SimMachine", "m1"), ""},
		{"controlled by this Machine", machine(nil), object("SimMachine", "m1", mine), ""},
		{"owned by its Cluster", machine(nil), object("SimMachine", "m1", metav1.OwnerReference{APIVersion: krtt, Kind: "Cluster", Name: "c1", UID: "c1-uid"}), ""},
		{"created by its own MachineSet", machine(nil, setRef), object("SimMachine", "m1", setRef), ""},
		{"created by another MachineSet", machine(nil), object("SimMachine", "x", setRef),
			"SimMachine/x is controlled by MachineSet/workers"},
		{"another Machine's", machine(nil), object("SimMachine", "x", metav1.OwnerReference{APIVersion: krtt, Kind: "Machine", Name: "m2", UID: "m2-uid", Controller: ptr.To(true)}),
			"SimMachine/x is controlled by Machine/m2"},
		{"owned by something unknown", machine(nil), object("SimMachine", "x", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "cm-uid"}),
			"SimMachine/x is owned by ConfigMap/keep"},
		{"a MachineSet's infrastructure template", machine(nil), object("SimMachineTemplate", "workers"),
			"SimMachineTemplate/workers is the infrastructure template of MachineSet/workers"},
		{"a MachineSet's bootstrap template, taken over by an earlier version", machine(nil), object("SimBootstrapConfigTemplate", "workers", mine),
			"SimBootstrapConfigTemplate/workers is the bootstrap template of MachineSet/workers"},
		{"a template no MachineSet uses", machine(nil), object("SimMachineTemplate", "spare"),
			"SimMachineTemplate/spare is a template (its kind ends in Template): a MachineSet clones it for each of its Machines, no Machine uses it"},
		{"the control plane", machine(nil), object("SimControlPlane", "cp"), "SimControlPlane/cp is the control plane of Cluster/c1"},
		{"created by the control plane for a control-plane Machine", machine(map[string]string{clusterv1.ControlPlaneLabel: ""}),
			object("SimMachine", "m1", metav1.OwnerReference{APIVersion: "sim.krtt.dev/v1alpha1", Kind: "SimControlPlane", Name: "cp", UID: "cp-uid", Controller: ptr.To(true)}), ""},
		{"controlled by the control plane, for a worker", machine(nil),
			object("SimMachine", "x", metav1.OwnerReference{APIVersion: "sim.krtt.dev/v1alpha1", Kind: "SimControlPlane", Name: "cp", UID: "cp-uid", Controller: ptr.To(true)}),
			"SimMachine/x is controlled by SimControlPlane/cp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Scope{Machine: tc.machine, Cluster: cluster}
			if got := claimOf(s, tc.obj, []clusterv1.MachineSet{set}); got != tc.want {
				t.Errorf("claim %q, want %q", got, tc.want)
			}
		})
	}
}
