package v1alpha1

import (
	"github.com/krtt-dev/krtt/api/kit"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectReference points at an object in the Machine's (or Cluster's)
// namespace whose API version is resolved through its contract, so only the
// API group is recorded, not the version.
//
// Only a provider's custom resource can be referenced: the operator becomes
// the object's controller owner and deletes it with the Machine, which must
// never happen to a built-in object such as a Secret or a Deployment. Custom
// resource groups always contain a dot, and *.k8s.io / *.kubernetes.io are
// Kubernetes' own.
//
// +kubebuilder:validation:XValidation:rule="self.apiGroup.contains('.') && !self.apiGroup.endsWith('.k8s.io') && !self.apiGroup.endsWith('.kubernetes.io')",message="apiGroup must be the API group of a provider's custom resource (a domain such as infrastructure.cluster.x-k8s.io), not a built-in Kubernetes group"
type ObjectReference struct {
	// apiGroup is the API group of the referenced object, e.g. sim.krtt.dev.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	APIGroup string `json:"apiGroup"`

	// kind is the kind of the referenced object, e.g. SimMachine.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`
	Kind string `json:"kind"`

	// name of the referenced object; a DNS subdomain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// ClusterSpec is the desired state of a Cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.infrastructureRef) || has(self.infrastructureRef)",message="spec.infrastructureRef cannot be removed once set"
type ClusterSpec struct {
	// paused stops every controller from reconciling the Cluster and the
	// Machines that belong to it.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// controlPlaneRef points at the object that manages the control plane of
	// this Cluster, if any.
	// +optional
	ControlPlaneRef *ObjectReference `json:"controlPlaneRef,omitempty"`

	// infrastructureRef points at the provider's object for the Cluster's
	// infrastructure (network, load balancer), if any. The Cluster is
	// Provisioning until that object reports
	// status.initialization.provisioned and a control plane endpoint is
	// known, and deletes it last on teardown. It cannot be removed once set.
	// +optional
	InfrastructureRef *ObjectReference `json:"infrastructureRef,omitempty"`

	// controlPlaneEndpoint is where the Cluster's API server serves. Left
	// empty, it is copied from the infrastructure object once that is
	// provisioned, or from the control plane object once that is
	// initialized, as Cluster API does.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// availabilityGates are conditions of the Cluster, set by other
	// controllers (an add-on installer, a policy check), that its Available
	// condition also waits for, as Cluster API's spec.availabilityGates. One
	// not reported yet counts as Unknown.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="!self.exists(g, g.conditionType == 'Available')",message="availabilityGates cannot name Available: Available is what the gates feed"
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
}

// APIEndpoint is where an API server serves.
type APIEndpoint struct {
	// host is the host name or IP address on which the API server serves.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Host string `json:"host,omitempty"`

	// port is the port on which the API server serves.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// IsValid: both the host and the port are set.
func (e APIEndpoint) IsValid() bool { return e.Host != "" && e.Port != 0 }

// ClusterAvailabilityGate names one condition the Cluster's Available
// condition waits for.
type ClusterAvailabilityGate struct {
	// conditionType is the type of a condition in the Cluster's
	// status.conditions, such as example.com/AddonsInstalled.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="conditionType must be a condition type such as ControlPlaneAvailable or example.com/AddonsInstalled"
	ConditionType string `json:"conditionType"`

	// polarity says which status of the condition is fine: Positive (the
	// default) when True is, Negative when False is.
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// phase is the user-facing phase of the Cluster (from its table state).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Phase string `json:"phase,omitempty"`

	// state is the transition-table state the Cluster controller persists.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	State string `json:"state,omitempty"`

	// stateSince is when the Cluster entered its current state.
	// +optional
	StateSince *metav1.Time `json:"stateSince,omitempty"`

	// observedGeneration is the metadata.generation the controller last
	// reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastTransition is the last transition-table row that fired.
	// +optional
	LastTransition *kit.LastTransition `json:"lastTransition,omitempty"`

	// workloadClusterReconnectTime is when the workload cluster last became
	// usable again after it was Unreachable or NoAccess. The Node-side
	// timeouts of the Cluster's Machines (health; creation once the
	// providerID is known; drain, volume detach, Node deletion) count from
	// it when it is later than their own start, so a wait that ran out
	// during the outage does not end as soon as the cluster is back.
	// +optional
	WorkloadClusterReconnectTime *metav1.Time `json:"workloadClusterReconnectTime,omitempty"`

	// initialization says which of the Cluster's provisioning steps were
	// done once (each stays true afterwards), as Cluster API's
	// status.initialization.
	// +optional
	Initialization ClusterInitialization `json:"initialization,omitempty,omitzero"`

	// failureDomains are the failure domains the infrastructure object
	// reports once it is provisioned (its status.failureDomains, a list or,
	// from a v1beta1 provider, a map), sorted by name, as Cluster API's
	// status.failureDomains.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []FailureDomain `json:"failureDomains,omitempty"`

	// machines counts the Cluster's Machines.
	// +optional
	Machines ClusterMachines `json:"machines,omitempty,omitzero"`

	// controlPlane counts the Cluster's control plane as Cluster API's
	// status.controlPlane does: what the object spec.controlPlaneRef names
	// reports by the contract (spec.replicas as desiredReplicas, and its
	// status counters), or, without one, its control-plane Machines by their
	// Ready, Available and UpToDate conditions (desiredReplicas: as many as
	// there are).
	// +optional
	ControlPlane ClusterReplicas `json:"controlPlane,omitempty,omitzero"`

	// workers counts the Cluster's worker Machines as Cluster API's
	// status.workers does: those of its MachineSets and its stand-alone
	// worker Machines, by their Ready, Available and UpToDate conditions;
	// desiredReplicas sums spec.replicas of the MachineDeployments and
	// stand-alone MachineSets, plus one per stand-alone worker Machine.
	// Unset without any of them.
	// +optional
	Workers ClusterReplicas `json:"workers,omitempty,omitzero"`

	// conditions describe the current state of the Cluster:
	// WorkloadClusterReachable (how the Node side is reached: Connected,
	// SelfHosted, Unreachable, NoAccess) and MachinesReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FailureDomain is one failure domain of a Cluster's infrastructure.
type FailureDomain struct {
	// name of the failure domain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// controlPlane says whether control-plane Machines may run in it.
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`

	// attributes the infrastructure provider gives it.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// ClusterInitialization records the Cluster's provisioning steps done once.
type ClusterInitialization struct {
	// infrastructureProvisioned is true once the object spec.infrastructureRef
	// names reported status.initialization.provisioned (at once for a
	// Cluster without one).
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`

	// controlPlaneInitialized is true once the ControlPlaneInitialized
	// condition was True.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// ClusterMachines counts the Machines of a Cluster.
type ClusterMachines struct {
	// total is the number of Machines with the Cluster's cluster-name label
	// (under the operator's --watch-filter, those labelled with its value).
	// +optional
	Total int32 `json:"total"`
	// ready is the number of those whose Ready condition is True.
	// +optional
	Ready int32 `json:"ready"`
	// deleting is the number of those being deleted.
	// +optional
	Deleting int32 `json:"deleting"`
}

// ClusterReplicas counts the replicas of a Cluster's control plane or of its
// workers (status.controlPlane and status.workers say from what); a counter
// nothing reports or adds to is unset.
type ClusterReplicas struct {
	// desiredReplicas is how many are wanted.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// replicas is how many there are, Machines being deleted included.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// readyReplicas is how many of them are Ready.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// availableReplicas is how many of them are Available.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// upToDateReplicas is how many of them are up to date.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// versions counts them by the Kubernetes version they run.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MaxItems=100
	Versions []StatusVersion `json:"versions,omitempty"`
}

// StatusVersion counts the replicas that run one Kubernetes version: the
// kubelet's version their Node reports, or spec.version before there is one
// (Cluster API's status.versions).
type StatusVersion struct {
	// version is the Kubernetes version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version"`
	// replicas is how many run it.
	// +required
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas"`
}

// Cluster groups Machines; pausing it pauses all of them.
//
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="a Cluster's name must be at most 63 characters: its Machines carry it in the cluster.krtt.dev/cluster-name label"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusters,scope=Namespaced,shortName=kcl,categories=krtt
// +kubebuilder:printcolumn:name="Paused",type="boolean",JSONPath=".spec.paused"
// +kubebuilder:printcolumn:name="Workload",type="string",JSONPath=`.status.conditions[?(@.type=="WorkloadClusterReachable")].reason`
// +kubebuilder:printcolumn:name="Machines",type="integer",JSONPath=".status.machines.total"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.machines.ready"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Cluster.
	// +optional
	Spec ClusterSpec `json:"spec,omitempty"`

	// status is the observed state of the Cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

func init() {
	register(&Cluster{}, &ClusterList{})
}

var _ kit.Status = &Cluster{}

// GetRecord is the kit's record in the Cluster's status.
func (c *Cluster) GetRecord() kit.Record {
	st := &c.Status
	return kit.Record{State: st.State, StateSince: st.StateSince, Phase: st.Phase,
		ObservedGeneration: st.ObservedGeneration, LastTransition: st.LastTransition}
}

// SetRecord writes the kit's record into the Cluster's status.
func (c *Cluster) SetRecord(r kit.Record) {
	st := &c.Status
	st.State, st.StateSince, st.ObservedGeneration, st.LastTransition = r.State, r.StateSince, r.ObservedGeneration, r.LastTransition
	st.Phase = r.Phase
}

// GetConditions returns status.conditions.
func (c *Cluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces status.conditions.
func (c *Cluster) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }
