package v1alpha1

import (
	"github.com/krtt-dev/krtt/api/kit"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineTemplateSpec is what every Machine of a MachineSet is created from.
//
// +kubebuilder:validation:XValidation:rule="!has(self.spec.taints) || !self.spec.taints.exists(t, t.key == 'node-role.kubernetes.io/control-plane')",message="spec.taints cannot hold node-role.kubernetes.io/control-plane: the Machines of a MachineSet or MachineDeployment are workers"
type MachineTemplateSpec struct {
	// metadata: labels and annotations of every Machine. The labels must
	// match the MachineSet's selector.
	// +optional
	ObjectMeta TemplateMetadata `json:"metadata,omitempty,omitzero"`

	// spec of every Machine. bootstrap.configRef and infrastructureRef name
	// templates (kinds ending in Template), cloned once per Machine; or
	// bootstrap.dataSecretName gives the data secret directly.
	// +required
	Spec MachineSpec `json:"spec"`
}

// MachineSetDeletionOrder says which Machines go first when a MachineSet
// scales down (after those with the delete-machine annotation, then the
// failed or unhealthy ones). Machines of the same rank go by name, lowest
// first; Random adds nothing before the name.
//
// +kubebuilder:validation:Enum=Random;Newest;Oldest
type MachineSetDeletionOrder string

// Deletion orders.
const (
	DeletionOrderRandom MachineSetDeletionOrder = "Random"
	DeletionOrderNewest MachineSetDeletionOrder = "Newest"
	DeletionOrderOldest MachineSetDeletionOrder = "Oldest"
)

// MachineSetDeletionSpec tunes scale-down.
type MachineSetDeletionSpec struct {
	// order in which Machines are deleted on scale-down: Random (default:
	// by name, as Cluster API's Random), Newest or Oldest first.
	// +optional
	// +kubebuilder:default=Random
	Order MachineSetDeletionOrder `json:"order,omitempty"`
}

// MachineSetRemediationSpec bounds the replacement of failed Machines.
type MachineSetRemediationSpec struct {
	// maxInFlight is how many failed Machines may be being replaced (deleted)
	// at once: a number, or a percentage of spec.replicas rounded up (as
	// Cluster API's MachineDeployment remediation.maxInFlight). Defaults
	// to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 && self <= 1000 : self.matches('^(100|[1-9][0-9]?)%$')",message="maxInFlight must be a number of Machines from 1 to 1000 or a percentage from 1% to 100%"
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`

	// maxUnhealthy: when more Machines than this (a number, or a percentage
	// of spec.replicas) are failed, none is replaced, since the cause is
	// likely outside the Machines. Defaults to 100%.
	// +optional
	// +kubebuilder:default="100%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxUnhealthy must be a number of Machines (0 or more) or a percentage from 0% to 100%"
	MaxUnhealthy *intstr.IntOrString `json:"maxUnhealthy,omitempty"`
}

// MachineSetSelector selects Machines by labels (a metav1.LabelSelector with
// matchLabels only: a set must know which labels its new Machines carry).
type MachineSetSelector struct {
	// matchLabels: a Machine belongs to the set when it carries every one of
	// these labels with the same value. Must not be empty: an empty selector
	// would claim every Machine in the namespace.
	// +required
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	MatchLabels map[string]string `json:"matchLabels"`
}

// MachineSetSpec is the desired state of a MachineSet.
//
// +kubebuilder:validation:XValidation:rule="self.template.spec.clusterName == self.clusterName",message="template.spec.clusterName must equal clusterName"
// +kubebuilder:validation:XValidation:rule="has(self.template.metadata.labels) && self.selector.matchLabels.all(k, k in self.template.metadata.labels && self.template.metadata.labels[k] == self.selector.matchLabels[k])",message="selector does not match the template: every selector.matchLabels entry must be in template.metadata.labels with the same value"
// +kubebuilder:validation:XValidation:rule="self.template.spec.infrastructureRef.kind.endsWith('Template') && self.template.spec.infrastructureRef.kind != 'Template'",message="template.spec.infrastructureRef must name an infrastructure template: its kind is the machine kind followed by Template (e.g. SimMachineTemplate)"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec.bootstrap.configRef) || self.template.spec.bootstrap.configRef.kind.endsWith('Template') && self.template.spec.bootstrap.configRef.kind != 'Template'",message="template.spec.bootstrap.configRef must name a bootstrap config template: its kind is the config kind followed by Template (e.g. SimBootstrapConfigTemplate)"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec.providerID)",message="template.spec.providerID must not be set: every Machine gets its own from its infrastructure"
type MachineSetSpec struct {
	// clusterName is the name of the Cluster the Machines belong to. It
	// cannot be changed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="clusterName must be a Cluster name: lowercase letters, digits, '-' and '.'"
	ClusterName string `json:"clusterName"`

	// replicas is how many Machines the set keeps. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`

	// selector picks the Machines of the set; it must match the template's
	// labels.
	// +required
	Selector MachineSetSelector `json:"selector"`

	// template is what every Machine is created from.
	// +required
	Template MachineTemplateSpec `json:"template"`

	// deletion tunes scale-down.
	// +optional
	// +kubebuilder:default={}
	Deletion MachineSetDeletionSpec `json:"deletion,omitempty,omitzero"`

	// remediation bounds the replacement of failed Machines.
	// +optional
	// +kubebuilder:default={}
	Remediation MachineSetRemediationSpec `json:"remediation,omitempty,omitzero"`

	// machineNaming is how the Machines the set creates are named; their
	// bootstrap and infrastructure objects get the same name.
	// +optional
	MachineNaming MachineNamingSpec `json:"machineNaming,omitempty,omitzero"`
}

// DefaultMachineNameTemplate names a Machine when machineNaming.template is
// not set.
const DefaultMachineNameTemplate = "{{ .machineSet.name }}-{{ .random }}"

// MachineNamingSpec says how new Machines are named.
type MachineNamingSpec struct {
	// template makes the name of a new Machine from the variables
	// {{ .cluster.name }}, {{ .machineSet.name }} and {{ .random }} (five
	// random lowercase letters and digits, required so names do not
	// collide), lowercase letters, digits, '-' and '.'. A name longer than
	// 63 characters keeps its first 58 and gets five random ones. Defaults
	// to {{ .machineSet.name }}-{{ .random }}. Changing it names only the
	// Machines created after.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.contains('{{ .random }}')",message="machineNaming.template must contain {{ .random }}, so the Machines it names do not collide"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9.-]|[{][{] *[.](cluster[.]name|machineSet[.]name|random) *[}][}])+$')",message="machineNaming.template may hold only lowercase letters, digits, '-', '.' and the variables {{ .cluster.name }}, {{ .machineSet.name }} and {{ .random }}"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[-.]') && !self.matches('[-.]$')",message="machineNaming.template must not start or end with '-' or '.': the names it makes must be valid object names"
	Template string `json:"template,omitempty"`
}

// MachineSetStatus is the observed state of a MachineSet.
type MachineSetStatus struct {
	// phase is the user-facing phase of the MachineSet.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Phase string `json:"phase,omitempty"`

	// state is the transition-table state; users should read phase and
	// conditions.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	State string `json:"state,omitempty"`

	// stateSince is when the MachineSet entered its current state.
	// +optional
	StateSince *metav1.Time `json:"stateSince,omitempty"`

	// replicas is how many Machines the set owns, those being deleted
	// included (as Cluster API counts them).
	// +optional
	Replicas int32 `json:"replicas"`

	// readyReplicas counts the owned Machines that are Ready (Ready
	// condition True and not being deleted).
	// +optional
	// +kubebuilder:default=0
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas counts the owned Machines not being deleted whose
	// Available condition is True (Ready for their spec.minReadySeconds).
	// +optional
	// +kubebuilder:default=0
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas counts, for a set of a MachineDeployment, its
	// Machines whose UpToDate condition is True (being deleted included), as
	// Cluster API's; for a stand-alone set, whose Machines have no such
	// condition, the owned Machines not being deleted that carry what the
	// template gives a Machine in place (its labels, annotations, readiness
	// gates, minReadySeconds, deletion and health settings). A MachineSet
	// never replaces a Machine to bring it up to date.
	// +optional
	// +kubebuilder:default=0
	UpToDateReplicas int32 `json:"upToDateReplicas,omitempty"`

	// versions counts the Machines (being deleted included) by the
	// Kubernetes version they run, lowest first, as Cluster API's.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MaxItems=100
	Versions []StatusVersion `json:"versions,omitempty"`

	// fullyLabeledReplicas counts the owned Machines that carry every label
	// of the template.
	// +optional
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas,omitempty"`

	// failedReplicas counts the owned Machines that failed and wait to be
	// replaced.
	// +optional
	FailedReplicas int32 `json:"failedReplicas,omitempty"`

	// selector is spec.selector as a string, for the scale subresource
	// (kubectl scale, autoscalers).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// observedGeneration is the metadata.generation the controller last
	// reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastTransition is the last transition-table row that fired.
	// +optional
	LastTransition *kit.LastTransition `json:"lastTransition,omitempty"`

	// conditions describe the current state of the MachineSet.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineSet keeps a number of identical Machines: it creates the missing
// ones from its template, replaces failed ones and deletes the surplus.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:path=machinesets,scope=Namespaced,shortName=kms,categories=krtt
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".spec.replicas",description="desired Machines"
// +kubebuilder:printcolumn:name="Current",type="integer",JSONPath=".status.replicas",priority=1,description="owned Machines, being deleted included"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.availableReplicas"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",priority=1
// +kubebuilder:printcolumn:name="Row",type="string",JSONPath=".status.lastTransition.row",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type MachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the MachineSet.
	// +required
	Spec MachineSetSpec `json:"spec"`

	// status is the observed state of the MachineSet.
	// +optional
	Status MachineSetStatus `json:"status,omitempty,omitzero"`
}

// MachineSetList is a list of MachineSets.
//
// +kubebuilder:object:root=true
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}

func init() {
	register(&MachineSet{}, &MachineSetList{})
}

var _ kit.Status = &MachineSet{}

// GetRecord is the kit's record in the MachineSet's status.
func (ms *MachineSet) GetRecord() kit.Record {
	st := &ms.Status
	return kit.Record{State: st.State, StateSince: st.StateSince, Phase: st.Phase,
		ObservedGeneration: st.ObservedGeneration, LastTransition: st.LastTransition}
}

// SetRecord writes the kit's record into the MachineSet's status.
func (ms *MachineSet) SetRecord(r kit.Record) {
	st := &ms.Status
	st.State, st.StateSince, st.ObservedGeneration, st.LastTransition = r.State, r.StateSince, r.ObservedGeneration, r.LastTransition
	st.Phase = r.Phase
}

// GetConditions returns status.conditions.
func (ms *MachineSet) GetConditions() []metav1.Condition { return ms.Status.Conditions }

// SetConditions replaces status.conditions.
func (ms *MachineSet) SetConditions(c []metav1.Condition) { ms.Status.Conditions = c }
