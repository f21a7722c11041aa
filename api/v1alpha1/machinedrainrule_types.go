package v1alpha1

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/krtt-dev/krtt/api/kit"
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

// LabelSelector selects objects by their labels, as metav1.LabelSelector
// does (the same fields, the same meaning), with every part validated when
// the rule is written: a selector that cannot be evaluated would otherwise
// match nothing, and a Skip or WaitCompleted rule with a typo would let the
// drain evict the Pods it was meant to protect. An empty selector matches
// everything.
type LabelSelector struct {
	// matchLabels: every key must have exactly this value.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="label keys must be a name of at most 63 letters, digits, '-', '_' and '.' that starts and ends with a letter or digit, optionally after a DNS subdomain and '/' (e.g. app or example.com/tier)"
	MatchLabels map[string]LabelValue `json:"matchLabels,omitempty"`

	// matchExpressions: every requirement must hold.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelValue is the value of a label.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="self.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$')",message="label values must be empty or at most 63 letters, digits, '-', '_' and '.' that start and end with a letter or digit"
type LabelValue string

// LabelSelectorRequirement is one requirement of a LabelSelector, as
// metav1.LabelSelectorRequirement.
//
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['In', 'NotIn']) || has(self.values) && size(self.values) > 0",message="operator In and NotIn need at least one value"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",message="operator Exists and DoesNotExist take no values"
type LabelSelectorRequirement struct {
	// key is the label key the requirement applies to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$')",message="label keys must be a name of at most 63 letters, digits, '-', '_' and '.' that starts and ends with a letter or digit, optionally after a DNS subdomain and '/' (e.g. app or example.com/tier)"
	Key string `json:"key"`

	// operator is In, NotIn, Exists or DoesNotExist.
	// +required
	// +kubebuilder:validation:XValidation:rule="self in ['In', 'NotIn', 'Exists', 'DoesNotExist']",message="operator must be In, NotIn, Exists or DoesNotExist"
	Operator metav1.LabelSelectorOperator `json:"operator"`

	// values are the label values In and NotIn compare with; Exists and
	// DoesNotExist take none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$')",message="label values must be empty or at most 63 letters, digits, '-', '_' and '.' that start and end with a letter or digit"
	Values []string `json:"values,omitempty"`
}

// AsMeta returns the selector as a metav1.LabelSelector, to evaluate it.
func (s *LabelSelector) AsMeta() *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := &metav1.LabelSelector{}
	for k, v := range s.MatchLabels {
		if out.MatchLabels == nil {
			out.MatchLabels = map[string]string{}
		}
		out.MatchLabels[k] = string(v)
	}
	for _, r := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values})
	}
	return out
}

// MachineDrainRuleMachineSelector selects Machines by their labels and their
// Cluster's labels; both must match (an empty selector matches all). An
// entry with neither is refused, as Cluster API's MinProperties: a
// misspelt field dropped on the way would otherwise select every Machine.
// +kubebuilder:validation:XValidation:rule="has(self.selector) || has(self.clusterSelector)",message="a machines entry needs a selector or a clusterSelector (leave machines out to select every Machine)"
type MachineDrainRuleMachineSelector struct {
	// selector matches the Machine's labels.
	// +optional
	Selector *LabelSelector `json:"selector,omitempty"`
	// clusterSelector matches the labels of the Machine's Cluster.
	// +optional
	ClusterSelector *LabelSelector `json:"clusterSelector,omitempty"`
}

// MachineDrainRulePodSelector selects Pods by their labels and their
// Namespace's labels; both must match (an empty selector matches all). An
// entry with neither is refused, as for Machines.
// +kubebuilder:validation:XValidation:rule="has(self.selector) || has(self.namespaceSelector)",message="a pods entry needs a selector or a namespaceSelector (leave pods out to select every Pod)"
type MachineDrainRulePodSelector struct {
	// selector matches the Pod's labels.
	// +optional
	Selector *LabelSelector `json:"selector,omitempty"`
	// namespaceSelector matches the labels of the Pod's Namespace.
	// +optional
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
}

// MachineDrainRuleSpec is the desired drain behaviour for the Pods and
// Machines it selects.
type MachineDrainRuleSpec struct {
	// drain is what the drain does with the matched Pods.
	// +required
	Drain MachineDrainRuleDrainConfig `json:"drain"`

	// machines selects the Machines (in the rule's namespace) whose drain
	// the rule applies to; any entry may match. Left out: every Machine.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="size(self) > 0",message="machines must have at least one entry (leave it out to select every Machine)"
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, x == y))",message="entries in machines must be unique"
	Machines []MachineDrainRuleMachineSelector `json:"machines,omitempty"`

	// pods selects the Pods the rule applies to; any entry may match.
	// Left out: every Pod.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="size(self) > 0",message="pods must have at least one entry (leave it out to select every Pod)"
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, x == y))",message="entries in pods must be unique"
	Pods []MachineDrainRulePodSelector `json:"pods,omitempty"`
}

// MachineDrainRuleStatus is what the MachineDrainRule controller observed
// of the rule: whether its selectors can be evaluated.
type MachineDrainRuleStatus struct {
	// phase is the user-facing phase of the rule (from its table state).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Phase string `json:"phase,omitempty"`

	// state is the transition-table state the controller persists.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	State string `json:"state,omitempty"`

	// stateSince is when the rule entered its current state.
	// +optional
	StateSince *metav1.Time `json:"stateSince,omitempty"`

	// observedGeneration is the metadata.generation the controller last
	// reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastTransition is the last transition-table row that fired.
	// +optional
	LastTransition *kit.LastTransition `json:"lastTransition,omitempty"`

	// conditions: Valid (False, reason InvalidSelector, naming the
	// selector and why, while a selector cannot be evaluated: such a rule
	// holds the drain of every Machine it may select).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineDrainRule says how the drain of the selected Machines treats the
// selected Pods, as Cluster API's MachineDrainRule does. When several rules
// match a Pod, the first by name (alphabetical) applies; a Pod's
// cluster.krtt.dev/drain label (skip, wait-completed) overrides every rule.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kmdr,categories=krtt
// +kubebuilder:printcolumn:name="Behavior",type=string,JSONPath=`.spec.drain.behavior`
// +kubebuilder:printcolumn:name="Order",type=integer,JSONPath=`.spec.drain.order`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MachineDrainRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachineDrainRuleSpec `json:"spec"`

	// status is what the MachineDrainRule controller observed of the rule.
	// +optional
	Status MachineDrainRuleStatus `json:"status,omitempty"`
}

// InvalidSelector says which selector of the rule cannot be evaluated and
// why; empty when every one can. The API server refuses such selectors, so
// only a rule written before it validated them has one.
func (r *MachineDrainRule) InvalidSelector() string {
	if r == nil {
		return ""
	}
	check := func(path string, sel *LabelSelector) string {
		if sel == nil {
			return ""
		}
		if _, err := metav1.LabelSelectorAsSelector(sel.AsMeta()); err != nil {
			return path + ": " + err.Error()
		}
		return ""
	}
	for i, m := range r.Spec.Machines {
		for _, bad := range []string{check(fmt.Sprintf("spec.machines[%d].selector", i), m.Selector), check(fmt.Sprintf("spec.machines[%d].clusterSelector", i), m.ClusterSelector)} {
			if bad != "" {
				return bad
			}
		}
	}
	for i, p := range r.Spec.Pods {
		for _, bad := range []string{check(fmt.Sprintf("spec.pods[%d].selector", i), p.Selector), check(fmt.Sprintf("spec.pods[%d].namespaceSelector", i), p.NamespaceSelector)} {
			if bad != "" {
				return bad
			}
		}
	}
	return ""
}

var _ kit.Status = &MachineDrainRule{}

// GetRecord is the kit's record in the rule's status.
func (r *MachineDrainRule) GetRecord() kit.Record {
	st := &r.Status
	return kit.Record{State: st.State, StateSince: st.StateSince, Phase: st.Phase,
		ObservedGeneration: st.ObservedGeneration, LastTransition: st.LastTransition}
}

// SetRecord writes the kit's record into the rule's status.
func (r *MachineDrainRule) SetRecord(rec kit.Record) {
	st := &r.Status
	st.State, st.StateSince, st.ObservedGeneration, st.LastTransition = rec.State, rec.StateSince, rec.ObservedGeneration, rec.LastTransition
	st.Phase = rec.Phase
}

// GetConditions returns status.conditions.
func (r *MachineDrainRule) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions replaces status.conditions.
func (r *MachineDrainRule) SetConditions(conds []metav1.Condition) { r.Status.Conditions = conds }

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
