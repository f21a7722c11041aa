package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimClusterSpec is the desired state of a SimCluster.
type SimClusterSpec struct {
	// controlPlaneEndpoint is where the simulated load balancer serves the
	// Cluster's API server; the sim sets it (<name>.<namespace>.sim.krtt.dev,
	// port 6443) when it is empty and spec.sim.noEndpoint is false.
	// +optional
	ControlPlaneEndpoint SimAPIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// sim holds test knobs.
	// +optional
	Sim SimClusterKnobs `json:"sim,omitempty,omitzero"`
}

// SimAPIEndpoint is the contract's spec.controlPlaneEndpoint.
type SimAPIEndpoint struct {
	// host is the endpoint's host name.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Host string `json:"host,omitempty"`
	// port is the endpoint's port.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// SimClusterKnobs let a test hold the simulated infrastructure.
type SimClusterKnobs struct {
	// holdProvisioning keeps the infrastructure unprovisioned (Ready=False,
	// status.initialization.provisioned false) until it is set back to false.
	// +optional
	HoldProvisioning bool `json:"holdProvisioning,omitempty"`

	// noEndpoint provisions the infrastructure without a control plane
	// endpoint (as a provider whose control plane provider supplies it).
	// +optional
	NoEndpoint bool `json:"noEndpoint,omitempty"`
}

// SimClusterStatus is the observed state of a SimCluster, by the Cluster API
// infrastructure cluster contract.
type SimClusterStatus struct {
	// initialization reports whether the infrastructure is provisioned.
	// +optional
	Initialization SimClusterInitialization `json:"initialization,omitempty,omitzero"`

	// failureDomains are the simulated cloud's zones, by the contract
	// (sim-zone-a, sim-zone-b and sim-zone-c, each fit for the control
	// plane), reported once provisioned.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	FailureDomains []SimFailureDomain `json:"failureDomains,omitempty"`

	// conditions describe the current state of the SimCluster: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimFailureDomain is the contract's status.failureDomains entry.
type SimFailureDomain struct {
	// name of the zone.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// controlPlane: control-plane Machines may run in it.
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`
	// attributes of the zone.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// SimClusterInitialization is the contract's status.initialization of an
// infrastructure cluster.
type SimClusterInitialization struct {
	// provisioned is true once the infrastructure can be used.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// SimCluster is a simulated infrastructure cluster: a Cluster's
// spec.infrastructureRef names it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=simclusters,scope=Namespaced,categories=krtt
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SimCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the SimCluster.
	// +optional
	Spec SimClusterSpec `json:"spec,omitempty"`

	// status is the observed state of the SimCluster.
	// +optional
	Status SimClusterStatus `json:"status,omitempty,omitzero"`
}

// SimClusterList is a list of SimClusters.
//
// +kubebuilder:object:root=true
type SimClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimCluster `json:"items"`
}

func init() {
	register(&SimCluster{}, &SimClusterList{})
}
