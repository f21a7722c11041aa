package v1alpha1

import (
	"github.com/krtt-dev/krtt/api/kit"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineDeploymentStrategyType says how a MachineDeployment replaces its
// Machines when its template changes.
//
// +kubebuilder:validation:Enum=RollingUpdate;Recreate;OnDelete
type MachineDeploymentStrategyType string

// Strategies.
const (
	// RollingUpdateStrategy replaces Machines a few at a time, within
	// maxSurge and maxUnavailable.
	RollingUpdateStrategy MachineDeploymentStrategyType = "RollingUpdate"
	// RecreateStrategy deletes every old Machine before creating new ones.
	RecreateStrategy MachineDeploymentStrategyType = "Recreate"
	// OnDeleteStrategy creates a new Machine only when a user deletes an
	// old one.
	OnDeleteStrategy MachineDeploymentStrategyType = "OnDelete"
)

// MachineDeploymentRollingUpdate bounds a rolling update.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.maxSurge) && has(self.maxUnavailable) && (type(self.maxSurge) == int ? self.maxSurge == 0 : self.maxSurge == '0%') && (type(self.maxUnavailable) == int ? self.maxUnavailable == 0 : self.maxUnavailable == '0%'))",message="maxSurge and maxUnavailable must not both be 0"
type MachineDeploymentRollingUpdate struct {
	// maxSurge is how many Machines (a number, or a percentage of
	// spec.replicas rounded up) may exist above spec.replicas during a
	// rollout. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxSurge must be a number of Machines (0 or more) or a percentage from 0% to 100%"
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// maxUnavailable is how many Machines (a number, or a percentage of
	// spec.replicas rounded down) may be unavailable during a rollout.
	// Defaults to 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxUnavailable must be a number of Machines (0 or more) or a percentage from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// deletion tunes which Machines of a MachineSet go first when it
	// scales down; passed to every MachineSet (it does not roll).
	// +optional
	// +kubebuilder:default={}
	Deletion MachineSetDeletionSpec `json:"deletion,omitempty,omitzero"`
}

// MachineDeploymentStrategy says how Machines are replaced.
type MachineDeploymentStrategy struct {
	// type: RollingUpdate (default), Recreate or OnDelete.
	// +optional
	// +kubebuilder:default=RollingUpdate
	Type MachineDeploymentStrategyType `json:"type,omitempty"`

	// rollingUpdate bounds a RollingUpdate; its deletion order applies to
	// every strategy.
	// +optional
	// +kubebuilder:default={}
	RollingUpdate MachineDeploymentRollingUpdate `json:"rollingUpdate,omitempty,omitzero"`
}

// MachineDeploymentRollout asks for a rollout.
type MachineDeploymentRollout struct {
	// after: once this time has passed, Machines created before it are
	// replaced (Cluster API's rolloutAfter), as if the template changed.
	// +optional
	After *metav1.Time `json:"after,omitempty"`
}

// MachineDeploymentSpec is the desired state of a MachineDeployment.
//
// +kubebuilder:validation:XValidation:rule="self.template.spec.clusterName == self.clusterName",message="template.spec.clusterName must equal clusterName"
// +kubebuilder:validation:XValidation:rule="has(self.template.metadata.labels) && self.selector.matchLabels.all(k, k in self.template.metadata.labels && self.template.metadata.labels[k] == self.selector.matchLabels[k])",message="selector does not match the template: every selector.matchLabels entry must be in template.metadata.labels with the same value"
// +kubebuilder:validation:XValidation:rule="self.template.spec.infrastructureRef.kind.endsWith('Template') && self.template.spec.infrastructureRef.kind != 'Template'",message="template.spec.infrastructureRef must name an infrastructure template: its kind is the machine kind followed by Template (e.g. SimMachineTemplate)"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec.bootstrap.configRef) || self.template.spec.bootstrap.configRef.kind.endsWith('Template') && self.template.spec.bootstrap.configRef.kind != 'Template'",message="template.spec.bootstrap.configRef must name a bootstrap config template: its kind is the config kind followed by Template (e.g. SimBootstrapConfigTemplate)"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec.providerID)",message="template.spec.providerID must not be set: every Machine gets its own from its infrastructure"
type MachineDeploymentSpec struct {
	// clusterName is the name of the Cluster the Machines belong to. It
	// cannot be changed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// replicas is how many Machines the deployment keeps. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`

	// selector picks the Machines (and MachineSets) of the deployment; it
	// must match the template's labels. It cannot be changed.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="selector is immutable"
	Selector MachineSetSelector `json:"selector"`

	// template is what every Machine is created from. A change to its spec
	// rolls the Machines out; a change to its labels and annotations, or
	// to spec.deletion and spec.health, reaches the Machines in place.
	// +required
	Template MachineTemplateSpec `json:"template"`

	// strategy says how Machines are replaced when the template changes.
	// +optional
	// +kubebuilder:default={}
	Strategy MachineDeploymentStrategy `json:"strategy,omitempty,omitzero"`

	// revisionHistoryLimit is how many old MachineSets, scaled to 0 and
	// without Machines, are kept for a rollback once a rollout is done.
	// Defaults to 0: as in Cluster API, a finished rollout leaves only the
	// current MachineSet.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// paused stops rollouts: a template change waits; scaling still
	// applies.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// progressDeadlineSeconds: a rollout that makes no progress for this
	// long is reported (Progressing False, ProgressDeadlineExceeded) and
	// goes on trying. Defaults to 600.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// rollout asks for a rollout at a time.
	// +optional
	Rollout MachineDeploymentRollout `json:"rollout,omitempty,omitzero"`

	// remediation is passed to every MachineSet of the deployment.
	// +optional
	// +kubebuilder:default={}
	Remediation MachineSetRemediationSpec `json:"remediation,omitempty,omitzero"`

	// machineNaming is passed to every MachineSet of the deployment, old
	// ones included: how the Machines they create are named.
	// +optional
	MachineNaming MachineNamingSpec `json:"machineNaming,omitempty,omitzero"`
}

// MachineDeploymentStatus is the observed state of a MachineDeployment.
type MachineDeploymentStatus struct {
	// phase compares the Machines (being deleted included) with
	// spec.replicas: Running, ScalingUp, ScalingDown (also while the
	// deployment is deleted), or Unknown when they could not be read.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Phase string `json:"phase,omitempty"`

	// state is the transition-table state; users should read phase and
	// conditions.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	State string `json:"state,omitempty"`

	// stateSince is when the MachineDeployment entered its current state.
	// +optional
	StateSince *metav1.Time `json:"stateSince,omitempty"`

	// progressTime is when the rollout last made progress (a MachineSet
	// created or scaled, a Machine became available or went away, the spec
	// changed); the progress deadline counts from it.
	// +optional
	ProgressTime *metav1.Time `json:"progressTime,omitempty"`

	// replicas counts the Machines of every MachineSet of the deployment,
	// those being deleted included.
	// +optional
	Replicas int32 `json:"replicas"`

	// updatedReplicas counts the Machines of the current template's
	// MachineSet that are not being deleted.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// readyReplicas counts the Ready Machines not being deleted.
	// +optional
	// +kubebuilder:default=0
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas counts the Machines whose Available condition is
	// True (Ready for their spec.minReadySeconds).
	// +optional
	// +kubebuilder:default=0
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas counts the Machines whose UpToDate condition is True
	// (their MachineSet's template is the deployment's), those being
	// deleted included, as Cluster API's does.
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

	// unavailableReplicas is spec.replicas minus availableReplicas (0 at
	// least).
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`

	// selector is spec.selector as a string, for the scale subresource.
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

	// conditions: Available, Progressing, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineDeployment keeps a number of Machines of a template and rolls them
// out to a new template through one MachineSet per template revision.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:path=machinedeployments,scope=Namespaced,shortName=kmd,categories=krtt
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".spec.replicas",description="desired Machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas"
// +kubebuilder:printcolumn:name="Updated",type="integer",JSONPath=".status.updatedReplicas"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.availableReplicas"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type MachineDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the MachineDeployment.
	// +required
	Spec MachineDeploymentSpec `json:"spec"`

	// status is the observed state of the MachineDeployment.
	// +optional
	Status MachineDeploymentStatus `json:"status,omitempty,omitzero"`
}

// MachineDeploymentList is a list of MachineDeployments.
//
// +kubebuilder:object:root=true
type MachineDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineDeployment `json:"items"`
}

func init() {
	register(&MachineDeployment{}, &MachineDeploymentList{})
}

var _ kit.Status = &MachineDeployment{}

// GetRecord is the kit's record in the MachineDeployment's status.
func (md *MachineDeployment) GetRecord() kit.Record {
	st := &md.Status
	return kit.Record{State: st.State, StateSince: st.StateSince, Phase: st.Phase,
		ObservedGeneration: st.ObservedGeneration, LastTransition: st.LastTransition}
}

// SetRecord writes the kit's record into the MachineDeployment's status.
func (md *MachineDeployment) SetRecord(r kit.Record) {
	st := &md.Status
	st.State, st.StateSince, st.ObservedGeneration, st.LastTransition = r.State, r.StateSince, r.ObservedGeneration, r.LastTransition
	st.Phase = r.Phase
}

// GetConditions returns status.conditions.
func (md *MachineDeployment) GetConditions() []metav1.Condition { return md.Status.Conditions }

// SetConditions replaces status.conditions.
func (md *MachineDeployment) SetConditions(c []metav1.Condition) { md.Status.Conditions = c }
