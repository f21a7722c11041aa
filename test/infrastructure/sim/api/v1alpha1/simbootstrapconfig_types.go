package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimBootstrapConfigSpec is the desired state of a SimBootstrapConfig.
type SimBootstrapConfigSpec struct {
	// format is the format of the bootstrap data to generate (free text, for
	// example cloud-config).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Format string `json:"format,omitempty"`
}

// SimBootstrapConfigInitializationStatus records the bootstrap milestones.
type SimBootstrapConfigInitializationStatus struct {
	// dataSecretCreated is true once the bootstrap data secret exists.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// SimBootstrapConfigStatus is the observed state of a SimBootstrapConfig.
type SimBootstrapConfigStatus struct {
	// initialization records the bootstrap milestones.
	// +optional
	Initialization SimBootstrapConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// dataSecretName is the name of the Secret holding the bootstrap data.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName *string `json:"dataSecretName,omitempty"`

	// conditions describe the current state of the SimBootstrapConfig.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimBootstrapConfig is a simulated bootstrap config: its controller writes
// a data secret and reports it the way a real bootstrap provider does.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=simbootstrapconfigs,scope=Namespaced,categories=krtt
// +kubebuilder:printcolumn:name="DataSecret",type="string",JSONPath=".status.dataSecretName"
// +kubebuilder:printcolumn:name="Created",type="boolean",JSONPath=".status.initialization.dataSecretCreated"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SimBootstrapConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the SimBootstrapConfig.
	// +optional
	Spec SimBootstrapConfigSpec `json:"spec,omitempty"`

	// status is the observed state of the SimBootstrapConfig.
	// +optional
	Status SimBootstrapConfigStatus `json:"status,omitempty,omitzero"`
}

// SimBootstrapConfigList is a list of SimBootstrapConfigs.
//
// +kubebuilder:object:root=true
type SimBootstrapConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimBootstrapConfig `json:"items"`
}

func init() {
	register(&SimBootstrapConfig{}, &SimBootstrapConfigList{})
}
