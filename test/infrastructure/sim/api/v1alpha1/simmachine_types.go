package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// SimBehavior scripts how the simulated infrastructure behaves.
type SimBehavior struct {
	// provisionDelaySeconds is how long provisioning takes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ProvisionDelaySeconds int32 `json:"provisionDelaySeconds,omitempty"`

	// deleteDelaySeconds is how long deletion takes once requested.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DeleteDelaySeconds int32 `json:"deleteDelaySeconds,omitempty"`

	// failProvisioning makes provisioning fail with failReason.
	// +optional
	FailProvisioning bool `json:"failProvisioning,omitempty"`

	// failReason is the reason reported when provisioning fails.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	FailReason string `json:"failReason,omitempty"`

	// nodeNotReady makes the simulated Node report Ready=False.
	// +optional
	NodeNotReady bool `json:"nodeNotReady,omitempty"`

	// nodeConditions are Node condition types (for example KernelDeadlock or
	// ReadonlyFilesystem) the simulated Node reports True, as
	// node-problem-detector would; a type removed from the list is reported
	// False again.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=316
	// +kubebuilder:validation:items:XValidation:rule="self != 'Ready'",message="nodeConditions cannot name Ready; use nodeNotReady or nodeUnreachable"
	NodeConditions []string `json:"nodeConditions,omitempty"`

	// nodeUnreachable simulates a dead kubelet: the Node's heartbeats stop,
	// its Ready condition turns Unknown (reason NodeStatusUnknown) and it
	// gets the node.kubernetes.io/unreachable NoSchedule and NoExecute
	// taints, as the node lifecycle controller would do; Pods on it are
	// neither started nor finished once terminating. Clearing it recovers
	// the Node.
	// +optional
	NodeUnreachable bool `json:"nodeUnreachable,omitempty"`

	// vmGone makes the VM vanish behind a provisioned SimMachine: the sim
	// cloud deletes the Node and reports status.failureReason VMNotFound.
	// A vanished VM does not come back when this is cleared.
	// +optional
	VMGone bool `json:"vmGone,omitempty"`

	// interruptible makes the VM a spot (preemptible) instance: the sim
	// cloud reports status.interruptible true once it is provisioned, and
	// follows the knob after.
	// +optional
	Interruptible bool `json:"interruptible,omitempty"`
}

// SimMachineSpec is the desired state of a SimMachine.
type SimMachineSpec struct {
	// providerID identifies the simulated machine; the sim controller sets
	// it when provisioning completes, unless it is already set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID *string `json:"providerID,omitempty"`

	// failureDomain is the failure domain the machine is placed in.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// sim scripts the simulated behaviour.
	// +optional
	Sim SimBehavior `json:"sim,omitempty,omitzero"`
}

// SimMachineInitializationStatus records the provisioning milestones.
type SimMachineInitializationStatus struct {
	// provisioned is true once the simulated machine is provisioned.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// SimMachineStatus is the observed state of a SimMachine.
type SimMachineStatus struct {
	// initialization records the provisioning milestones.
	// +optional
	Initialization SimMachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// addresses of the simulated machine.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// failureDomain the simulated machine runs in.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// interruptible is true when the simulated VM is a spot (preemptible)
	// instance (the infrastructure machine contract's status.interruptible).
	// +optional
	Interruptible bool `json:"interruptible,omitempty"`

	// failureReason is a terminal problem of the simulated VM, machine
	// readable (the v1beta1 provider contract), e.g. VMNotFound.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureReason *string `json:"failureReason,omitempty"`

	// failureMessage describes the terminal problem for humans (the v1beta1
	// provider contract).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions describe the current state of the SimMachine.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimMachine is a simulated infrastructure machine.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=simmachines,scope=Namespaced,categories=krtt
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SimMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the SimMachine.
	// +optional
	Spec SimMachineSpec `json:"spec,omitempty"`

	// status is the observed state of the SimMachine.
	// +optional
	Status SimMachineStatus `json:"status,omitempty,omitzero"`
}

// SimMachineList is a list of SimMachines.
//
// +kubebuilder:object:root=true
type SimMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimMachine `json:"items"`
}

func init() {
	register(&SimMachine{}, &SimMachineList{})
}
