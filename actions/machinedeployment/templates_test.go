package machinedeployment

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Templates that do not exist are named bootstrap kind first, as Cluster
// API's calculateMissingReferencesMessage names them.
func TestMissingTemplatesBootstrapFirst(t *testing.T) {
	gv := schema.GroupVersion{Group: "sim.krtt.dev", Version: "v1alpha1"}
	scheme := runtime.NewScheme()
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	for _, kind := range []string{"SimMachineTemplate", "SimBootstrapConfigTemplate"} {
		scheme.AddKnownTypeWithName(gv.WithKind(kind), &unstructured.Unstructured{})
		mapper.Add(gv.WithKind(kind), meta.RESTScopeNamespace)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).Build()
	md := &clusterv1.MachineDeployment{}
	md.Namespace = "ns"
	md.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{APIGroup: gv.Group, Kind: "SimMachineTemplate", Name: "i"}
	md.Spec.Template.Spec.Bootstrap.ConfigRef = &clusterv1.ObjectReference{APIGroup: gv.Group, Kind: "SimBootstrapConfigTemplate", Name: "b"}
	s := &Scope{MD: md}
	(&Observer{Client: c}).readTemplates(context.Background(), s)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if got, want := blockedBy(s.MissingTemplates), "because SimBootstrapConfigTemplate and SimMachineTemplate do not exist"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// Available names maxUnavailable as Cluster API's setAvailableCondition
// words it under RollingUpdate, and only the counts under other strategies.
func TestAvailableMessage(t *testing.T) {
	for _, tc := range []struct {
		strategy clusterv1.MachineDeploymentStrategyType
		want     string
	}{
		{clusterv1.RollingUpdateStrategy, "1 available replicas, at least 2 required (spec.strategy.rollout.maxUnavailable is 1, spec.replicas is 3)"},
		{clusterv1.OnDeleteStrategy, "1 available replicas, at least 3 required"},
	} {
		md := deployment(3, "1", "1")
		md.Spec.Strategy.Type = tc.strategy
		s := scope(md, nil, set("new", 3, 3, 1, 4))
		mirrorConditions(s)
		c := meta.FindStatusCondition(md.Status.Conditions, clusterv1.AvailableCondition)
		if c == nil || c.Status != "False" || c.Message != tc.want {
			t.Errorf("%s: Available %+v, want False %q", tc.strategy, c, tc.want)
		}
	}
	// No MachineSet yet: Cluster API's availableReplicas is unset.
	md := deployment(3, "1", "1")
	mirrorConditions(&Scope{MD: md})
	if c := meta.FindStatusCondition(md.Status.Conditions, clusterv1.AvailableCondition); c == nil || c.Status != "Unknown" ||
		c.Reason != "WaitingForAvailableReplicasSet" || c.Message != "Waiting for status.availableReplicas set" {
		t.Errorf("without a MachineSet: Available %+v, want Unknown WaitingForAvailableReplicasSet", c)
	}
}
