// Package contract reads and writes provider objects by the Cluster API
// provider contract only, as unstructured, so any provider that follows it
// works without krtt knowing its Go types. The Machine and MachineSet
// controllers share it.
package contract

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// GroupKindFor turns a contract reference into a GroupKind. References name
// the group only; the version is found through the REST mapper.
func GroupKindFor(ref clusterv1.ObjectReference) schema.GroupKind {
	return schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind}
}

// IsNoMatch reports whether err says the API server does not serve a kind.
func IsNoMatch(err error) bool {
	var noKind *meta.NoKindMatchError
	var noRes *meta.NoResourceMatchError
	return errors.As(err, &noKind) || errors.As(err, &noRes) || meta.IsNoMatchError(err)
}

// Get reads the object ref names in namespace as unstructured; the version
// comes from the REST mapper. It returns nil and no error when the object
// does not exist. Errors say what to check: what ("bootstrap",
// "infrastructure template", ...) names the object's role.
func Get(ctx context.Context, c client.Client, ref clusterv1.ObjectReference, namespace, what string) (*unstructured.Unstructured, error) {
	mapping, err := c.RESTMapper().RESTMapping(GroupKindFor(ref))
	if err != nil {
		// A kind that is not served (yet, or for a moment while its CRD is
		// replaced) is an API error, never "the object is gone": the
		// latter would fail a provisioned Machine for good.
		if IsNoMatch(err) {
			return nil, fmt.Errorf("the API server does not serve the %s kind %s.%s; check that the provider's CRDs are installed: %w", what, ref.Kind, ref.APIGroup, err)
		}
		return nil, fmt.Errorf("resolve %s kind %s.%s: %w", what, ref.Kind, ref.APIGroup, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	err = c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, u)
	switch {
	case err == nil:
		return u, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded):
		// The reconcile's context ended while the cache waited for the
		// kind: the provider's API is slow or failing, not this object. (A
		// kind whose informer cannot sync at all fails at once, with a
		// reconciler.KindNotReadableError saying why.)
		return nil, fmt.Errorf("get %s %s %s: the %s API did not answer in time; check that the provider serves it (kubectl get %s): %w",
			what, ref.Kind, ref.Name, mapping.GroupVersionKind.GroupVersion(), mapping.Resource.Resource+"."+ref.APIGroup, err)
	}
	return nil, fmt.Errorf("get %s %s %s: %w", what, ref.Kind, ref.Name, err)
}

// Entries are the objects of the list at path in u, as providers report
// lists of entries (addresses, versions); an entry that is not an object is
// left out, and a path that is missing or not a list gives none.
func Entries(u *unstructured.Unstructured, path ...string) []map[string]any {
	if u == nil {
		return nil
	}
	raw, found, err := unstructured.NestedSlice(u.Object, path...)
	if !found || err != nil {
		return nil
	}
	out := make([]map[string]any, 0, len(raw))
	for _, item := range raw {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Provisioned reports whether an infrastructure object (a machine's or a
// cluster's) says it is provisioned: status.initialization.provisioned
// (v1beta2) or status.ready (v1beta1).
func Provisioned(u *unstructured.Unstructured) bool {
	return versionedFlag(u, "provisioned", "ready")
}

// ControlPlaneInitialized reports whether a control plane object says its
// control plane came up: status.initialization.controlPlaneInitialized
// (v1beta2) or status.initialized (v1beta1), as Cluster API's
// ControlPlaneContract.Initialized reads it.
func ControlPlaneInitialized(u *unstructured.Unstructured) bool {
	return versionedFlag(u, "controlPlaneInitialized", "initialized")
}

// versionedFlag reads a contract flag where a v1beta2 provider puts it,
// status.initialization.<v1beta2>, else at a v1beta1 provider's
// status.<v1beta1>; a value at the first place wins even when false.
func versionedFlag(u *unstructured.Unstructured, v1beta2, v1beta1 string) bool {
	if u == nil {
		return false
	}
	if v, found, err := unstructured.NestedBool(u.Object, "status", "initialization", v1beta2); found && err == nil {
		return v
	}
	v, _, _ := unstructured.NestedBool(u.Object, "status", v1beta1)
	return v
}

// Conditions reads a provider object's status.conditions; an entry without
// a type or with a status other than True, False or Unknown is left out, so
// it is never copied into a condition the API server would refuse.
func Conditions(u *unstructured.Unstructured) []metav1.Condition {
	var out []metav1.Condition
	for _, entry := range Entries(u, "status", "conditions") {
		t, _, _ := unstructured.NestedString(entry, "type")
		st, _, _ := unstructured.NestedString(entry, "status")
		switch metav1.ConditionStatus(st) {
		case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
		default:
			continue
		}
		if t == "" {
			continue
		}
		reason, _, _ := unstructured.NestedString(entry, "reason")
		message, _, _ := unstructured.NestedString(entry, "message")
		out = append(out, metav1.Condition{Type: t, Status: metav1.ConditionStatus(st), Reason: reason, Message: message})
	}
	return out
}

// MirroredReason is the reason a condition mirrored from a provider
// object's condition c carries, as Cluster API's mirror gives it: c's own,
// or for a c without one (a v1beta1 provider) whenTrue when c is True and
// NoReasonReported otherwise.
func MirroredReason(c *metav1.Condition, whenTrue string) string {
	switch {
	case c.Reason != "":
		return c.Reason
	case c.Status == metav1.ConditionTrue:
		return whenTrue
	}
	return clusterv1.NoReasonReportedReason
}

// ReadyCondition is a provider object's Ready condition, nil when it
// reports none (or none with a valid status).
func ReadyCondition(u *unstructured.Unstructured) *metav1.Condition {
	return meta.FindStatusCondition(Conditions(u), "Ready")
}
