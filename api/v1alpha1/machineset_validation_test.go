package v1alpha1_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The MachineSet catalog: bad MachineSets and the refusal a user gets from
// the API server (each want is part of the refusal's text).

func baseMachineSet(name string) obj {
	return obj{
		"apiVersion": clusterv1.GroupVersion.String(),
		"kind":       "MachineSet",
		"metadata":   obj{"namespace": ns, "name": name},
		"spec": obj{
			"clusterName": "c1",
			"replicas":    int64(3),
			"selector":    obj{"matchLabels": obj{"pool": "workers"}},
			"template": obj{
				"metadata": obj{"labels": obj{"pool": "workers", "tier": "web"}},
				"spec": obj{
					"clusterName":       "c1",
					"bootstrap":         obj{"configRef": obj{"apiGroup": "sim.krtt.dev", "kind": "SimBootstrapConfigTemplate", "name": "workers"}},
					"infrastructureRef": obj{"apiGroup": "sim.krtt.dev", "kind": "SimMachineTemplate", "name": "workers"},
				},
			},
		},
	}
}

var machineSetCatalog = []partialRefusal{
	{name: "negative replicas", mutate: set("spec.replicas", int64(-1)),
		want: `spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`},
	{name: "absurd replicas", mutate: set("spec.replicas", int64(100000)),
		want: `spec.replicas in body should be less than or equal to 10000`},
	{name: "selector not matching the template", mutate: set("spec.selector.matchLabels", obj{"pool": "db"}),
		want: `selector does not match the template: every selector.matchLabels entry must be in template.metadata.labels with the same value`},
	{name: "template without labels", mutate: del("spec.template.metadata"),
		want: `selector does not match the template`},
	{name: "empty selector", mutate: set("spec.selector", obj{}),
		want: `spec.selector.matchLabels: Required value`},
	{name: "empty matchLabels", mutate: set("spec.selector.matchLabels", obj{}),
		want: `spec.selector.matchLabels: Invalid value: 0: spec.selector.matchLabels in body should have at least 1 properties`},
	{name: "selector with matchExpressions", mutate: set("spec.selector.matchExpressions", []any{obj{"key": "pool", "operator": "Exists"}}),
		want: `strict decoding error: unknown field "spec.selector.matchExpressions"`},
	{name: "no selector", mutate: del("spec.selector"),
		want: `spec.selector: Required value`},
	{name: "infrastructure kind without Template", mutate: set("spec.template.spec.infrastructureRef.kind", "SimMachine"),
		want: `template.spec.infrastructureRef must name an infrastructure template: its kind is the machine kind followed by Template (e.g. SimMachineTemplate)`},
	{name: "infrastructure kind only Template", mutate: set("spec.template.spec.infrastructureRef.kind", "Template"),
		want: `template.spec.infrastructureRef must name an infrastructure template`},
	{name: "bootstrap kind without Template", mutate: set("spec.template.spec.bootstrap.configRef.kind", "SimBootstrapConfig"),
		want: `template.spec.bootstrap.configRef must name a bootstrap config template`},
	{name: "no infrastructure template", mutate: del("spec.template.spec.infrastructureRef"),
		want: `spec.template.spec.infrastructureRef: Required value`},
	{name: "template of another Cluster", mutate: set("spec.template.spec.clusterName", "c2"),
		want: `template.spec.clusterName must equal clusterName`},
	{name: "control-plane taint on workers", mutate: set("spec.template.spec.taints", []any{obj{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule", "propagation": "Always"}}),
		want: `spec.template: Invalid value: spec.taints cannot hold node-role.kubernetes.io/control-plane: the Machines of a MachineSet or MachineDeployment are workers`},
	{name: "template with a providerID", mutate: set("spec.template.spec.providerID", "sim://x"),
		want: `template.spec.providerID must not be set: every Machine gets its own from its infrastructure`},
	{name: "built-in template group", mutate: set("spec.template.spec.infrastructureRef.apiGroup", "apps"),
		want: `apiGroup must be the API group of a provider's custom resource`},
	{name: "unknown deletion order", mutate: set("spec.deletion.order", "Largest"),
		want: `spec.deletion.order: Unsupported value: "Largest": supported values: "Random", "Newest", "Oldest"`},
	{name: "maxInFlight 0", mutate: set("spec.remediation.maxInFlight", int64(0)),
		want: `maxInFlight must be a number of Machines from 1 to 1000 or a percentage from 1% to 100%`},
	{name: "maxInFlight 0%", mutate: set("spec.remediation.maxInFlight", "0%"),
		want: `maxInFlight must be a number of Machines from 1 to 1000 or a percentage from 1% to 100%`},
	{name: "maxInFlight not a percentage", mutate: set("spec.remediation.maxInFlight", "half"),
		want: `maxInFlight must be a number of Machines from 1 to 1000 or a percentage from 1% to 100%`},
	{name: "maxUnhealthy over 100%", mutate: set("spec.remediation.maxUnhealthy", "150%"),
		want: `maxUnhealthy must be a number of Machines (0 or more) or a percentage from 0% to 100%`},
	{name: "negative maxUnhealthy", mutate: set("spec.remediation.maxUnhealthy", int64(-2)),
		want: `maxUnhealthy must be a number of Machines (0 or more) or a percentage from 0% to 100%`},
	{name: "negative minReadySeconds", mutate: set("spec.template.spec.minReadySeconds", int64(-5)),
		want: `spec.template.spec.minReadySeconds in body should be greater than or equal to 0`},
	{name: "change clusterName", update: true, mutate: all(set("spec.clusterName", "c2"), set("spec.template.spec.clusterName", "c2")),
		want: `spec.clusterName: Invalid value: "c2": clusterName is immutable`},
	{name: "unknown field", mutate: set("spec.machines", int64(3)),
		want: `strict decoding error: unknown field "spec.machines"`},
	{name: "machine name template without random", mutate: set("spec.machineNaming.template", "{{ .machineSet.name }}-worker"),
		want: `machineNaming.template must contain {{ .random }}, so the Machines it names do not collide`},
	{name: "machine name template with an unknown variable", mutate: set("spec.machineNaming.template", "{{ .machineDeployment.name }}-{{ .random }}"),
		want: `machineNaming.template may hold only lowercase letters, digits, '-', '.' and the variables {{ .cluster.name }}, {{ .machineSet.name }} and {{ .random }}`},
	{name: "machine name template with capitals", mutate: set("spec.machineNaming.template", "Worker-{{ .random }}"),
		want: `machineNaming.template may hold only lowercase letters, digits`},
	{name: "machine name template with a Go template action", mutate: set("spec.machineNaming.template", `{{ printf "x" }}{{ .random }}`),
		want: `machineNaming.template may hold only lowercase letters, digits`},
	{name: "machine name template ending in a dash", mutate: set("spec.machineNaming.template", "{{ .random }}-"),
		want: `machineNaming.template must not start or end with '-' or '.'`},
	{name: "empty machine name template", mutate: set("spec.machineNaming.template", ""),
		want: `spec.machineNaming.template in body should be at least 1 chars long`},
}

// TestMachineNamingSpaces: the variables may be written with any spaces
// inside the braces, as Go templates (and Cluster API) allow; {{ .random }}
// is required as Cluster API spells it.
func TestMachineNamingSpaces(t *testing.T) {
	freshNamespace(t)
	u := &unstructured.Unstructured{Object: baseMachineSet("naming-spaces")}
	set("spec.machineNaming.template", "{{.cluster.name}}-{{  .machineSet.name}}-{{ .random }}")(u.Object)
	if err := env.Client.Create(context.Background(), u, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("refused: %v", err)
	}
}

func TestMachineSetBadInputCatalog(t *testing.T) {
	runPartialRefusals(t, "MachineSet", "kms", baseMachineSet, machineSetCatalog)
}

// TestMachineSetDefaultsAndScale: the defaults apply, and the scale
// subresource (kubectl scale) changes spec.replicas.
func TestMachineSetDefaultsAndScale(t *testing.T) {
	freshNamespace(t)
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: baseMachineSet("defaults")}
	del("spec.replicas")(u.Object)
	set("spec.remediation", obj{"maxUnhealthy": int64(2)})(u.Object)
	if err := env.Client.Create(ctx, u, client.FieldValidation("Strict")); err != nil {
		t.Fatal(err)
	}
	ms := &clusterv1.MachineSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "defaults"}, ms); err != nil {
		t.Fatal(err)
	}
	if ms.Spec.Replicas == nil || *ms.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want the default 1", ms.Spec.Replicas)
	}
	if ms.Spec.Deletion.Order != clusterv1.DeletionOrderRandom {
		t.Errorf("deletion.order %q, want Random", ms.Spec.Deletion.Order)
	}
	if r := ms.Spec.Remediation; r.MaxInFlight == nil || r.MaxInFlight.IntValue() != 1 || r.MaxUnhealthy == nil || r.MaxUnhealthy.IntValue() != 2 {
		t.Errorf("remediation %+v, want maxInFlight 1 and the given maxUnhealthy 2", r)
	}

	scale := &unstructured.Unstructured{Object: obj{"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": obj{"replicas": int64(5)}}}
	if err := env.Client.SubResource("scale").Update(ctx, ms, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scale: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms); err != nil {
		t.Fatal(err)
	}
	if *ms.Spec.Replicas != 5 {
		t.Errorf("replicas %d after scaling to 5", *ms.Spec.Replicas)
	}
}

// TestReplicaCountersReadZero: once a status is written, the ready,
// available and up-to-date counters of a MachineSet and a MachineDeployment
// read 0 rather than being absent, as Cluster API reports them.
func TestReplicaCountersReadZero(t *testing.T) {
	freshNamespace(t)
	ctx := context.Background()
	for _, u := range []*unstructured.Unstructured{{Object: baseMachineSet("counters")}, {Object: baseMachineDeployment("counters")}} {
		if err := env.Client.Create(ctx, u, client.FieldValidation("Strict")); err != nil {
			t.Fatal(err)
		}
		patch := []byte(`{"status":{"replicas":0}}`)
		if err := env.Client.Status().Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatalf("%s status: %v", u.GetKind(), err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"readyReplicas", "availableReplicas", "upToDateReplicas"} {
			if v, found, err := unstructured.NestedInt64(got.Object, "status", f); !found || err != nil || v != 0 {
				t.Errorf("%s status.%s: %d, found %v, err %v; want 0", u.GetKind(), f, v, found, err)
			}
		}
	}
}

// TestMachineSetTemplateRefsAreMutable: a MachineSet's template may be
// pointed at other templates (Cluster API allows it; the Machines it already
// has keep theirs), although the same fields are immutable on a Machine
// (TestBadInputCatalog).
func TestMachineSetTemplateRefsAreMutable(t *testing.T) {
	freshNamespace(t)
	ctx := context.Background()
	strict := client.FieldValidation("Strict")
	u := &unstructured.Unstructured{Object: baseMachineSet("repoint")}
	if err := env.Client.Create(ctx, u, strict); err != nil {
		t.Fatal(err)
	}
	for _, change := range []struct {
		name   string
		mutate func(obj)
	}{
		{"new infrastructure template", set("spec.template.spec.infrastructureRef.name", "v2")},
		{"new bootstrap template", set("spec.template.spec.bootstrap.configRef.name", "v2")},
		{"bootstrap data secret instead of a template", all(del("spec.template.spec.bootstrap.configRef"), set("spec.template.spec.bootstrap.dataSecretName", "data"))},
	} {
		change.mutate(u.Object)
		if err := env.Client.Update(ctx, u, strict); err != nil {
			t.Errorf("%s refused: %v", change.name, err)
		}
	}
}
