package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimControlPlaneSpec is the desired state of a SimControlPlane.
type SimControlPlaneSpec struct {
	// externallyManaged makes the control plane one a service runs outside the
	// Cluster's Machines (as EKS, AKS or GKE do): the sim reports
	// status.externalManagedControlPlane=true, and the Machine controller then
	// does not need a control-plane Machine before it may touch worker Nodes.
	// With false, the control plane is made of the Cluster's control-plane
	// Machines (label cluster.krtt.dev/control-plane).
	// +optional
	// +kubebuilder:default=true
	ExternallyManaged *bool `json:"externallyManaged,omitempty"`

	// controlPlaneEndpoint is where the control plane serves, by the
	// contract; a Cluster whose infrastructure object gives none copies it
	// once the control plane is initialized.
	// +optional
	ControlPlaneEndpoint SimAPIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// version is the Kubernetes version the control plane is asked to run,
	// by the contract (MachineSets compare theirs with it before they
	// create Machines). The sim never reports it: a test plays the
	// provider and writes status.version or status.versions.
	// +optional
	Version string `json:"version,omitempty"`
}

// SimControlPlaneStatus is the observed state of a SimControlPlane, by the
// Cluster API control plane contract.
type SimControlPlaneStatus struct {
	// externalManagedControlPlane is true for a control plane that has no
	// control-plane Machines.
	// +optional
	ExternalManagedControlPlane *bool `json:"externalManagedControlPlane,omitempty"`

	// initialization reports, by the contract, whether the control plane
	// came up: the sim says so at once for an externally managed one; one
	// made of control-plane Machines is left for the test to report.
	// +optional
	Initialization SimControlPlaneInitialization `json:"initialization,omitempty,omitzero"`

	// version is the Kubernetes version the control plane runs, by the
	// contract (its oldest, while an upgrade is under way).
	// +optional
	Version string `json:"version,omitempty"`

	// versions are the Kubernetes versions the control plane runs, oldest
	// first, by the v1beta2 contract; when set they count instead of
	// version.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Versions []SimStatusVersion `json:"versions,omitempty"`

	// conditions describe the current state of the SimControlPlane.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimStatusVersion is one entry of a control plane's status.versions.
type SimStatusVersion struct {
	// version is a Kubernetes version.
	Version string `json:"version"`
	// replicas is how many of the control plane's Machines run it.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// SimControlPlaneInitialization is the contract's status.initialization of
// a control plane.
type SimControlPlaneInitialization struct {
	// controlPlaneInitialized is true once the control plane can be used.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// SimControlPlane is a simulated control plane provider object: a Cluster's
// spec.controlPlaneRef names it, and its status says whether the control
// plane is managed outside the Cluster's Machines.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=simcontrolplanes,scope=Namespaced,categories=krtt
// +kubebuilder:printcolumn:name="External",type="boolean",JSONPath=".status.externalManagedControlPlane"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SimControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the SimControlPlane.
	// +optional
	Spec SimControlPlaneSpec `json:"spec,omitempty"`

	// status is the observed state of the SimControlPlane.
	// +optional
	Status SimControlPlaneStatus `json:"status,omitempty,omitzero"`
}

// SimControlPlaneList is a list of SimControlPlanes.
//
// +kubebuilder:object:root=true
type SimControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimControlPlane `json:"items"`
}

func init() {
	register(&SimControlPlane{}, &SimControlPlaneList{})
}
