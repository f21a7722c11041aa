package contract

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func template(kind string, template map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	if template != nil {
		u.Object["spec"] = map[string]any{"template": template}
	}
	u.SetAPIVersion("infrastructure.example.com/v1beta2")
	u.SetKind(kind)
	u.SetNamespace("ns")
	u.SetName("workers")
	return u
}

func TestFromTemplate(t *testing.T) {
	tpl := template("DockerMachineTemplate", map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{"tier": "worker", "cluster.krtt.dev/cluster-name": "overridden"},
			"annotations": map[string]any{"note": "from the template"},
		},
		"spec": map[string]any{"image": "kindest/node", "extra": map[string]any{"mounts": []any{"a"}}},
	})
	owner := metav1.OwnerReference{APIVersion: "cluster.krtt.dev/v1alpha1", Kind: "MachineSet", Name: "ms", UID: "u1", Controller: ptr.To(true)}
	// The Machine's labels and annotations win over the template's; the
	// cluster-name label and the cloned-from annotations over both.
	got, err := FromTemplate(tpl, Clone{Name: "ms-abcde", ClusterName: "c1", Owner: &owner,
		Labels:      map[string]string{"cluster.krtt.dev/set-name": "ms", "pool": "a", "tier": "machine"},
		Annotations: map[string]string{"note": "from the Machine", "team": "x", ClonedFromNameAnnotation: "spoofed"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetKind() != "DockerMachine" || got.GetAPIVersion() != "infrastructure.example.com/v1beta2" {
		t.Errorf("kind %s apiVersion %s, want DockerMachine infrastructure.example.com/v1beta2", got.GetKind(), got.GetAPIVersion())
	}
	if got.GetName() != "ms-abcde" || got.GetNamespace() != "ns" {
		t.Errorf("name %s/%s, want ns/ms-abcde", got.GetNamespace(), got.GetName())
	}
	wantLabels := map[string]string{"tier": "machine", "pool": "a", "cluster.krtt.dev/cluster-name": "c1", "cluster.krtt.dev/set-name": "ms"}
	if !reflect.DeepEqual(got.GetLabels(), wantLabels) {
		t.Errorf("labels %v, want %v", got.GetLabels(), wantLabels)
	}
	wantAnn := map[string]string{"note": "from the Machine", "team": "x", ClonedFromNameAnnotation: "workers", ClonedFromGroupKindAnnotation: "DockerMachineTemplate.infrastructure.example.com"}
	if !reflect.DeepEqual(got.GetAnnotations(), wantAnn) {
		t.Errorf("annotations %v, want %v", got.GetAnnotations(), wantAnn)
	}
	spec, _, _ := unstructured.NestedMap(got.Object, "spec")
	if !reflect.DeepEqual(spec, map[string]any{"image": "kindest/node", "extra": map[string]any{"mounts": []any{"a"}}}) {
		t.Errorf("spec %v", spec)
	}
	if refs := got.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "u1" {
		t.Errorf("owner references %v", refs)
	}
	// The clone is a copy: changing it leaves the template alone.
	_ = unstructured.SetNestedField(got.Object, "other", "spec", "image")
	if v, _, _ := unstructured.NestedString(tpl.Object, "spec", "template", "spec", "image"); v != "kindest/node" {
		t.Errorf("the template changed with its clone: image %q", v)
	}
}

func TestFromTemplateWithoutMetadataOrSpec(t *testing.T) {
	got, err := FromTemplate(template("SimBootstrapConfigTemplate", map[string]any{}), Clone{Name: "m", ClusterName: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetKind() != "SimBootstrapConfig" {
		t.Errorf("kind %s", got.GetKind())
	}
	if spec, found, _ := unstructured.NestedMap(got.Object, "spec"); !found || len(spec) != 0 {
		t.Errorf("spec %v (found %v), want an empty object", spec, found)
	}
	if got.GetLabels()["cluster.krtt.dev/cluster-name"] != "c1" || len(got.GetOwnerReferences()) != 0 {
		t.Errorf("labels %v owners %v", got.GetLabels(), got.GetOwnerReferences())
	}
}

func TestFromTemplateRefusesNonTemplates(t *testing.T) {
	for _, tc := range []struct {
		name string
		tpl  *unstructured.Unstructured
		want string
	}{
		{"kind without the suffix", template("SimMachine", map[string]any{"spec": map[string]any{}}), `kind "SimMachine" is not a template kind`},
		{"kind that is only the suffix", template("Template", map[string]any{"spec": map[string]any{}}), `kind "Template" is not a template kind`},
		{"no spec.template", template("SimMachineTemplate", nil), "SimMachineTemplate workers has no spec.template"},
		{"spec.template.spec not an object", template("SimMachineTemplate", map[string]any{"spec": "x"}), "spec.template.spec is not an object"},
		{"labels not strings", template("SimMachineTemplate", map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": int64(1)}}}), "spec.template.metadata.labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromTemplate(tc.tpl, Clone{Name: "m", ClusterName: "c1"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMissingKinds(t *testing.T) {
	for _, tc := range []struct {
		kinds []string
		want  string
	}{
		{nil, ""},
		{[]string{"SimMachineTemplate"}, "SimMachineTemplate does not exist"},
		{[]string{"SimBootstrapConfigTemplate", "SimMachineTemplate"}, "SimBootstrapConfigTemplate and SimMachineTemplate do not exist"},
	} {
		if got := MissingKinds(tc.kinds); got != tc.want {
			t.Errorf("MissingKinds(%v) = %q, want %q", tc.kinds, got, tc.want)
		}
	}
}

func TestEntries(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"versions": []any{map[string]any{"version": "v1.37.0"}, "not an object", map[string]any{"version": "v1.37.1"}},
		"phase":    "Running",
	}}}
	if got := Entries(u, "status", "versions"); len(got) != 2 || got[1]["version"] != "v1.37.1" {
		t.Errorf("entries %v", got)
	}
	if Entries(u, "status", "phase") != nil || Entries(u, "status", "missing") != nil || Entries(nil, "status") != nil {
		t.Error("a field that is no list, or none, gave entries")
	}
}
