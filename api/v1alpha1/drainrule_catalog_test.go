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
	{name: "drain rule with an unknown selector operator", kind: "MachineDrainRule", mutate: set("spec.pods", []any{obj{"selector": obj{"matchExpressions": []any{obj{"key": "app", "operator": "Foo"}}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods[0].selector.matchExpressions[0].operator: Invalid value: "Foo": operator must be In, NotIn, Exists or DoesNotExist`},
	{name: "drain rule with In and no values", kind: "MachineDrainRule", mutate: set("spec.pods", []any{obj{"selector": obj{"matchExpressions": []any{obj{"key": "app", "operator": "In"}}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods[0].selector.matchExpressions[0]: Invalid value: operator In and NotIn need at least one value`},
	{name: "drain rule with Exists and values", kind: "MachineDrainRule", mutate: set("spec.pods", []any{obj{"namespaceSelector": obj{"matchExpressions": []any{obj{"key": "team", "operator": "Exists", "values": []any{"a"}}}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods[0].namespaceSelector.matchExpressions[0]: Invalid value: operator Exists and DoesNotExist take no values`},
	{name: "drain rule with a bad label key", kind: "MachineDrainRule", mutate: set("spec.pods", []any{obj{"selector": obj{"matchLabels": obj{"bad key!": "x"}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods[0].selector.matchLabels: Invalid value: label keys must be a name of at most 63 letters, digits, '-', '_' and '.' that starts and ends with a letter or digit, optionally after a DNS subdomain and '/' (e.g. app or example.com/tier)`},
	{name: "drain rule with a bad expression key", kind: "MachineDrainRule", mutate: set("spec.machines", []any{obj{"selector": obj{"matchExpressions": []any{obj{"key": "-pool", "operator": "Exists"}}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.machines[0].selector.matchExpressions[0].key: Invalid value: "-pool": label keys must be a name of at most 63 letters, digits, '-', '_' and '.' that starts and ends with a letter or digit, optionally after a DNS subdomain and '/' (e.g. app or example.com/tier)`},
	{name: "drain rule with a bad label value", kind: "MachineDrainRule", mutate: set("spec.machines", []any{obj{"clusterSelector": obj{"matchLabels": obj{"env": "prod east"}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.machines[0].clusterSelector.matchLabels[env]: Invalid value: "prod east": label values must be empty or at most 63 letters, digits, '-', '_' and '.' that start and end with a letter or digit`},
	{name: "drain rule with a bad expression value", kind: "MachineDrainRule", mutate: set("spec.pods", []any{obj{"selector": obj{"matchExpressions": []any{obj{"key": "app", "operator": "NotIn", "values": []any{"ok", "not/ok"}}}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods[0].selector.matchExpressions[0].values[1]: Invalid value: "not/ok": label values must be empty or at most 63 letters, digits, '-', '_' and '.' that start and end with a letter or digit`},
	{name: "drain rule with an empty pods list", kind: "MachineDrainRule", mutate: set("spec.pods", []any{}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods: Invalid value: pods must have at least one entry (leave it out to select every Pod)`},
	{name: "drain rule with an empty machines list", kind: "MachineDrainRule", mutate: set("spec.machines", []any{}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.machines: Invalid value: machines must have at least one entry (leave it out to select every Machine)`},
	{name: "drain rule with a pods entry that selects nothing in particular", kind: "MachineDrainRule", mutate: set("spec.pods", []any{obj{}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods[0]: Invalid value: a pods entry needs a selector or a namespaceSelector (leave pods out to select every Pod)`},
	{name: "drain rule with a machines entry that selects nothing in particular", kind: "MachineDrainRule", mutate: set("spec.machines", []any{obj{}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.machines[0]: Invalid value: a machines entry needs a selector or a clusterSelector (leave machines out to select every Machine)`},
	{name: "drain rule with the same pods entry twice", kind: "MachineDrainRule", mutate: set("spec.pods", []any{obj{"selector": obj{"matchLabels": obj{"app": "db"}}}, obj{"selector": obj{"matchLabels": obj{"app": "db"}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.pods: Invalid value: entries in pods must be unique`},
	{name: "drain rule with the same machines entry twice", kind: "MachineDrainRule", mutate: set("spec.machines", []any{obj{"clusterSelector": obj{"matchLabels": obj{"env": "prod"}}}, obj{"clusterSelector": obj{"matchLabels": obj{"env": "prod"}}}}),
		want: `MachineDrainRule.cluster.krtt.dev "{name}" is invalid: spec.machines: Invalid value: entries in machines must be unique`},
	{name: "unknown onDrainTimeout", kind: "Machine", mutate: set("spec.deletion.onDrainTimeout", "Delete"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.onDrainTimeout: Invalid value: "Delete": onDrainTimeout must be Skip (leave the remaining Pods and go on, the default) or Force (force-delete them)`},
}
