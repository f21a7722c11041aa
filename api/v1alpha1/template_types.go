package v1alpha1

// TemplateMetadata is the metadata a template gives the objects cloned from
// it: labels and annotations only (names, owners and the rest are set by
// whoever clones).
type TemplateMetadata struct {
	// labels are added to every object cloned from the template.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to every object cloned from the template.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Annotations map[string]string `json:"annotations,omitempty"`
}
