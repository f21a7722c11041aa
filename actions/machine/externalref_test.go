package machine

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestIndexMachineByExternalRef: a Machine is found by each provider object
// it names (bootstrap config when it has one, infrastructure always), by
// group, kind and name, so an object of a kind that becomes readable wakes
// exactly the Machines that wait on it.
func TestIndexMachineByExternalRef(t *testing.T) {
	infra := clusterv1.ObjectReference{APIGroup: "infrastructure.acme.example", Kind: "AcmeMachine", Name: "m1"}
	withConfig := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: clusterv1.MachineSpec{
		InfrastructureRef: infra,
		Bootstrap:         clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{APIGroup: "bootstrap.acme.example", Kind: "AcmeConfig", Name: "m1-boot"}},
	}}
	got := indexMachineByExternalRef(withConfig)
	want := []string{"infrastructure.acme.example/AcmeMachine/m1", "bootstrap.acme.example/AcmeConfig/m1-boot"}
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	dataSecret := &clusterv1.Machine{Spec: clusterv1.MachineSpec{InfrastructureRef: infra,
		Bootstrap: clusterv1.MachineBootstrap{DataSecretName: new("data")}}}
	if got := indexMachineByExternalRef(dataSecret); !slices.Equal(got, want[:1]) {
		t.Errorf("keys of a Machine without a bootstrap config %v, want %v", got, want[:1])
	}
	if got := indexMachineByExternalRef(&clusterv1.Cluster{}); got != nil {
		t.Errorf("keys of a Cluster %v, want none", got)
	}
}
