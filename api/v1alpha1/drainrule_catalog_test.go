package v1alpha1_test

import (
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The bad-input cases of MachineDrainRules and of the Machine's
// spec.deletion.onDrainTimeout, run by TestBadInputCatalog.
func init() {
	catalog = append(catalog, drainRuleCatalog...)
}

func baseDrainRule(name string) obj {
	return obj{
		"apiVersion": clusterv1.GroupVersion.String(),
		"kind":       "MachineDrainRule",
		"metadata":   obj{"namespace": ns, "name": name},
		"spec":       obj{"drain": obj{"behavior": "Drain"}},
	}
}

var drainRuleCatalog = []badInput{
	{name: "drain rule with an unknown behavior", kind: "MachineDrainRule", mutate: set("spec.drain.behavior", "Evict"),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.drain.behavior: Invalid value: "Evict": behavior must be Drain (evict the Pods), Skip (leave them alone) or WaitCompleted (wait until they complete)`},
	{name: "drain rule with order and Skip", kind: "MachineDrainRule", mutate: all(set("spec.drain.behavior", "Skip"), set("spec.drain.order", int64(5))),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.drain: Invalid value: order can only be set when behavior is Drain (Skip and WaitCompleted Pods are never evicted)`},
	{name: "drain rule with order and WaitCompleted", kind: "MachineDrainRule", mutate: all(set("spec.drain.behavior", "WaitCompleted"), set("spec.drain.order", int64(0))),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.drain: Invalid value: order can only be set when behavior is Drain (Skip and WaitCompleted Pods are never evicted)`},
	{name: "drain rule without a behavior", kind: "MachineDrainRule", mutate: del("spec.drain.behavior"),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: [spec.drain.behavior: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "drain rule with an order as a string", kind: "MachineDrainRule", mutate: set("spec.drain.order", "first"),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: [spec.drain.order: Invalid value: "string": spec.drain.order in body must be of type integer: "string", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "unknown onDrainTimeout", kind: "Machine", mutate: set("spec.deletion.onDrainTimeout", "Delete"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.onDrainTimeout: Invalid value: "Delete": onDrainTimeout must be Skip (leave the remaining Pods and go on, the default) or Force (force-delete them)`},
}
