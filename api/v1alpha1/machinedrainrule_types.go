package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineDrainRuleDrainBehavior says what the drain does with the Pods a
// rule matches.
// +kubebuilder:validation:XValidation:rule="self in ['Drain', 'Skip', 'WaitCompleted']",message="behavior must be Drain (evict the Pods), Skip (leave them alone) or WaitCompleted (wait until they complete)"
type MachineDrainRuleDrainBehavior string

const (
	// DrainBehaviorDrain evicts the Pods, in order groups (spec.drain.order).
	DrainBehaviorDrain MachineDrainRuleDrainBehavior = "Drain"
	// DrainBehaviorSkip leaves the Pods alone.
	DrainBehaviorSkip MachineDrainRuleDrainBehavior = "Skip"
	// DrainBehaviorWaitCompleted never evicts the Pods: the drain waits until
	// they are Succeeded or Failed.
	DrainBehaviorWaitCompleted MachineDrainRuleDrainBehavior = "WaitCompleted"
)

// MachineDrainRuleDrainConfig is what the drain does with the matched Pods.
//
// +kubebuilder:validation:XValidation:rule="!has(self.order) || self.behavior == 'Drain'",message="order can only be set when behavior is Drain (Skip and WaitCompleted Pods are never evicted)"
type MachineDrainRuleDrainConfig struct {
	// behavior is Drain (evict), Skip (leave alone) or WaitCompleted (never
	// evict; wait until the Pod has completed).
	// +required
	Behavior MachineDrainRuleDrainBehavior `json:"behavior"`

	// order groups the Pods of behavior Drain: lower orders are evicted
	// first, and a group starts only when every Pod of the lower groups is
	// gone. Defaults to 0 (Pods no rule matches are in group 0 too).
	// +optional
	Order *int32 `json:"order,omitempty"`
}

// MachineDrainRuleMachineSelector selects Machines by their labels and their
// Cluster's labels; both must match (an empty selector matches all).
type MachineDrainRuleMachineSelector struct {
	// selector matches the Machine's labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// clusterSelector matches the labels of the Machine's Cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
}

// MachineDrainRulePodSelector selects Pods by their labels and their
// Namespace's labels; both must match (an empty selector matches all).
type MachineDrainRulePodSelector struct {
	// selector matches the Pod's labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// namespaceSelector matches the labels of the Pod's Namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// MachineDrainRuleSpec is the desired drain behaviour for the Pods and
// Machines it selects.
type MachineDrainRuleSpec struct {
	// drain is what the drain does with the matched Pods.
	// +required
	Drain MachineDrainRuleDrainConfig `json:"drain"`

	// machines selects the Machines (in the rule's namespace) whose drain
	// the rule applies to; any entry may match. Empty: every Machine.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Machines []MachineDrainRuleMachineSelector `json:"machines,omitempty"`

	// pods selects the Pods the rule applies to; any entry may match.
	// Empty: every Pod.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Pods []MachineDrainRulePodSelector `json:"pods,omitempty"`
}

// MachineDrainRule says how the drain of the selected Machines treats the
// selected Pods, as Cluster API's MachineDrainRule does. When several rules
// match a Pod, the first by name (alphabetical) applies; a Pod's
// cluster.krtt.dev/drain label (skip, wait-completed) overrides every rule.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=kmdr,categories=krtt
// +kubebuilder:printcolumn:name="Behavior",type=string,JSONPath=`.spec.drain.behavior`
// +kubebuilder:printcolumn:name="Order",type=integer,JSONPath=`.spec.drain.order`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MachineDrainRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachineDrainRuleSpec `json:"spec"`
}

// MachineDrainRuleList is a list of MachineDrainRules.
//
// +kubebuilder:object:root=true
type MachineDrainRuleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineDrainRule `json:"items"`
}

func init() {
	register(&MachineDrainRule{}, &MachineDrainRuleList{})
}
