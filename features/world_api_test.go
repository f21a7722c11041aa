package features

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The steps in this file set up real API failures, never fake traces.

// brokenGroup serves BrokenMachine in two versions: objects are stored as v1,
// v2 is preferred, and the conversion webhook between them is unreachable, so
// reading a BrokenMachine the way a controller does (preferred version) fails
// with an API error, like an infrastructure provider whose webhook is down.
const brokenGroup = "broken.specs.krtt.dev"

var brokenV1 = schema.GroupVersionKind{Group: brokenGroup, Version: "v1", Kind: "BrokenMachine"}

func brokenCRD() *unstructured.Unstructured {
	schemaProps := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	version := func(name string, storage bool) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": storage,
			"schema": map[string]any{"openAPIV3Schema": schemaProps}}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "brokenmachines." + brokenGroup},
		"spec": map[string]any{
			"group":    brokenGroup,
			"scope":    "Namespaced",
			"names":    map[string]any{"kind": "BrokenMachine", "listKind": "BrokenMachineList", "plural": "brokenmachines", "singular": "brokenmachine"},
			"versions": []any{version("v1", true), version("v2", false)},
			"conversion": map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"conversionReviewVersions": []any{"v1"},
					"clientConfig":             map[string]any{"url": "https://127.0.0.1:1/convert"},
				},
			},
		},
	}}
	return u
}

func (w *world) aMachineWithFailingInfrastructureAPI(ctx context.Context, name string) error {
	return w.aMachineOnBrokenKind(ctx, name, brokenCRD())
}

// aMachineOnBrokenKind creates crd (a brokenCRD, maybe of another group)
// if it is missing, a BrokenMachine and a Machine on it.
func (w *world) aMachineOnBrokenKind(ctx context.Context, name string, crd *unstructured.Unstructured) error {
	if err := w.h.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD: %w", err)
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	// The CRD takes a moment to be served.
	err := w.eventually(ctx, "BrokenMachine served", func(ctx context.Context) error {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: brokenV1.Version, Kind: brokenV1.Kind})
		obj.SetNamespace(w.ns)
		obj.SetName(name)
		err := w.h.Client.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if _, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name, func(m *clusterv1.Machine) {
		m.Spec.InfrastructureRef = clusterv1.ObjectReference{APIGroup: group, Kind: brokenV1.Kind, Name: name}
	}); err != nil {
		return err
	}
	return nil
}

const undeletableLabel = "specs.krtt.dev/undeletable"

// policyForbidsNodeDeletion installs a ValidatingAdmissionPolicy that denies
// deleting Nodes with a label, and labels the Machine's Node: every attempt of
// the operator to delete it fails, as with a protective admission policy.
func (w *world) policyForbidsNodeDeletion(ctx context.Context, machine string) error {
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "specs-undeletable-nodes"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{undeletableLabel: "true"}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"nodes"}},
				}}},
			},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "this Node is protected from deletion"}},
		},
	}
	if err := w.h.Client.Create(ctx, policy); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "specs-undeletable-nodes"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	if err := w.h.Client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := w.updateNode(ctx, machine, func(n *corev1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[undeletableLabel] = "true"
	}, false); err != nil {
		return err
	}
	// The policy takes effect once the API server has loaded it: a dry-run
	// delete tells.
	return w.eventually(ctx, "Node deletion denied", func(ctx context.Context) error {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(machine)}}
		err := w.h.Client.Delete(ctx, n, client.DryRunAll)
		if err == nil {
			return fmt.Errorf("dry-run delete of Node %s was allowed", n.Name)
		}
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			return nil
		}
		return err
	})
}
