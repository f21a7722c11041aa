package reconciler

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestMachineVersions(t *testing.T) {
	m := func(spec, kubelet string) *clusterv1.Machine {
		out := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Version: spec}}
		if kubelet != "" {
			out.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: kubelet}
		}
		return out
	}
	got := MachineVersions([]*clusterv1.Machine{
		m("v1.37.1", "v1.37.0"), // the kubelet says what runs
		m("v1.37.1", ""),
		m("v1.9.0", ""), // semantic order: 1.9 before 1.37
		m("", ""),       // no version: not counted
		m("v1.37.1", "v1.37.1"),
		m("custom", ""), // not semantic: last
	})
	if s := fmt.Sprint(got); s != "[{v1.9.0 1} {v1.37.0 1} {v1.37.1 2} {custom 1}]" {
		t.Errorf("versions %s", s)
	}
	if MachineVersions(nil) != nil {
		t.Error("no Machines counted to something")
	}
	sum := SumVersions(got, []clusterv1.StatusVersion{{Version: "v1.37.1", Replicas: 3}, {Version: "v1.38.0", Replicas: 1}})
	if s := fmt.Sprint(sum); s != "[{v1.9.0 1} {v1.37.0 1} {v1.37.1 5} {v1.38.0 1} {custom 1}]" {
		t.Errorf("sum %s", s)
	}
}
