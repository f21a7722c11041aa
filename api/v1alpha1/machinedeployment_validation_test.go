package v1alpha1_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The MachineDeployment catalog: bad MachineDeployments and the refusal a
// user gets from the API server (each want is part of the refusal's text).

func baseMachineDeployment(name string) obj {
	u := baseMachineSet(name)
	u["kind"] = "MachineDeployment"
	return u
}

var machineDeploymentCatalog = []partialRefusal{
	{name: "maxSurge and maxUnavailable both 0", mutate: set("spec.strategy", obj{"rollingUpdate": obj{"maxSurge": int64(0), "maxUnavailable": "0%"}}),
		want: `maxSurge and maxUnavailable must not both be 0`},
	{name: "maxSurge 0 with the default maxUnavailable 0", mutate: set("spec.strategy", obj{"rollingUpdate": obj{"maxSurge": int64(0)}}),
		want: `maxSurge and maxUnavailable must not both be 0`},
	{name: "maxSurge above 100%", mutate: set("spec.strategy", obj{"rollingUpdate": obj{"maxSurge": "150%"}}),
		want: `maxSurge must be a number of Machines (0 or more) or a percentage from 0% to 100%`},
	{name: "unknown strategy", mutate: set("spec.strategy", obj{"type": "BlueGreen"}),
		want: `Unsupported value: "BlueGreen"`},
	{name: "selector not matching the template", mutate: set("spec.selector.matchLabels", obj{"pool": "db"}),
		want: `selector does not match the template`},
	{name: "change the selector", update: true, mutate: all(set("spec.selector.matchLabels", obj{"tier": "web"})),
		want: `selector is immutable`},
	{name: "negative progressDeadlineSeconds", mutate: set("spec.progressDeadlineSeconds", int64(0)),
		want: `spec.progressDeadlineSeconds in body should be greater than or equal to 1`},
	{name: "machine name template without random", mutate: set("spec.machineNaming.template", "{{ .cluster.name }}-worker"),
		want: `machineNaming.template must contain {{ .random }}`},
}

func TestMachineDeploymentBadInputCatalog(t *testing.T) {
	runPartialRefusals(t, "MachineDeployment", "kmd", baseMachineDeployment, machineDeploymentCatalog)
}

// TestMachineDeploymentDefaults: the defaults apply.
func TestMachineDeploymentDefaults(t *testing.T) {
	freshNamespace(t)
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: baseMachineDeployment("defaults")}
	if err := env.Client.Create(ctx, u, client.FieldValidation("Strict")); err != nil {
		t.Fatal(err)
	}
	md := &clusterv1.MachineDeployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "defaults"}, md); err != nil {
		t.Fatal(err)
	}
	ru := md.Spec.Strategy.RollingUpdate
	if md.Spec.Strategy.Type != clusterv1.RollingUpdateStrategy || ru.MaxSurge == nil || ru.MaxSurge.IntValue() != 1 ||
		ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 || ru.Deletion.Order != clusterv1.DeletionOrderRandom {
		t.Errorf("strategy %+v, want RollingUpdate, maxSurge 1, maxUnavailable 0, deletion order Random", md.Spec.Strategy)
	}
	if md.Spec.RevisionHistoryLimit == nil || *md.Spec.RevisionHistoryLimit != 0 || md.Spec.ProgressDeadlineSeconds == nil || *md.Spec.ProgressDeadlineSeconds != 600 {
		t.Errorf("revisionHistoryLimit %v, progressDeadlineSeconds %v, want 0 and 600", ptr.Deref(md.Spec.RevisionHistoryLimit, -1), ptr.Deref(md.Spec.ProgressDeadlineSeconds, -1))
	}
	if r := md.Spec.Remediation; r.MaxInFlight == nil || r.MaxInFlight.IntValue() != 1 {
		t.Errorf("remediation %+v, want maxInFlight 1", r)
	}
}
