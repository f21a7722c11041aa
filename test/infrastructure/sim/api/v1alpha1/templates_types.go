package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The templates follow the Cluster API provider contract for templates:
// spec.template.spec is the spec of the object a MachineSet clones (kind:
// the template's kind without the Template suffix), spec.template.metadata
// its labels and annotations. The sim controllers never act on templates.

// SimMachineTemplateResource is what a SimMachine cloned from the template
// gets.
type SimMachineTemplateResource struct {
	// metadata: labels and annotations of every cloned SimMachine.
	// +optional
	ObjectMeta clusterv1.TemplateMetadata `json:"metadata,omitempty,omitzero"`

	// spec of every cloned SimMachine.
	// +required
	Spec SimMachineSpec `json:"spec"`
}

// SimMachineTemplateSpec is the desired state of a SimMachineTemplate.
type SimMachineTemplateSpec struct {
	// template is cloned into one SimMachine per Machine.
	// +required
	Template SimMachineTemplateResource `json:"template"`
}

// SimMachineTemplate is the template a MachineSet clones SimMachines from.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simmachinetemplates,scope=Namespaced,categories=krtt
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SimMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the template.
	// +required
	Spec SimMachineTemplateSpec `json:"spec"`
}

// SimMachineTemplateList is a list of SimMachineTemplates.
//
// +kubebuilder:object:root=true
type SimMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimMachineTemplate `json:"items"`
}

// SimBootstrapConfigTemplateResource is what a SimBootstrapConfig cloned from
// the template gets.
type SimBootstrapConfigTemplateResource struct {
	// metadata: labels and annotations of every cloned SimBootstrapConfig.
	// +optional
	ObjectMeta clusterv1.TemplateMetadata `json:"metadata,omitempty,omitzero"`

	// spec of every cloned SimBootstrapConfig.
	// +optional
	Spec SimBootstrapConfigSpec `json:"spec,omitempty,omitzero"`
}

// SimBootstrapConfigTemplateSpec is the desired state of a
// SimBootstrapConfigTemplate.
type SimBootstrapConfigTemplateSpec struct {
	// template is cloned into one SimBootstrapConfig per Machine.
	// +required
	Template SimBootstrapConfigTemplateResource `json:"template"`
}

// SimBootstrapConfigTemplate is the template a MachineSet clones
// SimBootstrapConfigs from.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simbootstrapconfigtemplates,scope=Namespaced,categories=krtt
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SimBootstrapConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the template.
	// +required
	Spec SimBootstrapConfigTemplateSpec `json:"spec"`
}

// SimBootstrapConfigTemplateList is a list of SimBootstrapConfigTemplates.
//
// +kubebuilder:object:root=true
type SimBootstrapConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimBootstrapConfigTemplate `json:"items"`
}

func init() {
	register(&SimMachineTemplate{}, &SimMachineTemplateList{},
		&SimBootstrapConfigTemplate{}, &SimBootstrapConfigTemplateList{})
}
