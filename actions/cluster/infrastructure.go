package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// InfrastructureReadyCondition mirrors the Ready condition of the object
// spec.infrastructureRef names (Cluster API setInfrastructureReadyCondition).
const InfrastructureReadyCondition = "InfrastructureReady"

func registerInfrastructure(reg *engine.Registry[*Scope]) {
	reg.Enum("infrastructure", infrastructure)
	reg.Bool("infrastructureProvisioned", infrastructureProvisioned)
	reg.Enum("controlPlaneEndpoint", controlPlaneEndpoint)
	reg.Bool("referencesAdopted", referencesAdopted)
	reg.Action("DescribeInfrastructure", "Say what the Cluster waits for before it is provisioned: the infrastructure object (missing, unread, not provisioned yet) or a control plane endpoint (no change).", describeInfrastructure, engine.Pure())
	reg.Action("CopyControlPlaneEndpoint", "Copy spec.controlPlaneEndpoint from the provisioned infrastructure object, else from the initialized control plane object, into the Cluster's spec.", copyControlPlaneEndpoint)
	reg.Action("AdoptReferences", "Give the infrastructure and control plane objects the Cluster names an owner reference (not a controller reference) to the Cluster and the cluster.krtt.dev/cluster-name label.", adoptReferences)
	reg.Action("DeleteInfrastructure", "Delete the object spec.infrastructureRef names unless it is being deleted; wait until it is gone (fail when it could not be read).", deleteInfrastructure, engine.MayWait())
	reg.Mirror("infrastructure", "InfrastructureReady, with spec.infrastructureRef, as Cluster API's setInfrastructureReadyCondition: the infrastructure object's Ready condition (an empty reason read as Ready when True, NoReasonReported otherwise), else True (Ready) or False (NotReady, \"<Kind> status.initialization.provisioned is false\") by the Cluster's status.initialization.infrastructureProvisioned; False (ObjectDoesNotExist, \"<Kind> does not exist\") while it does not exist, (ObjectDeleted, \"<Kind> has been deleted while the cluster still exists\", or \"has been deleted\" in the teardown) once it is gone after it was provisioned; Unknown (InternalError) while it cannot be read. status.initialization.infrastructureProvisioned turns true once it is provisioned (at once without one) and stays; status.failureDomains is the provisioned object's status.failureDomains (a list, or a v1beta1 map), sorted by name.", mirrorInfrastructure)
}

func infrastructure(s *Scope) string {
	switch {
	case s.Cluster == nil || s.Cluster.Spec.InfrastructureRef == nil:
		return "NotNamed"
	case s.InfrastructureUnread:
		return "Unread"
	case s.Infrastructure == nil:
		return "Missing"
	case s.Infrastructure.GetDeletionTimestamp() != nil:
		return "Deleting"
	}
	return "Found"
}

// infrastructureProvisioned: the Cluster's infrastructure was provisioned
// once (Cluster API keeps status.initialization.infrastructureProvisioned
// true afterwards), or its object says so now; a Cluster without one has
// nothing to wait for.
func infrastructureProvisioned(s *Scope) bool {
	if s.Cluster == nil || s.Cluster.Spec.InfrastructureRef == nil {
		return true
	}
	return ptr.Deref(s.Cluster.Status.Initialization.InfrastructureProvisioned, false) || contract.Provisioned(s.Infrastructure)
}

// endpointOf reads the contract's spec.controlPlaneEndpoint of u. A host or
// port the Cluster's schema would refuse reads as unset: copied, it would
// make every write of the Cluster fail.
func endpointOf(u *unstructured.Unstructured) clusterv1.APIEndpoint {
	if u == nil {
		return clusterv1.APIEndpoint{}
	}
	host, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneEndpoint", "host")
	port, _, _ := unstructured.NestedInt64(u.Object, "spec", "controlPlaneEndpoint", "port")
	if port < 1 || port > 65535 {
		port = 0
	}
	if len(host) > 512 {
		host = ""
	}
	return clusterv1.APIEndpoint{Host: host, Port: int32(port)}
}

// controlPlaneInitializedNow: the control plane object reports by the
// contract that it came up.
func controlPlaneInitializedNow(s *Scope) bool {
	return contract.ControlPlaneInitialized(s.ControlPlane)
}

// controlPlaneEndpoint is where the Cluster's endpoint is, or would come
// from (Cluster API reconcileInfrastructure, then reconcileControlPlane:
// each copies it only once its object is provisioned or initialized).
func controlPlaneEndpoint(s *Scope) string {
	switch {
	case s.Cluster == nil || s.Cluster.Spec.ControlPlaneEndpoint.IsValid():
		return "Set"
	case infrastructureProvisioned(s) && endpointOf(s.Infrastructure).IsValid():
		return "FromInfrastructure"
	case controlPlaneInitializedNow(s) && endpointOf(s.ControlPlane).IsValid():
		return "FromControlPlane"
	}
	return "Unset"
}

func copyControlPlaneEndpoint(_ context.Context, s *Scope) engine.Outcome {
	from, ref := s.Infrastructure, s.Cluster.Spec.InfrastructureRef
	if controlPlaneEndpoint(s) == "FromControlPlane" {
		from, ref = s.ControlPlane, s.Cluster.Spec.ControlPlaneRef
	}
	ep := endpointOf(from)
	s.Cluster.Spec.ControlPlaneEndpoint = ep
	return engine.OKf("control plane endpoint %s:%d from %s %s", ep.Host, ep.Port, ref.Kind, ref.Name)
}

func describeInfrastructure(_ context.Context, s *Scope) engine.Outcome {
	ref := s.Cluster.Spec.InfrastructureRef
	switch infrastructure(s) {
	case "Missing":
		return engine.OKf("%s; its creation wakes the Cluster", s.InfrastructureMissing)
	case "Unread":
		return engine.OKf("%s %s could not be read: %v", ref.Kind, ref.Name, s.InfrastructureErr)
	}
	if !infrastructureProvisioned(s) {
		return engine.OKf("waiting for %s %s to report status.initialization.provisioned", ref.Kind, ref.Name)
	}
	return engine.OKf("%s %s is provisioned; waiting for a control plane endpoint: neither spec.controlPlaneEndpoint nor the infrastructure or initialized control plane object gives one", ref.Kind, ref.Name)
}

// ownerReference is the owner reference the Cluster gives the objects it
// names: not a controller reference, so a provider's own controller may
// still take that role (Cluster API ensureOwnerRefAndLabel without a
// topology).
func ownerReference(c *clusterv1.Cluster) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: c.Name, UID: c.UID}
}

// adoptable are the objects the Cluster names that exist and are not being
// deleted.
func adoptable(s *Scope) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range []*unstructured.Unstructured{s.Infrastructure, s.ControlPlane} {
		if u != nil && u.GetDeletionTimestamp() == nil {
			out = append(out, u)
		}
	}
	return out
}

func adopted(u *unstructured.Unstructured, c *clusterv1.Cluster) bool {
	if u.GetLabels()[clusterv1.ClusterNameLabel] != c.Name {
		return false
	}
	return slices.ContainsFunc(u.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == c.UID })
}

func referencesAdopted(s *Scope) bool {
	if s.Cluster == nil {
		return true
	}
	for _, u := range adoptable(s) {
		if !adopted(u, s.Cluster) {
			return false
		}
	}
	return true
}

// adoptReferences patches only the owner references and the label, tested
// against what was read, so a provider writing the object meanwhile does
// not make it conflict.
func adoptReferences(ctx context.Context, s *Scope) engine.Outcome {
	var done []string
	for _, u := range adoptable(s) {
		if adopted(u, s.Cluster) {
			continue
		}
		refs := slices.DeleteFunc(slices.Clone(u.GetOwnerReferences()), func(r metav1.OwnerReference) bool { return r.UID == s.Cluster.UID })
		refs = append(refs, ownerReference(s.Cluster))
		if err := reconciler.PatchOwnersAndLabels(ctx, s.Client, u, refs, map[string]string{clusterv1.ClusterNameLabel: s.Cluster.Name}); err != nil {
			return engine.Failf("adopt %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		done = append(done, u.GetKind()+" "+u.GetName())
	}
	return engine.OKf("owner reference and cluster-name label on %s", names(done))
}

// deleteInfrastructure deletes the object spec.infrastructureRef names (see
// deleteReferenced).
func deleteInfrastructure(ctx context.Context, s *Scope) engine.Outcome {
	ref := s.Cluster.Spec.InfrastructureRef
	return s.deleteReferenced(ctx, ref.Kind, s.Infrastructure, s.InfrastructureUnread, s.InfrastructureErr,
		fmt.Sprintf("everything else of the Cluster is gone, but %s %s", ref.Kind, ref.Name))
}

// mirrorInfrastructure is Cluster API's setInfrastructureReadyCondition,
// and the status.initialization flag and status.failureDomains of
// reconcileInfrastructure (copied once the object is provisioned, unless it
// is being deleted).
func mirrorInfrastructure(s *Scope) {
	c := s.Cluster
	ref := c.Spec.InfrastructureRef
	if ref == nil {
		if c.DeletionTimestamp.IsZero() {
			c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		}
		return
	}
	wasProvisioned := ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false)
	if s.Infrastructure != nil && contract.Provisioned(s.Infrastructure) && s.Infrastructure.GetDeletionTimestamp() == nil {
		if !wasProvisioned {
			// Cluster API reconcileInfrastructure tells this once; a
			// Cluster without an infrastructure object does not.
			s.Told.Tell(reconciler.Tell{Reason: "InfrastructureReady", Note: fmt.Sprintf("Cluster %s InfrastructureProvisioned is now True", c.Name)})
		}
		c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	}
	if s.Infrastructure != nil && s.Infrastructure.GetDeletionTimestamp() == nil && ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) {
		c.Status.FailureDomains = failureDomainsOf(s.Infrastructure)
	}
	set := func(status metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: InfrastructureReadyCondition,
			Status: status, Reason: reason, Message: message, ObservedGeneration: c.Generation})
	}
	switch infrastructure(s) {
	case "Unread":
		set(metav1.ConditionUnknown, "InternalError", fmt.Sprintf("%s %s could not be read: %v", ref.Kind, ref.Name, s.InfrastructureErr))
	case "Missing":
		switch {
		case wasProvisioned && c.DeletionTimestamp.IsZero():
			set(metav1.ConditionFalse, clusterv1.ObjectDeletedReason, fmt.Sprintf("%s has been deleted while the cluster still exists", ref.Kind))
		case wasProvisioned:
			set(metav1.ConditionFalse, clusterv1.ObjectDeletedReason, fmt.Sprintf("%s has been deleted", ref.Kind))
		default:
			set(metav1.ConditionFalse, clusterv1.ObjectDoesNotExistReason, fmt.Sprintf("%s does not exist", ref.Kind))
		}
	default:
		provisioned := ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false)
		if ready := contract.ReadyCondition(s.Infrastructure); ready != nil {
			set(ready.Status, contract.MirroredReason(ready, clusterv1.ProviderReadyReason), ready.Message)
			return
		}
		if provisioned {
			set(metav1.ConditionTrue, clusterv1.ProviderReadyReason, "")
			return
		}
		set(metav1.ConditionFalse, clusterv1.ProviderNotReadyReason, fmt.Sprintf("%s status.initialization.provisioned is false", ref.Kind))
	}
}

// failureDomainsOf reads the contract's status.failureDomains: a list of
// {name, controlPlane, attributes} (v1beta2) or a map from name to
// {controlPlane, attributes} (v1beta1); sorted by name, controlPlane false
// when not given, entries without a name left out.
func failureDomainsOf(u *unstructured.Unstructured) []clusterv1.FailureDomain {
	entry := func(name string, m map[string]any) clusterv1.FailureDomain {
		cp, _, _ := unstructured.NestedBool(m, "controlPlane")
		attrs, _, _ := unstructured.NestedStringMap(m, "attributes")
		return clusterv1.FailureDomain{Name: name, ControlPlane: ptr.To(cp), Attributes: attrs}
	}
	var out []clusterv1.FailureDomain
	if byName, found, err := unstructured.NestedMap(u.Object, "status", "failureDomains"); found && err == nil {
		for name, v := range byName {
			if m, ok := v.(map[string]any); ok && name != "" {
				out = append(out, entry(name, m))
			}
		}
	} else {
		for _, m := range contract.Entries(u, "status", "failureDomains") {
			if name, _, _ := unstructured.NestedString(m, "name"); name != "" {
				out = append(out, entry(name, m))
			}
		}
	}
	slices.SortFunc(out, func(a, b clusterv1.FailureDomain) int { return strings.Compare(a.Name, b.Name) })
	return out
}
