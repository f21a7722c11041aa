package uptodate

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestDifferences(t *testing.T) {
	base := clusterv1.MachineSpec{Version: "v1.37.0", FailureDomain: "z1",
		Bootstrap:         clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfigTemplate", Name: "v1"}},
		InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachineTemplate", Name: "v1"}}
	for _, tc := range []struct {
		name   string
		change func(*clusterv1.MachineSpec)
		want   string
	}{
		{"same", func(*clusterv1.MachineSpec) {}, ""},
		{"fields that do not roll", func(s *clusterv1.MachineSpec) {
			s.MinReadySeconds = 30
			s.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "example.com/Installed"}}
			s.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](60)
		}, ""},
		{"version", func(s *clusterv1.MachineSpec) { s.Version = "v1.37.1" }, "Version v1.37.0, v1.37.1 required"},
		{"both templates", func(s *clusterv1.MachineSpec) {
			s.Bootstrap.ConfigRef = &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfigTemplate", Name: "v2"}
			s.InfrastructureRef.Name = "v2"
		}, "SimBootstrapConfig is not up-to-date|SimMachine is not up-to-date"},
		{"failure domain", func(s *clusterv1.MachineSpec) { s.FailureDomain = "z2" }, "Failure domain z1, z2 required"},
	} {
		desired := *base.DeepCopy()
		tc.change(&desired)
		if got := strings.Join(Differences(Of(&base), Of(&desired)), "|"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// A bootstrap given as a data secret name says which names differ.
	cur, want := base.DeepCopy(), base.DeepCopy()
	cur.Bootstrap = clusterv1.MachineBootstrap{DataSecretName: ptr.To("a")}
	want.Bootstrap = clusterv1.MachineBootstrap{DataSecretName: ptr.To("b")}
	if got := strings.Join(Differences(Of(cur), Of(want)), "|"); got != "spec.bootstrap.dataSecretName a, b required" {
		t.Errorf("data secret: %q", got)
	}
}
