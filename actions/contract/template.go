package contract

import (
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TemplateSuffix ends the kind of every provider template: a
// SimMachineTemplate is cloned into a SimMachine.
const TemplateSuffix = "Template"

// Annotations a clone carries, so a user can tell where it came from.
const (
	ClonedFromNameAnnotation      = "cluster.krtt.dev/cloned-from-name"
	ClonedFromGroupKindAnnotation = "cluster.krtt.dev/cloned-from-groupkind"
)

// ClonedKind is the kind of the objects a template of kind templateKind
// clones: the kind without the Template suffix.
func ClonedKind(templateKind string) (string, error) {
	kind, ok := strings.CutSuffix(templateKind, TemplateSuffix)
	if !ok || kind == "" {
		return "", fmt.Errorf("kind %q is not a template kind: a template's kind is the cloned kind followed by %q (e.g. SimMachineTemplate)", templateKind, TemplateSuffix)
	}
	return kind, nil
}

// Clone is what cloning a template needs besides the template.
type Clone struct {
	// Name of the new object: the name of the Machine it is for.
	Name string
	// ClusterName goes into the cluster-name label.
	ClusterName string
	// Labels and Annotations are added after the template's: the Machine's
	// (Cluster API GenerateTemplate gives the clone the Machine's labels and
	// annotations).
	Labels      map[string]string
	Annotations map[string]string
	// Owner becomes the new object's controller owner until its Machine
	// takes it over.
	Owner *metav1.OwnerReference
}

// FromTemplate builds, by the provider contract, the object a template
// describes: kind without the Template suffix, same apiVersion and
// namespace, spec = spec.template.spec, labels and annotations of
// spec.template.metadata plus c.Labels and c.Annotations, the cluster-name
// label and the cloned-from annotations. The result is not created.
func FromTemplate(tpl *unstructured.Unstructured, c Clone) (*unstructured.Unstructured, error) {
	kind, err := ClonedKind(tpl.GetKind())
	if err != nil {
		return nil, err
	}
	template, found, err := unstructured.NestedMap(tpl.Object, "spec", "template")
	if err != nil || !found {
		return nil, fmt.Errorf("%s %s has no spec.template: a template holds the cloned object under spec.template.spec", tpl.GetKind(), tpl.GetName())
	}
	spec, _, err := unstructured.NestedMap(template, "spec")
	if err != nil {
		return nil, fmt.Errorf("%s %s: spec.template.spec is not an object: %w", tpl.GetKind(), tpl.GetName(), err)
	}
	if spec == nil {
		spec = map[string]any{}
	}
	labels, _, err := unstructured.NestedStringMap(template, "metadata", "labels")
	if err != nil {
		return nil, fmt.Errorf("%s %s: spec.template.metadata.labels: %w", tpl.GetKind(), tpl.GetName(), err)
	}
	annotations, _, err := unstructured.NestedStringMap(template, "metadata", "annotations")
	if err != nil {
		return nil, fmt.Errorf("%s %s: spec.template.metadata.annotations: %w", tpl.GetKind(), tpl.GetName(), err)
	}
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, c.Labels)
	labels[clusterv1.ClusterNameLabel] = c.ClusterName
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, c.Annotations)
	annotations[ClonedFromNameAnnotation] = tpl.GetName()
	annotations[ClonedFromGroupKindAnnotation] = tpl.GroupVersionKind().GroupKind().String()

	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(tpl.GetAPIVersion())
	u.SetKind(kind)
	u.SetNamespace(tpl.GetNamespace())
	u.SetName(c.Name)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	if c.Owner != nil {
		u.SetOwnerReferences([]metav1.OwnerReference{*c.Owner})
	}
	return u, nil
}

// MissingKinds words templates that do not exist by their kinds, as Cluster
// API's calculateMissingReferencesMessage does: "SimMachineTemplate does not
// exist", "SimBootstrapConfigTemplate and SimMachineTemplate do not exist";
// "" for none.
func MissingKinds(kinds []string) string {
	switch len(kinds) {
	case 0:
		return ""
	case 1:
		return kinds[0] + " does not exist"
	}
	return strings.Join(kinds, " and ") + " do not exist"
}
