package v1alpha1

import (
	"github.com/krtt-dev/krtt/api/kit"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MachineBootstrap says where the Machine's bootstrap data comes from: a
// bootstrap config object that produces a data secret, or a data secret the
// user provides directly.
//
// +kubebuilder:validation:XValidation:rule="has(self.configRef) || has(self.dataSecretName)",message="bootstrap needs configRef or dataSecretName"
type MachineBootstrap struct {
	// configRef points at the bootstrap config object (for example a
	// SimBootstrapConfig) that generates the bootstrap data secret.
	// +optional
	ConfigRef *ObjectReference `json:"configRef,omitempty"`

	// dataSecretName is the name of the Secret holding the bootstrap data.
	// The user may set it directly; otherwise the controller copies it from
	// the bootstrap config object once that object has created the secret.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="dataSecretName must be a Secret name: lowercase letters, digits, '-' and '.'"
	DataSecretName *string `json:"dataSecretName,omitempty"`
}

// MachineDeletionSpec tunes how long each step of Machine deletion may take.
type MachineDeletionSpec struct {
	// nodeDrainTimeoutSeconds is how long the controller keeps draining the
	// Node before it gives up and moves on. 0 or unset means wait forever.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self <= 2592000",message="nodeDrainTimeoutSeconds must be at most 2592000 (30 days); use 0 to wait forever"
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`

	// nodeVolumeDetachTimeoutSeconds is how long the controller waits for the
	// Node's volumes to detach before it moves on. 0 or unset means wait
	// forever.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self <= 2592000",message="nodeVolumeDetachTimeoutSeconds must be at most 2592000 (30 days); use 0 to wait forever"
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`

	// nodeDeletionTimeoutSeconds is how long the controller retries deleting
	// the Node once infrastructure and bootstrap are gone; after that the
	// finalizer is removed anyway. Defaults to 10. 0 means retry forever.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self <= 2592000",message="nodeDeletionTimeoutSeconds must be at most 2592000 (30 days); use 0 to retry forever"
	// +kubebuilder:default=10
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`

	// onDrainTimeout is what happens when nodeDrainTimeoutSeconds passes:
	// Skip leaves the remaining Pods in place and goes on (as Cluster API
	// does); Force force-deletes them (grace period 0, never DaemonSet or
	// mirror Pods), deletes the Node's VolumeAttachments and skips the
	// volume wait. Defaults to Skip.
	// +optional
	// +kubebuilder:default=Skip
	OnDrainTimeout DrainTimeoutAction `json:"onDrainTimeout,omitempty"`

	// maxEvictRetries is how many times the drain asks the Eviction API to
	// evict a Pod and is refused by its PodDisruptionBudget before it deletes
	// the Pod with grace period 0, as the machine-controller-manager's
	// maxEvictRetries does (0: delete without evicting). A budget that allows
	// no eviction although all its Pods are healthy is misconfigured: its
	// Pods are never deleted this way (the drain timeout decides). Unset: no
	// limit, evictions are retried until the drain ends or times out.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="maxEvictRetries cannot be negative; use 0 to delete Pods without evicting them, or leave it unset to retry evictions until the drain timeout"
	// +kubebuilder:validation:XValidation:rule="self <= 100000",message="maxEvictRetries must be at most 100000; leave it unset to retry evictions until the drain timeout"
	MaxEvictRetries *int32 `json:"maxEvictRetries,omitempty"`
}

// DrainTimeoutAction is what a Machine's deletion does when its drain times out.
// +kubebuilder:validation:XValidation:rule="self in ['Skip', 'Force']",message="onDrainTimeout must be Skip (leave the remaining Pods and go on, the default) or Force (force-delete them)"
type DrainTimeoutAction string

const (
	// DrainTimeoutSkip leaves the remaining Pods in place and goes on.
	DrainTimeoutSkip DrainTimeoutAction = "Skip"
	// DrainTimeoutForce force-deletes the remaining Pods and goes on.
	DrainTimeoutForce DrainTimeoutAction = "Force"
)

// DefaultHealthNodeConditions are the Node condition types that make a Node
// unhealthy when True unless spec.health.nodeConditions says otherwise (the
// machine-controller-manager's default nodeConditions).
var DefaultHealthNodeConditions = []string{"KernelDeadlock", "ReadonlyFilesystem", "DiskPressure", "NetworkUnavailable"}

// Defaults of spec.health, for Machines read before the API server defaulted
// them (the CRD defaults are the same).
const (
	DefaultHealthTimeoutSeconds   int32 = 600
	DefaultCreationTimeoutSeconds int32 = 1200
)

// MachineHealthSpec says when the Machine's Node counts as unhealthy, and
// how long a Machine may stay unhealthy, or take to come up, before it fails
// (the machine-controller-manager's healthTimeout, creationTimeout and
// nodeConditions).
type MachineHealthSpec struct {
	// nodeConditions are the Node condition types that make the Node
	// unhealthy when their status is True. A Node that is not Ready (False
	// or Unknown) is always unhealthy, so Ready is not listed here.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=316
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="nodeConditions entries must be Node condition types such as DiskPressure or example.com/GPUFailed"
	// +kubebuilder:validation:XValidation:rule="!self.exists(c, c == 'Ready')",message="nodeConditions lists conditions that are unhealthy when True; Ready is always checked (unhealthy when False or Unknown) and cannot be listed"
	// +kubebuilder:default={KernelDeadlock,ReadonlyFilesystem,DiskPressure,NetworkUnavailable}
	NodeConditions []string `json:"nodeConditions,omitempty"`

	// healthTimeoutSeconds is how long a Running Machine may stay Unhealthy
	// (its Node not Ready, or one of nodeConditions True) before it becomes
	// Failed with failureReason UnhealthyNode. Defaults to 600. 0 means an
	// unhealthy Machine never fails.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="healthTimeoutSeconds cannot be negative; use 0 to never fail an unhealthy Machine"
	// +kubebuilder:validation:XValidation:rule="self <= 2592000",message="healthTimeoutSeconds must be at most 2592000 (30 days); use 0 to never fail an unhealthy Machine"
	// +kubebuilder:default=600
	HealthTimeoutSeconds *int32 `json:"healthTimeoutSeconds,omitempty"`

	// creationTimeoutSeconds is how long after its creation a Machine may
	// take to reach Running before it becomes Failed with failureReason
	// CreationTimeout. Defaults to 1200. 0 means wait forever.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="creationTimeoutSeconds cannot be negative; use 0 to wait forever for a Machine to come up"
	// +kubebuilder:validation:XValidation:rule="self <= 2592000",message="creationTimeoutSeconds must be at most 2592000 (30 days); use 0 to wait forever for a Machine to come up"
	// +kubebuilder:default=1200
	CreationTimeoutSeconds *int32 `json:"creationTimeoutSeconds,omitempty"`
}

// MachineSpec is the desired state of a Machine.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.providerID) || has(self.providerID) && self.providerID == oldSelf.providerID",message="providerID cannot be changed or removed once set"
type MachineSpec struct {
	// clusterName is the name of the Cluster this Machine belongs to.
	// It cannot be changed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="clusterName must be a Cluster name: lowercase letters, digits, '-' and '.'"
	ClusterName string `json:"clusterName"`

	// bootstrap says where the bootstrap data comes from.
	// +required
	Bootstrap MachineBootstrap `json:"bootstrap"`

	// infrastructureRef points at the infrastructure machine object (for
	// example a SimMachine). It cannot be changed on a Machine (a
	// MachineSet's template may point at another template).
	// +required
	InfrastructureRef ObjectReference `json:"infrastructureRef"`

	// providerID identifies the machine at the infrastructure provider and
	// matches the Node's spec.providerID. The controller copies it from the
	// infrastructure object; once set it cannot be changed or removed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^[!-~]+$')",message="providerID must be printable ASCII without spaces, as a Node's spec.providerID is"
	ProviderID *string `json:"providerID,omitempty"`

	// failureDomain is the failure domain the Machine should be placed in.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[!-~]*$')",message="failureDomain must be printable ASCII without spaces"
	FailureDomain string `json:"failureDomain,omitempty"`

	// deletion tunes the timeouts of Machine deletion.
	// +optional
	// +kubebuilder:default={}
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`

	// health says when the Machine's Node is unhealthy and how long the
	// Machine may be unhealthy, or take to come up, before it fails.
	// +optional
	// +kubebuilder:default={}
	Health MachineHealthSpec `json:"health,omitempty,omitzero"`

	// readinessGates are conditions of this Machine, set by other
	// controllers (a control plane's component health, software installed on
	// the Node), that its Ready condition also waits for, as Cluster API's
	// spec.readinessGates. One not reported yet counts as Unknown.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="!self.exists(g, g.conditionType in ['Ready', 'Available'])",message="readinessGates cannot name Ready or Available: Ready is what the gates feed, and Available follows Ready"
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// minReadySeconds is how long the Machine must have been Ready before
	// it is Available (Cluster API's spec.minReadySeconds); 0, the default,
	// makes it Available as soon as it is Ready. MachineSets and
	// MachineDeployments count their available Machines by that condition.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// version is the Kubernetes version the Machine's Node runs (for example
	// v1.37.0), as Cluster API's spec.version: the infrastructure and
	// bootstrap providers read it; krtt only shows it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^v?[0-9]+[.][0-9]+[.][0-9]+([-+][0-9A-Za-z.+-]*)?$')",message="version must be a semantic version such as v1.37.0"
	Version string `json:"version,omitempty"`

	// taints are taints krtt keeps on the Machine's Node (Cluster API's
	// spec.taints). An Always taint is added, kept (re-added when someone
	// removes it, its value set back) and removed from the Node when it
	// leaves this list; an OnInitialization taint is added once, when krtt
	// first syncs the Node, and left alone afterwards. Taints others set on
	// the Node are never touched. A MachineSet or MachineDeployment changes
	// them on its Machines in place: a change replaces no Machine.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// MachineTaint is a taint a Machine gives its Node.
type MachineTaint struct {
	// key of the taint, a label key: a name of at most 63 characters, with
	// an optional DNS subdomain prefix and '/'. krtt's own Node taints
	// (node.cluster.krtt.dev/uninitialized, /outdated-revision), the
	// node.kubernetes.io/ ones (but node.kubernetes.io/out-of-service),
	// the node.cloudprovider.kubernetes.io/ ones and the deprecated
	// node-role.kubernetes.io/master are refused: others own them.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$') && (self.contains('/') ? self.split('/')[0].size() <= 253 && self.split('/')[1].size() <= 63 : self.size() <= 63)",message="key must be a label key such as example.com/dedicated: a name of at most 63 characters (letters, digits, '-', '_', '.'), with an optional DNS subdomain prefix of at most 253 and a '/'"
	// +kubebuilder:validation:XValidation:rule="!(self in ['node.cluster.krtt.dev/uninitialized', 'node.cluster.krtt.dev/outdated-revision'])",message="key is one of krtt's own Node taints, which krtt sets and removes itself"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('node.kubernetes.io/') || self == 'node.kubernetes.io/out-of-service'",message="key must not have the prefix node.kubernetes.io/ (the kubelet and the node lifecycle controller own those), except node.kubernetes.io/out-of-service"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('node.cloudprovider.kubernetes.io/')",message="key must not have the prefix node.cloudprovider.kubernetes.io/ (the cloud controller manager owns those)"
	// +kubebuilder:validation:XValidation:rule="self != 'node-role.kubernetes.io/master'",message="node-role.kubernetes.io/master is deprecated since Kubernetes 1.24: use node-role.kubernetes.io/control-plane"
	Key string `json:"key"`

	// value of the taint, a label value (at most 63 characters).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="value must be a label value: letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	Value string `json:"value,omitempty"`

	// effect of the taint on Pods that do not tolerate it.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect"`

	// propagation says when krtt puts the taint on the Node: Always (kept
	// there) or OnInitialization (once, when the Node is first synced).
	// +required
	Propagation MachineTaintPropagation `json:"propagation"`
}

// MachineTaintPropagation says when a Machine's taint goes onto its Node.
//
// +kubebuilder:validation:Enum=Always;OnInitialization
type MachineTaintPropagation string

// Taint propagations.
const (
	// TaintPropagationAlways: the taint is kept on the Node while the
	// Machine has it, and removed when it goes.
	TaintPropagationAlways MachineTaintPropagation = "Always"
	// TaintPropagationOnInitialization: the taint is added once, when krtt
	// first syncs the Node; removing it from the Node or the Machine
	// changes nothing afterwards.
	TaintPropagationOnInitialization MachineTaintPropagation = "OnInitialization"
)

// ConditionPolarity says which status of a condition is the healthy one.
//
// +kubebuilder:validation:Enum=Positive;Negative
type ConditionPolarity string

// Condition polarities.
const (
	// PositivePolarity: True is fine (Ready, NodeHealthy).
	PositivePolarity ConditionPolarity = "Positive"
	// NegativePolarity: False is fine (Deleting, an error-reporting condition).
	NegativePolarity ConditionPolarity = "Negative"
)

// MachineReadinessGate names one condition the Machine's Ready condition
// waits for.
type MachineReadinessGate struct {
	// conditionType is the type of a condition in the Machine's
	// status.conditions, such as example.com/SoftwareInstalled.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="conditionType must be a condition type such as APIServerPodHealthy or example.com/SoftwareInstalled"
	ConditionType string `json:"conditionType"`

	// polarity says which status of the condition is fine: Positive (the
	// default) when True is, Negative when False is.
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// MachinePhase is the user-facing summary of where a Machine is in its
// lifecycle.
//
// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Running;Unknown;Deleting;Failed
type MachinePhase string

// Machine phases.
const (
	MachinePhasePending      MachinePhase = "Pending"
	MachinePhaseProvisioning MachinePhase = "Provisioning"
	MachinePhaseProvisioned  MachinePhase = "Provisioned"
	MachinePhaseRunning      MachinePhase = "Running"
	// MachinePhaseUnknown: Running, but its Node is unhealthy (the
	// machine-controller-manager's Unknown phase).
	MachinePhaseUnknown  MachinePhase = "Unknown"
	MachinePhaseDeleting MachinePhase = "Deleting"
	MachinePhaseFailed   MachinePhase = "Failed"
)

// MachineAddressType is the kind of a MachineAddress.
//
// +kubebuilder:validation:Enum=Hostname;ExternalIP;InternalIP;ExternalDNS;InternalDNS
type MachineAddressType string

// Machine address types.
const (
	MachineHostName    MachineAddressType = "Hostname"
	MachineExternalIP  MachineAddressType = "ExternalIP"
	MachineInternalIP  MachineAddressType = "InternalIP"
	MachineExternalDNS MachineAddressType = "ExternalDNS"
	MachineInternalDNS MachineAddressType = "InternalDNS"
)

// MachineAddress is one address of a Machine.
type MachineAddress struct {
	// type of the address.
	// +required
	Type MachineAddressType `json:"type"`

	// address is the host name, IP address or DNS name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Address string `json:"address"`
}

// MachineNodeReference names the Node that belongs to a Machine.
type MachineNodeReference struct {
	// name of the Node.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// MachineInitializationStatus records the one-way provisioning milestones of
// a Machine.
type MachineInitializationStatus struct {
	// bootstrapDataSecretCreated is true once the bootstrap data secret is
	// known (copied from the bootstrap config or given by the user).
	// +optional
	BootstrapDataSecretCreated *bool `json:"bootstrapDataSecretCreated,omitempty"`

	// infrastructureProvisioned is true once the infrastructure object
	// reported it is provisioned and its providerID was copied.
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`
}

// MachineDeletionStatus records the deletion step in progress and when each
// step started, so timeouts survive controller restarts.
type MachineDeletionStatus struct {
	// step is the table state of the deletion while the Machine is being
	// deleted (DrainingNode, WaitingForVolumeDetach, …), empty otherwise.
	// It fills the DELETING column of kubectl get: a column from the
	// Deleting condition would read NotDeleting on every other Machine.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Step string `json:"step,omitempty"`

	// waitForPreDrainHookStartTime is when the controller started waiting for
	// pre-drain hooks to be removed.
	// +optional
	WaitForPreDrainHookStartTime *metav1.Time `json:"waitForPreDrainHookStartTime,omitempty"`

	// nodeDrainStartTime is when the controller started draining the Node.
	// +optional
	NodeDrainStartTime *metav1.Time `json:"nodeDrainStartTime,omitempty"`

	// waitForNodeVolumeDetachStartTime is when the controller started waiting
	// for the Node's volumes to detach.
	// +optional
	WaitForNodeVolumeDetachStartTime *metav1.Time `json:"waitForNodeVolumeDetachStartTime,omitempty"`

	// waitForPreTerminateHookStartTime is when the controller started waiting
	// for pre-terminate hooks to be removed.
	// +optional
	WaitForPreTerminateHookStartTime *metav1.Time `json:"waitForPreTerminateHookStartTime,omitempty"`

	// nodeDeletionStartTime is when the controller first tried to delete the
	// Node.
	// +optional
	NodeDeletionStartTime *metav1.Time `json:"nodeDeletionStartTime,omitempty"`

	// evictionRefusals counts, per Pod still on the Node, the evictions its
	// PodDisruptionBudget refused; kept only when spec.deletion.maxEvictRetries
	// is set.
	// +optional
	// +listType=map
	// +listMapKey=pod
	// +kubebuilder:validation:MaxItems=1000
	EvictionRefusals []EvictionRefusals `json:"evictionRefusals,omitempty"`
}

// EvictionRefusals is how often the eviction of one Pod was refused.
type EvictionRefusals struct {
	// pod is the Pod as namespace/name.
	// +kubebuilder:validation:MaxLength=317
	Pod string `json:"pod"`
	// uid is the Pod's UID, so a namesake created since starts again.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// count is how many evictions of the Pod were refused.
	Count int32 `json:"count"`
}

// MachineHealthStatus records since when the Machine's Node is unhealthy, so
// the health timeout survives controller restarts.
type MachineHealthStatus struct {
	// unhealthySince is when the controller first saw the Machine's Node
	// unhealthy; cleared when the Node is healthy again.
	// +optional
	UnhealthySince *metav1.Time `json:"unhealthySince,omitempty"`
}

// MachineStatus is the observed state of a Machine.
type MachineStatus struct {
	// phase is the user-facing lifecycle phase of the Machine.
	// +optional
	Phase MachinePhase `json:"phase,omitempty"`

	// state is the transition-table state the Machine is in. The engine
	// persists its state here; users should read phase and conditions.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	State string `json:"state,omitempty"`

	// stateSince is when the Machine entered its current state; metrics and
	// krtt explain use it to say how long a step has taken.
	// +optional
	StateSince *metav1.Time `json:"stateSince,omitempty"`

	// lastUpdated is when the phase last changed (states that share a phase
	// leave it alone).
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// nodeRef names the Node that belongs to this Machine.
	// +optional
	NodeRef *MachineNodeReference `json:"nodeRef,omitempty"`

	// nodeInfo is the Node's status.nodeInfo (kubelet and OS versions,
	// machine ID), copied on every reconcile that sees the Node.
	// +optional
	NodeInfo *corev1.NodeSystemInfo `json:"nodeInfo,omitempty"`

	// addresses are the Machine's addresses, copied from the infrastructure
	// object.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Addresses []MachineAddress `json:"addresses,omitempty"`

	// failureDomain is the failure domain the Machine runs in, copied from
	// the infrastructure object.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// initialization records the provisioning milestones.
	// +optional
	Initialization MachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// deletion records when each deletion step started.
	// +optional
	Deletion MachineDeletionStatus `json:"deletion,omitempty,omitzero"`

	// health records since when the Machine's Node is unhealthy.
	// +optional
	Health MachineHealthStatus `json:"health,omitempty,omitzero"`

	// certificatesExpiryDate is when the Machine's certificates expire (for
	// control-plane Machines).
	// +optional
	CertificatesExpiryDate *metav1.Time `json:"certificatesExpiryDate,omitempty"`

	// failureReason is a short, machine-readable reason for a terminal
	// failure. Once set the Machine does not recover; delete and recreate it.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// failureMessage is a human-readable description of a terminal failure.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// observedGeneration is the metadata.generation the controller last
	// reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastTransition is the last transition-table row that fired.
	// +optional
	LastTransition *kit.LastTransition `json:"lastTransition,omitempty"`

	// conditions describe the current state of the Machine.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Machine is one host that runs (or will run) a Kubernetes Node.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=machines,scope=Namespaced,shortName=kma,categories=krtt
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName"
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".status.nodeRef.name"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",priority=1
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Up-to-date",type="string",JSONPath=`.status.conditions[?(@.type=="UpToDate")].status`
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`
// +kubebuilder:printcolumn:name="Deleting",type="string",JSONPath=".status.deletion.step"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.version"
// +kubebuilder:printcolumn:name="OS-Image",type="string",JSONPath=".status.nodeInfo.osImage",priority=1
// +kubebuilder:printcolumn:name="Row",type="string",JSONPath=".status.lastTransition.row",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Machine. Its infrastructureRef and
	// bootstrap.configRef are immutable and never name a template here, on
	// the Machine: the rules sit on this field, not on MachineSpec, so that a
	// MachineSet's template (also a MachineSpec) can name templates and be
	// pointed at new ones.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.infrastructureRef == oldSelf.infrastructureRef",message="infrastructureRef is immutable",fieldPath=".infrastructureRef"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.bootstrap.configRef) || has(self.bootstrap.configRef) && self.bootstrap.configRef == oldSelf.bootstrap.configRef",message="bootstrap.configRef cannot be changed or removed once set",fieldPath=".bootstrap"
	// +kubebuilder:validation:XValidation:rule="!self.infrastructureRef.kind.endsWith('Template') || self.infrastructureRef.kind == 'Template'",message="infrastructureRef must name an infrastructure machine (e.g. SimMachine), not a template: a Machine would take the template over and delete it with itself; to create Machines from a template, use a MachineSet",fieldPath=".infrastructureRef.kind"
	// +kubebuilder:validation:XValidation:rule="!has(self.bootstrap.configRef) || !self.bootstrap.configRef.kind.endsWith('Template') || self.bootstrap.configRef.kind == 'Template'",message="bootstrap.configRef must name a bootstrap config (e.g. SimBootstrapConfig), not a template: a Machine would take the template over and delete it with itself; to create Machines from a template, use a MachineSet",fieldPath=".bootstrap.configRef.kind"
	Spec MachineSpec `json:"spec"`

	// status is the observed state of the Machine.
	// +optional
	Status MachineStatus `json:"status,omitempty,omitzero"`
}

// MachineList is a list of Machines.
//
// +kubebuilder:object:root=true
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}

func init() {
	register(&Machine{}, &MachineList{})
}

var _ kit.Status = &Machine{}

// GetRecord is the kit's record in the Machine's status.
func (m *Machine) GetRecord() kit.Record {
	st := &m.Status
	return kit.Record{State: st.State, StateSince: st.StateSince, Phase: string(st.Phase), PhaseSince: st.LastUpdated,
		ObservedGeneration: st.ObservedGeneration, LastTransition: st.LastTransition}
}

// SetRecord writes the kit's record into the Machine's status.
func (m *Machine) SetRecord(r kit.Record) {
	st := &m.Status
	st.State, st.StateSince, st.ObservedGeneration, st.LastTransition = r.State, r.StateSince, r.ObservedGeneration, r.LastTransition
	st.LastUpdated = r.PhaseSince
	st.Phase = MachinePhase(r.Phase)
}

// GetConditions returns status.conditions.
func (m *Machine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces status.conditions.
func (m *Machine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }
