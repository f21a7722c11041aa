package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The bad-input catalog: hostile or malformed Machines and Clusters, each
// with the exact refusal a user gets from the API server. Objects are built
// as unstructured so that missing fields, wrong types and unknown fields can
// be written at all, and are sent with strict field validation, as kubectl
// does by default.

type obj = map[string]any

// at walks to the map holding the last element of path, creating maps on the
// way.
func at(o obj, path string) (obj, string) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := o[p].(obj)
		if !ok {
			next = obj{}
			o[p] = next
		}
		o = next
	}
	return o, parts[len(parts)-1]
}

func set(path string, v any) func(obj) {
	return func(o obj) { m, k := at(o, path); m[k] = v }
}

func del(path string) func(obj) {
	return func(o obj) { m, k := at(o, path); delete(m, k) }
}

func all(fns ...func(obj)) func(obj) {
	return func(o obj) {
		for _, fn := range fns {
			fn(o)
		}
	}
}

func baseMachine(name string) obj {
	return obj{
		"apiVersion": clusterv1.GroupVersion.String(),
		"kind":       "Machine",
		"metadata":   obj{"namespace": ns, "name": name},
		"spec": obj{
			"clusterName":       "c1",
			"bootstrap":         obj{"configRef": obj{"apiGroup": "sim.krtt.dev", "kind": "SimBootstrapConfig", "name": "b1"}},
			"infrastructureRef": obj{"apiGroup": "sim.krtt.dev", "kind": "SimMachine", "name": "i1"},
		},
	}
}

func baseCluster(name string) obj {
	return obj{
		"apiVersion": clusterv1.GroupVersion.String(),
		"kind":       "Cluster",
		"metadata":   obj{"namespace": ns, "name": name},
		"spec":       obj{},
	}
}

// op is what the case does with the object.
type op int

const (
	opCreate       op = iota // create the mutated object
	opUpdate                 // create it as before leaves it, then update it mutated
	opStatusUpdate           // create it, then write the mutated status
)

type badInput struct {
	name   string
	kind   string // Machine, Cluster or MachineDrainRule
	op     op
	before func(obj) // applied before the create, for updates
	mutate func(obj)
	want   string // the whole error the API server returns; {name} stands for the object's name
}

var (
	long63  = strings.Repeat("a", 63)
	long64  = strings.Repeat("a", 64)
	long254 = strings.Repeat("a", 254)
)

func addresses(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = obj{"type": "InternalIP", "address": fmt.Sprintf("10.0.0.%d", i)}
	}
	return out
}

// catalog lists the refusals. The object name is cat-<index> unless the case
// sets metadata.name itself.
var catalog = []badInput{
	// Missing and empty fields.
	{name: "no spec", kind: "Machine", mutate: del("spec"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "no clusterName", kind: "Machine", mutate: del("spec.clusterName"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.clusterName: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "empty clusterName", kind: "Machine", mutate: set("spec.clusterName", ""),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.clusterName: Invalid value: "": spec.clusterName in body should be at least 1 chars long, spec.clusterName: Invalid value: "": clusterName must be a Cluster name: lowercase letters, digits, '-' and '.']`},
	{name: "no bootstrap", kind: "Machine", mutate: del("spec.bootstrap"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.bootstrap: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "empty bootstrap", kind: "Machine", mutate: set("spec.bootstrap", obj{}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.bootstrap: Invalid value: bootstrap needs configRef or dataSecretName`},
	{name: "empty dataSecretName", kind: "Machine", mutate: set("spec.bootstrap.dataSecretName", ""),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.bootstrap.dataSecretName: Invalid value: "": spec.bootstrap.dataSecretName in body should be at least 1 chars long, spec.bootstrap.dataSecretName: Invalid value: "": dataSecretName must be a Secret name: lowercase letters, digits, '-' and '.']`},
	{name: "no infrastructureRef", kind: "Machine", mutate: del("spec.infrastructureRef"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.infrastructureRef: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "infrastructureRef without name", kind: "Machine", mutate: del("spec.infrastructureRef.name"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.infrastructureRef.name: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "empty providerID", kind: "Machine", mutate: set("spec.providerID", ""),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.providerID: Invalid value: "": spec.providerID in body should be at least 1 chars long, spec.providerID: Invalid value: "": providerID must be printable ASCII without spaces, as a Node's spec.providerID is]`},

	// Wrong types and unknown fields.
	{name: "timeout as a duration string", kind: "Machine", mutate: set("spec.deletion.nodeDrainTimeoutSeconds", "30s"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.deletion.nodeDrainTimeoutSeconds: Invalid value: "string": spec.deletion.nodeDrainTimeoutSeconds in body must be of type integer: "string", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "timeout beyond int32", kind: "Machine", mutate: set("spec.deletion.nodeDeletionTimeoutSeconds", int64(1)<<32),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.deletion.nodeDeletionTimeoutSeconds, spec.deletion.nodeDeletionTimeoutSeconds: Invalid value: 4294967296: nodeDeletionTimeoutSeconds must be at most 2592000 (30 days); use 0 to retry forever]`},
	{name: "unknown spec field", kind: "Machine", mutate: set("spec.replicas", int64(3)),
		want: `Machine in version "v1alpha1" cannot be handled as a Machine: strict decoding error: unknown field "spec.replicas"`},
	{name: "ref to another namespace", kind: "Machine", mutate: set("spec.infrastructureRef.namespace", "kube-system"),
		want: `Machine in version "v1alpha1" cannot be handled as a Machine: strict decoding error: unknown field "spec.infrastructureRef.namespace"`},

	// Negative and absurd timeouts.
	{name: "negative drain timeout", kind: "Machine", mutate: set("spec.deletion.nodeDrainTimeoutSeconds", int64(-1)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.nodeDrainTimeoutSeconds: Invalid value: -1: spec.deletion.nodeDrainTimeoutSeconds in body should be greater than or equal to 0`},
	{name: "absurd drain timeout", kind: "Machine", mutate: set("spec.deletion.nodeDrainTimeoutSeconds", int64(2147483647)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.nodeDrainTimeoutSeconds: Invalid value: 2147483647: nodeDrainTimeoutSeconds must be at most 2592000 (30 days); use 0 to wait forever`},
	{name: "absurd volume detach timeout", kind: "Machine", mutate: set("spec.deletion.nodeVolumeDetachTimeoutSeconds", int64(2592001)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.nodeVolumeDetachTimeoutSeconds: Invalid value: 2592001: nodeVolumeDetachTimeoutSeconds must be at most 2592000 (30 days); use 0 to wait forever`},
	{name: "absurd node deletion timeout", kind: "Machine", mutate: set("spec.deletion.nodeDeletionTimeoutSeconds", int64(100000000)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.nodeDeletionTimeoutSeconds: Invalid value: 100000000: nodeDeletionTimeoutSeconds must be at most 2592000 (30 days); use 0 to retry forever`},
	{name: "negative health timeout", kind: "Machine", mutate: set("spec.health.healthTimeoutSeconds", int64(-1)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.health.healthTimeoutSeconds: Invalid value: -1: healthTimeoutSeconds cannot be negative; use 0 to never fail an unhealthy Machine`},
	{name: "negative creation timeout", kind: "Machine", mutate: set("spec.health.creationTimeoutSeconds", int64(-600)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.health.creationTimeoutSeconds: Invalid value: -600: creationTimeoutSeconds cannot be negative; use 0 to wait forever for a Machine to come up`},
	{name: "negative maxEvictRetries", kind: "Machine", mutate: set("spec.deletion.maxEvictRetries", int64(-1)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.maxEvictRetries: Invalid value: -1: maxEvictRetries cannot be negative; use 0 to delete Pods without evicting them, or leave it unset to retry evictions until the drain timeout`},
	{name: "absurd maxEvictRetries", kind: "Machine", mutate: set("spec.deletion.maxEvictRetries", int64(1000000)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.deletion.maxEvictRetries: Invalid value: 1000000: maxEvictRetries must be at most 100000; leave it unset to retry evictions until the drain timeout`},
	{name: "absurd health timeout", kind: "Machine", mutate: set("spec.health.healthTimeoutSeconds", int64(2592001)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.health.healthTimeoutSeconds: Invalid value: 2592001: healthTimeoutSeconds must be at most 2592000 (30 days); use 0 to never fail an unhealthy Machine`},
	{name: "health timeout as a duration string", kind: "Machine", mutate: set("spec.health.healthTimeoutSeconds", "10m"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.health.healthTimeoutSeconds: Invalid value: "string": spec.health.healthTimeoutSeconds in body must be of type integer: "string", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "Ready as a health node condition", kind: "Machine", mutate: set("spec.health.nodeConditions", []any{"DiskPressure", "Ready"}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.health.nodeConditions: Invalid value: nodeConditions lists conditions that are unhealthy when True; Ready is always checked (unhealthy when False or Unknown) and cannot be listed`},
	{name: "health node condition with a space", kind: "Machine", mutate: set("spec.health.nodeConditions", []any{"Disk Pressure"}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.health.nodeConditions[0]: Invalid value: "Disk Pressure": nodeConditions entries must be Node condition types such as DiskPressure or example.com/GPUFailed`},
	{name: "empty health node condition", kind: "Machine", mutate: set("spec.health.nodeConditions", []any{""}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.health.nodeConditions[0]: Invalid value: "": spec.health.nodeConditions[0] in body should be at least 1 chars long, spec.health.nodeConditions[0]: Invalid value: "": nodeConditions entries must be Node condition types such as DiskPressure or example.com/GPUFailed]`},
	{name: "repeated health node condition", kind: "Machine", mutate: set("spec.health.nodeConditions", []any{"DiskPressure", "DiskPressure"}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.health.nodeConditions[1]: Duplicate value: "DiskPressure"`},
	{name: "Ready as a readiness gate", kind: "Machine", mutate: set("spec.readinessGates", []any{obj{"conditionType": "Ready"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.readinessGates: Invalid value: readinessGates cannot name Ready or Available: Ready is what the gates feed, and Available follows Ready`},
	{name: "readiness gate with a space", kind: "Machine", mutate: set("spec.readinessGates", []any{obj{"conditionType": "Software Installed"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.readinessGates[0].conditionType: Invalid value: "Software Installed": conditionType must be a condition type such as APIServerPodHealthy or example.com/SoftwareInstalled`},
	{name: "readiness gate with an unknown polarity", kind: "Machine", mutate: set("spec.readinessGates", []any{obj{"conditionType": "example.com/Installed", "polarity": "Inverted"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.readinessGates[0].polarity: Unsupported value: "Inverted": supported values: "Positive", "Negative", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "repeated readiness gate", kind: "Machine", mutate: set("spec.readinessGates", []any{obj{"conditionType": "example.com/Installed"}, obj{"conditionType": "example.com/Installed", "polarity": "Negative"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.readinessGates[1]: Duplicate value: {"conditionType":"example.com/Installed"}`},
	{name: "negative minReadySeconds", kind: "Machine", mutate: set("spec.minReadySeconds", int64(-1)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.minReadySeconds: Invalid value: -1: spec.minReadySeconds in body should be greater than or equal to 0`},
	{name: "minReadySeconds over a day", kind: "Machine", mutate: set("spec.minReadySeconds", int64(86401)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.minReadySeconds: Invalid value: 86401: spec.minReadySeconds in body should be less than or equal to 86400`},
	{name: "taint with a space in its key", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "dedicated pool", "effect": "NoSchedule", "propagation": "Always"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[0].key: Invalid value: "dedicated pool": key must be a label key such as example.com/dedicated: a name of at most 63 characters (letters, digits, '-', '_', '.'), with an optional DNS subdomain prefix of at most 253 and a '/'`},
	{name: "taint key name over 63", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "example.com/" + long64, "effect": "NoSchedule", "propagation": "Always"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[0].key: Invalid value: "example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": key must be a label key such as example.com/dedicated: a name of at most 63 characters (letters, digits, '-', '_', '.'), with an optional DNS subdomain prefix of at most 253 and a '/'`},
	{name: "krtt's own taint", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "node.cluster.krtt.dev/uninitialized", "effect": "NoSchedule", "propagation": "Always"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[0].key: Invalid value: "node.cluster.krtt.dev/uninitialized": key is one of krtt's own Node taints, which krtt sets and removes itself`},
	{name: "kubelet's taint", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute", "propagation": "Always"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[0].key: Invalid value: "node.kubernetes.io/not-ready": key must not have the prefix node.kubernetes.io/ (the kubelet and the node lifecycle controller own those), except node.kubernetes.io/out-of-service`},
	{name: "cloud provider's taint", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "node.cloudprovider.kubernetes.io/uninitialized", "effect": "NoSchedule", "propagation": "OnInitialization"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[0].key: Invalid value: "node.cloudprovider.kubernetes.io/uninitialized": key must not have the prefix node.cloudprovider.kubernetes.io/ (the cloud controller manager owns those)`},
	{name: "deprecated master taint", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule", "propagation": "Always"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[0].key: Invalid value: "node-role.kubernetes.io/master": node-role.kubernetes.io/master is deprecated since Kubernetes 1.24: use node-role.kubernetes.io/control-plane`},
	{name: "taint with an unknown effect", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "dedicated", "effect": "NoRun", "propagation": "Always"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.taints[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "taint without propagation", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "dedicated", "effect": "NoSchedule"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.taints[0].propagation: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "taint value with a slash", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "dedicated", "value": "a/b", "effect": "NoSchedule", "propagation": "Always"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[0].value: Invalid value: "a/b": value must be a label value: letters, digits, '-', '_' and '.', starting and ending with a letter or digit`},
	{name: "repeated taint", kind: "Machine", mutate: set("spec.taints", []any{obj{"key": "dedicated", "effect": "NoSchedule", "propagation": "Always"}, obj{"key": "dedicated", "value": "gpu", "effect": "NoSchedule", "propagation": "OnInitialization"}}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.taints[1]: Duplicate value: {"effect":"NoSchedule","key":"dedicated"}`},

	// References to core kinds and built-in groups.
	{name: "infrastructureRef to a core Secret", kind: "Machine",
		mutate: set("spec.infrastructureRef", obj{"apiGroup": "", "kind": "Secret", "name": "s"}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: [spec.infrastructureRef.apiGroup: Invalid value: "": spec.infrastructureRef.apiGroup in body should be at least 1 chars long, spec.infrastructureRef: Invalid value: apiGroup must be the API group of a provider's custom resource (a domain such as infrastructure.cluster.x-k8s.io), not a built-in Kubernetes group]`},
	{name: "infrastructureRef to a Deployment", kind: "Machine",
		mutate: set("spec.infrastructureRef", obj{"apiGroup": "apps", "kind": "Deployment", "name": "d"}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: spec.infrastructureRef: Invalid value: apiGroup must be the API group of a provider's custom resource (a domain such as infrastructure.cluster.x-k8s.io), not a built-in Kubernetes group`},
	{name: "configRef to a *.k8s.io group", kind: "Machine",
		mutate: set("spec.bootstrap.configRef", obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: spec.bootstrap.configRef: Invalid value: apiGroup must be the API group of a provider's custom resource (a domain such as infrastructure.cluster.x-k8s.io), not a built-in Kubernetes group`},
	{name: "infrastructureRef apiGroup with a version", kind: "Machine", mutate: set("spec.infrastructureRef.apiGroup", "sim.krtt.dev/v1alpha1"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.infrastructureRef.apiGroup: Invalid value: "sim.krtt.dev/v1alpha1": spec.infrastructureRef.apiGroup in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'`},

	// Bad characters, unicode and sizes.
	{name: "clusterName with capitals and underscore", kind: "Machine", mutate: set("spec.clusterName", "My_Cluster"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.clusterName: Invalid value: "My_Cluster": clusterName must be a Cluster name: lowercase letters, digits, '-' and '.'`},
	{name: "clusterName in unicode", kind: "Machine", mutate: set("spec.clusterName", "clüster"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.clusterName: Invalid value: "clüster": clusterName must be a Cluster name: lowercase letters, digits, '-' and '.'`},
	{name: "clusterName too long for a label", kind: "Machine", mutate: set("spec.clusterName", long64),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.clusterName: Too long: may not be more than 63 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "dataSecretName as a path", kind: "Machine", mutate: set("spec.bootstrap.dataSecretName", "../etc/passwd"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.bootstrap.dataSecretName: Invalid value: "../etc/passwd": dataSecretName must be a Secret name: lowercase letters, digits, '-' and '.'`},
	{name: "configRef name in unicode", kind: "Machine", mutate: set("spec.bootstrap.configRef.name", "bööt"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.bootstrap.configRef.name: Invalid value: "bööt": spec.bootstrap.configRef.name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'`},
	{name: "infrastructureRef kind with a space", kind: "Machine", mutate: set("spec.infrastructureRef.kind", "Sim Machine"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.infrastructureRef.kind: Invalid value: "Sim Machine": spec.infrastructureRef.kind in body should match '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$'`},
	{name: "infrastructureRef name too long", kind: "Machine", mutate: set("spec.infrastructureRef.name", long254),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.infrastructureRef.name: Too long: may not be more than 253 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "providerID with a space", kind: "Machine", mutate: set("spec.providerID", "sim://a b"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.providerID: Invalid value: "sim://a b": providerID must be printable ASCII without spaces, as a Node's spec.providerID is`},
	{name: "providerID in unicode", kind: "Machine", mutate: set("spec.providerID", "sim://mäschine"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.providerID: Invalid value: "sim://mäschine": providerID must be printable ASCII without spaces, as a Node's spec.providerID is`},
	{name: "providerID too long", kind: "Machine", mutate: set("spec.providerID", "sim://"+strings.Repeat("x", 507)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.providerID: Too long: may not be more than 512 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "failureDomain with a newline", kind: "Machine", mutate: set("spec.failureDomain", "zone-a\nzone-b"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.failureDomain: Invalid value: "zone-a\nzone-b": failureDomain must be printable ASCII without spaces`},
	{name: "version without a patch number", kind: "Machine", mutate: set("spec.version", "1.37"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.version: Invalid value: "1.37": version must be a semantic version such as v1.37.0`},
	{name: "version with a space", kind: "Machine", mutate: set("spec.version", "v1.37.0 "),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.version: Invalid value: "v1.37.0 ": version must be a semantic version such as v1.37.0`},
	{name: "failureDomain too long", kind: "Machine", mutate: set("spec.failureDomain", strings.Repeat("z", 257)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [spec.failureDomain: Too long: may not be more than 256 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "name too long", kind: "Machine", mutate: set("metadata.name", long254),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: metadata.name: Invalid value: "{name}": must be no more than 253 characters`},
	{name: "name in unicode", kind: "Machine", mutate: set("metadata.name", "mäschine"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: metadata.name: Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	{name: "name with capitals", kind: "Machine", mutate: set("metadata.name", "Machine-1"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: metadata.name: Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	{name: "annotations over 256KiB", kind: "Machine", mutate: set("metadata.annotations", obj{"huge": strings.Repeat("x", 256*1024)}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [metadata.annotations: Too long: may not be more than 262144 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "hook annotation with a space", kind: "Machine",
		mutate: set("metadata.annotations", obj{clusterv1.PreDrainDeleteHookAnnotationPrefix + "my hook": ""}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: metadata.annotations: Invalid value: "pre-drain.delete.hook.machine.cluster.krtt.dev/my hook": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
	{name: "hook annotation name too long", kind: "Machine",
		mutate: set("metadata.annotations", obj{clusterv1.PreTerminateDeleteHookAnnotationPrefix + long64: ""}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: metadata.annotations: Invalid value: "pre-terminate.delete.hook.machine.cluster.krtt.dev/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": name part must be no more than 63 bytes`},
	{name: "label value with bad characters", kind: "Machine", mutate: set("metadata.labels", obj{"node-role.kubernetes.io/worker": "yes please!"}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: metadata.labels: Invalid value: "yes please!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
	{name: "label value too long", kind: "Machine", mutate: set("metadata.labels", obj{clusterv1.ClusterNameLabel: long64}),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: metadata.labels: Invalid value: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": must be no more than 63 bytes`},

	// Immutable fields, on update.
	{name: "change clusterName", kind: "Machine", op: opUpdate, mutate: set("spec.clusterName", "c2"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.clusterName: Invalid value: "c2": clusterName is immutable`},
	{name: "change infrastructureRef kind", kind: "Machine", op: opUpdate, mutate: set("spec.infrastructureRef.kind", "OtherMachine"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.infrastructureRef: Invalid value: infrastructureRef is immutable`},
	{name: "change providerID", kind: "Machine", op: opUpdate, before: set("spec.providerID", "sim://a"), mutate: set("spec.providerID", "sim://b"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec: Invalid value: providerID cannot be changed or removed once set`},
	{name: "remove providerID", kind: "Machine", op: opUpdate, before: set("spec.providerID", "sim://a"), mutate: del("spec.providerID"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec: Invalid value: providerID cannot be changed or removed once set`},
	{name: "change configRef", kind: "Machine", op: opUpdate, mutate: set("spec.bootstrap.configRef.name", "b2"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: spec.bootstrap: Invalid value: bootstrap.configRef cannot be changed or removed once set`},
	{name: "swap configRef for a dataSecretName", kind: "Machine", op: opUpdate,
		mutate: all(del("spec.bootstrap.configRef"), set("spec.bootstrap.dataSecretName", "s")),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: spec.bootstrap: Invalid value: bootstrap.configRef cannot be changed or removed once set`},

	// Status, written by the operator (or by anyone with status rights).
	{name: "status phase not in the enum", kind: "Machine", op: opStatusUpdate, mutate: set("status.phase", "Exploded"),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [status.phase: Unsupported value: "Exploded": supported values: "Pending", "Provisioning", "Provisioned", "Running", "Unknown", "Deleting", "Failed", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "status state too long", kind: "Machine", op: opStatusUpdate, mutate: set("status.state", strings.Repeat("s", 257)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [status.state: Too long: may not be more than 256 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "status with 33 addresses", kind: "Machine", op: opStatusUpdate, mutate: set("status.addresses", addresses(33)),
		want: `Machine.cluster.krtt.dev "{name}" is invalid: [status.addresses: Too many: 33: must have at most 32 items, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "status condition without reason", kind: "Machine", op: opStatusUpdate,
		mutate: set("status.conditions", []any{obj{"type": "Ready", "status": "Maybe", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": ""}}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: [status.conditions[0].reason: Invalid value: "": conditions[0].reason in body should be at least 1 chars long, status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},

	// Clusters.
	{name: "Cluster name too long for the label", kind: "Cluster", mutate: set("metadata.name", long64),
		want: `Cluster.cluster.krtt.dev "{name}" is invalid: <nil>: Invalid value: a Cluster's name must be at most 63 characters: its Machines carry it in the cluster.krtt.dev/cluster-name label`},
	{name: "Cluster controlPlaneRef to a core kind", kind: "Cluster",
		mutate: set("spec.controlPlaneRef", obj{"apiGroup": "", "kind": "ConfigMap", "name": "cp"}),
		want:   `Cluster.cluster.krtt.dev "{name}" is invalid: [spec.controlPlaneRef.apiGroup: Invalid value: "": spec.controlPlaneRef.apiGroup in body should be at least 1 chars long, spec.controlPlaneRef: Invalid value: apiGroup must be the API group of a provider's custom resource (a domain such as infrastructure.cluster.x-k8s.io), not a built-in Kubernetes group]`},
	{name: "Cluster controlPlaneRef to a built-in group", kind: "Cluster",
		mutate: set("spec.controlPlaneRef", obj{"apiGroup": "apps", "kind": "StatefulSet", "name": "cp"}),
		want:   `Cluster.cluster.krtt.dev "{name}" is invalid: spec.controlPlaneRef: Invalid value: apiGroup must be the API group of a provider's custom resource (a domain such as infrastructure.cluster.x-k8s.io), not a built-in Kubernetes group`},
	{name: "Cluster infrastructureRef to a built-in group", kind: "Cluster",
		mutate: set("spec.infrastructureRef", obj{"apiGroup": "apps", "kind": "Deployment", "name": "infra"}),
		want:   `Cluster.cluster.krtt.dev "{name}" is invalid: spec.infrastructureRef: Invalid value: apiGroup must be the API group of a provider's custom resource (a domain such as infrastructure.cluster.x-k8s.io), not a built-in Kubernetes group`},
	{name: "Cluster infrastructureRef removed", kind: "Cluster", op: opUpdate,
		before: set("spec.infrastructureRef", obj{"apiGroup": "sim.krtt.dev", "kind": "SimCluster", "name": "infra"}), mutate: del("spec.infrastructureRef"),
		want: `Cluster.cluster.krtt.dev "{name}" is invalid: spec: Invalid value: spec.infrastructureRef cannot be removed once set`},
	{name: "Cluster control plane endpoint port out of range", kind: "Cluster",
		mutate: set("spec.controlPlaneEndpoint", obj{"host": "lb.example.com", "port": int64(70000)}),
		want:   `Cluster.cluster.krtt.dev "{name}" is invalid: spec.controlPlaneEndpoint.port: Invalid value: 70000: spec.controlPlaneEndpoint.port in body should be less than or equal to 65535`},
	{name: "Cluster paused as a string", kind: "Cluster", mutate: set("spec.paused", "yes"),
		want: `Cluster.cluster.krtt.dev "{name}" is invalid: [spec.paused: Invalid value: "string": spec.paused in body must be of type boolean: "string", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "Available as an availability gate", kind: "Cluster", mutate: set("spec.availabilityGates", []any{obj{"conditionType": "Available"}}),
		want: `Cluster.cluster.krtt.dev "{name}" is invalid: spec.availabilityGates: Invalid value: availabilityGates cannot name Available: Available is what the gates feed`},
	{name: "availability gate with a space", kind: "Cluster", mutate: set("spec.availabilityGates", []any{obj{"conditionType": "Addons Installed"}}),
		want: `Cluster.cluster.krtt.dev "{name}" is invalid: spec.availabilityGates[0].conditionType: Invalid value: "Addons Installed": conditionType must be a condition type such as ControlPlaneAvailable or example.com/AddonsInstalled`},
	{name: "availability gate with an unknown polarity", kind: "Cluster", mutate: set("spec.availabilityGates", []any{obj{"conditionType": "example.com/AddonsInstalled", "polarity": "Inverted"}}),
		want: `Cluster.cluster.krtt.dev "{name}" is invalid: [spec.availabilityGates[0].polarity: Unsupported value: "Inverted": supported values: "Positive", "Negative", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
	{name: "Cluster unknown field", kind: "Cluster", mutate: set("spec.machines", int64(3)),
		want: `Cluster in version "v1alpha1" cannot be handled as a Cluster: strict decoding error: unknown field "spec.machines"`},
}

func newObject(kind, name string) obj {
	switch kind {
	case "Cluster":
		return baseCluster(name)
	case "MachineDrainRule":
		return baseDrainRule(name)
	}
	return baseMachine(name)
}

func TestBadInputCatalog(t *testing.T) {
	freshNamespace(t)
	if len(catalog) < 30 {
		t.Fatalf("%d cases, want at least 30", len(catalog))
	}
	ctx := context.Background()
	strict := client.FieldValidation("Strict")
	// KRTT_PRINT_REFUSALS=1 go test -v -run TestBadInputCatalog prints each
	// refusal as the API server words it, to write a new case's want.
	printRefusals := os.Getenv("KRTT_PRINT_REFUSALS") == "1"
	for i, tc := range catalog {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: newObject(tc.kind, fmt.Sprintf("cat-%d", i))}
			var err error
			switch tc.op {
			case opCreate:
				tc.mutate(u.Object)
				err = env.Client.Create(ctx, u, strict)
			case opUpdate, opStatusUpdate:
				if tc.before != nil {
					tc.before(u.Object)
				}
				if err := env.Client.Create(ctx, u, strict); err != nil {
					t.Fatalf("create the valid object: %v", err)
				}
				tc.mutate(u.Object)
				if tc.op == opUpdate {
					err = env.Client.Update(ctx, u, strict)
				} else {
					err = env.Client.Status().Update(ctx, u)
				}
			}
			if err == nil {
				t.Fatalf("accepted")
			}
			want := strings.ReplaceAll(tc.want, "{name}", u.GetName())
			if printRefusals {
				fmt.Printf("CASE %q\n%s\n", tc.name, err.Error())
			}
			if refusalKey(err.Error()) != refusalKey(want) {
				t.Fatalf("refusal differs\n got: %s\nwant: %s", err.Error(), want)
			}
		})
	}
}

// causeStart finds where a cause of a bracketed error list begins: a field
// path (or <nil>) and one of the field.ErrorType words.
var causeStart = regexp.MustCompile(`^(<nil>|[A-Za-z][A-Za-z0-9_.\[\]-]*): (Not found|Required value|Duplicate value|Forbidden|Invalid value|Unsupported value|Too long|Too many|Internal error|Type invalid)`)

// refusalKey is a refusal with the causes of its bracketed list in sorted
// order: the API server lists the same causes in an order that varies from
// run to run, so two refusals compare exactly but order-independently.
// A cause's own text may hold ", " (supported values: "True", "False"), so
// the list is split only where the next cause starts.
func refusalKey(msg string) string {
	head, list, ok := strings.Cut(msg, ": [")
	if !ok || !strings.HasSuffix(list, "]") {
		return msg
	}
	list = strings.TrimSuffix(list, "]")
	var causes []string
	for {
		cut := -1
		for i := strings.Index(list, ", "); i >= 0; {
			if causeStart.MatchString(list[i+2:]) {
				cut = i
				break
			}
			next := strings.Index(list[i+2:], ", ")
			if next < 0 {
				break
			}
			i += 2 + next
		}
		if cut < 0 {
			causes = append(causes, list)
			break
		}
		causes = append(causes, list[:cut])
		list = list[cut+2:]
	}
	sort.Strings(causes)
	return head + ": [" + strings.Join(causes, " | ") + "]"
}

func TestRefusalKey(t *testing.T) {
	a := `M "m" is invalid: [status.conditions[0].reason: Invalid value: "": too short, status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", <nil>: Invalid value: null: some rules not checked]`
	b := `M "m" is invalid: [<nil>: Invalid value: null: some rules not checked, status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", status.conditions[0].reason: Invalid value: "": too short]`
	if refusalKey(a) != refusalKey(b) {
		t.Errorf("the same causes in another order differ:\n%s\n%s", refusalKey(a), refusalKey(b))
	}
	if want := `M "m" is invalid: [<nil>: Invalid value: null: some rules not checked | status.conditions[0].reason: Invalid value: "": too short | status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False"]`; refusalKey(a) != want {
		t.Errorf("refusalKey(a) = %s\nwant %s", refusalKey(a), want)
	}
	for _, other := range []string{
		`M "m" is invalid: [status.conditions[0].reason: Invalid value: "": too short, <nil>: Invalid value: null: some rules not checked]`,
		`M "m" is invalid: [status.conditions[0].reason: Invalid value: "": too short, status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", <nil>: Invalid value: null: some rules not checked]`,
		`N "m" is invalid: [status.conditions[0].reason: Invalid value: "": too short, status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", <nil>: Invalid value: null: some rules not checked]`,
	} {
		if refusalKey(other) == refusalKey(a) {
			t.Errorf("a different refusal compares equal:\n%s", other)
		}
	}
	if plain := `Machine "m" is invalid: spec.x: Invalid value: 1`; refusalKey(plain) != plain {
		t.Errorf("a refusal without a list changed: %s", refusalKey(plain))
	}
}

// The limits above are not off by one, and what looks odd but is harmless
// stays allowed.
func TestHostileButValid(t *testing.T) {
	freshNamespace(t)
	ctx := context.Background()
	strict := client.FieldValidation("Strict")
	for _, tc := range []struct {
		name   string
		kind   string
		mutate func(obj)
	}{
		{"timeouts at 30 days", "Machine", all(
			set("spec.deletion.nodeDrainTimeoutSeconds", int64(2592000)),
			set("spec.deletion.nodeVolumeDetachTimeoutSeconds", int64(2592000)),
			set("spec.deletion.nodeDeletionTimeoutSeconds", int64(2592000)),
			set("spec.health.healthTimeoutSeconds", int64(2592000)),
			set("spec.health.creationTimeoutSeconds", int64(2592000)))},
		{"health timeouts of 0 to never fail", "Machine", all(
			set("spec.health.healthTimeoutSeconds", int64(0)),
			set("spec.health.creationTimeoutSeconds", int64(0)))},
		{"no health node conditions so only Ready counts", "Machine", set("spec.health.nodeConditions", []any{})},
		{"qualified health node condition", "Machine", set("spec.health.nodeConditions", []any{"example.com/GPUFailed", "KernelDeadlock"})},
		{"clusterName of 63 characters", "Machine", set("spec.clusterName", long63)},
		{"dotted clusterName", "Machine", set("spec.clusterName", "prod.eu-1")},
		{"unicode annotation value", "Machine", set("metadata.annotations", obj{clusterv1.PreDrainDeleteHookAnnotationPrefix + "backup": "säkerhetskopia 💾"})},
		{"providerID with punctuation", "Machine", set("spec.providerID", "aws:///eu-west-1a/i-0123456789abcdef0")},
		{"x-k8s.io provider group", "Machine", set("spec.infrastructureRef.apiGroup", "infrastructure.cluster.x-k8s.io")},
		{"Cluster name of 63 characters", "Cluster", set("metadata.name", long63)},
		{"pre-release version with build metadata", "Machine", set("spec.version", "v1.37.0-rc.1+build.5")},
		{"version without a v", "Machine", set("spec.version", "1.37.0")},
		{"onDrainTimeout Force", "Machine", set("spec.deletion.onDrainTimeout", "Force")},
		{"maxEvictRetries 0 deletes without evicting", "Machine", set("spec.deletion.maxEvictRetries", int64(0))},
		{"maxEvictRetries 25", "Machine", set("spec.deletion.maxEvictRetries", int64(25))},
		{"drain rule with a negative order", "MachineDrainRule", set("spec.drain.order", int64(-10))},
		{"drain rule waiting for completion with selectors", "MachineDrainRule", all(set("spec.drain.behavior", "WaitCompleted"),
			set("spec.pods", []any{obj{"selector": obj{"matchLabels": obj{"app": "batch"}}, "namespaceSelector": obj{"matchLabels": obj{"team": "a"}}}}),
			set("spec.machines", []any{obj{"selector": obj{"matchLabels": obj{"pool": "gpu"}}}}))},
		{"drain rule with every selector operator and qualified keys", "MachineDrainRule", all(set("spec.drain.behavior", "Skip"),
			set("spec.pods", []any{obj{"selector": obj{"matchLabels": obj{"example.com/tier": "", "app": "db_1.x"}, "matchExpressions": []any{
				obj{"key": "app", "operator": "In", "values": []any{"db"}}, obj{"key": "k8s.io/role", "operator": "NotIn", "values": []any{"a", "b"}},
				obj{"key": "keep", "operator": "Exists"}, obj{"key": "drop", "operator": "DoesNotExist", "values": []any{}}}}}}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: newObject(tc.kind, "ok-"+strings.ReplaceAll(strings.ToLower(tc.name), " ", "-"))}
			tc.mutate(u.Object)
			if err := env.Client.Create(ctx, u, strict); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}

	// configRef may be added to a Machine that had only a data secret; it is
	// fixed only once set.
	u := &unstructured.Unstructured{Object: baseMachine("ok-add-configref")}
	del("spec.bootstrap.configRef")(u.Object)
	set("spec.bootstrap.dataSecretName", "s")(u.Object)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(env.Client.Create(ctx, u, strict))
	set("spec.bootstrap.configRef", obj{"apiGroup": "sim.krtt.dev", "kind": "SimBootstrapConfig", "name": "b1"})(u.Object)
	must(env.Client.Update(ctx, u, strict))
}
