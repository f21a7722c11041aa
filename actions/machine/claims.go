package machine

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// A Machine becomes the controller of its bootstrap and infrastructure
// objects and deletes them with itself. Pointed at an object that belongs to
// something else — a MachineSet's template, the Cluster's control plane, an
// object another owner controls — that would destroy what others rely on, so
// such an object is never adopted nor deleted; its claim says whose it is.

// observeClaims fills BootstrapClaim and InfrastructureClaim. MachineSets are
// listed only when an object is neither plainly this Machine's nor already
// refused, so a Running Machine pays nothing.
func (o *Observer) observeClaims(ctx context.Context, s *Scope) {
	var sets []clusterv1.MachineSet
	listed := false
	claimFor := func(u *unstructured.Unstructured) string {
		if u == nil {
			return ""
		}
		if !listed && needsSets(s, u) {
			listed = true
			list := &clusterv1.MachineSetList{}
			if err := o.Client.List(ctx, list, client.InNamespace(s.Machine.Namespace)); err != nil {
				s.Keep(fmt.Errorf("list MachineSets: %w", err))
			}
			sets = list.Items
		}
		return claimOf(s, u, sets)
	}
	s.BootstrapClaim = claimFor(s.Bootstrap)
	s.InfrastructureClaim = claimFor(s.Infrastructure)
}

// needsSets: whether a MachineSet could be what claims u. An object this
// Machine controls that is no template kind was adopted as its own and is
// not looked up again.
func needsSets(s *Scope, u *unstructured.Unstructured) bool {
	c := metav1.GetControllerOf(u)
	return c == nil || c.UID != s.Machine.UID || isTemplateKind(u.GetKind())
}

func isTemplateKind(kind string) bool {
	return strings.HasSuffix(kind, contract.TemplateSuffix) && kind != contract.TemplateSuffix
}

// claimOf says whom u belongs to if not to this Machine: empty when the
// Machine controls it, or when it is free (no owner, or only owners that
// hand it over: the MachineSet or control plane that created it for this
// Machine, and the Machine's Cluster). Templates and the control plane come
// first: even an earlier version's controller reference of this Machine
// does not make them its own.
func claimOf(s *Scope, u *unstructured.Unstructured, sets []clusterv1.MachineSet) string {
	if s.Machine == nil || u == nil {
		return ""
	}
	obj := u.GetKind() + "/" + u.GetName()
	gk := u.GroupVersionKind().GroupKind()
	names := func(ref *clusterv1.ObjectReference) bool {
		return ref != nil && ref.APIGroup == gk.Group && ref.Kind == gk.Kind && ref.Name == u.GetName()
	}
	if s.Cluster != nil && names(s.Cluster.Spec.ControlPlaneRef) {
		return fmt.Sprintf("%s is the control plane of Cluster/%s", obj, s.Cluster.Name)
	}
	for i := range sets {
		spec := &sets[i].Spec.Template.Spec
		if names(&spec.InfrastructureRef) {
			return fmt.Sprintf("%s is the infrastructure template of MachineSet/%s", obj, sets[i].Name)
		}
		if names(spec.Bootstrap.ConfigRef) {
			return fmt.Sprintf("%s is the bootstrap template of MachineSet/%s", obj, sets[i].Name)
		}
	}
	if isTemplateKind(u.GetKind()) {
		return fmt.Sprintf("%s is a template (its kind ends in Template): a MachineSet clones it for each of its Machines, no Machine uses it", obj)
	}
	if c := metav1.GetControllerOf(u); c != nil && c.UID == s.Machine.UID {
		return ""
	}
	for _, ref := range u.GetOwnerReferences() {
		if handsOver(s, ref) {
			continue
		}
		how := "owned by"
		if ref.Controller != nil && *ref.Controller {
			how = "controlled by"
		}
		return fmt.Sprintf("%s is %s %s/%s", obj, how, ref.Kind, ref.Name)
	}
	return ""
}

// handsOver: an owner reference the Machine may keep or replace: its own,
// its Cluster's, or that of whoever created the object for this Machine
// before the Machine existed (its own MachineSet, or the Cluster's control
// plane for a control-plane Machine), as in Cluster API.
func handsOver(s *Scope, ref metav1.OwnerReference) bool {
	if ref.UID == s.Machine.UID {
		return true
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	controller := ref.Controller != nil && *ref.Controller
	if gv.Group == clusterv1.GroupVersion.Group && ref.Kind == "Cluster" && ref.Name == s.Machine.Spec.ClusterName && !controller {
		return true
	}
	return createdFor(s, ref)
}

// createdFor: the owner that created a provider object for this Machine
// before the Machine existed; the Machine replaces it as controller.
func createdFor(s *Scope, ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	if gv.Group == clusterv1.GroupVersion.Group && ref.Kind == "MachineSet" {
		// Only the Machine's own MachineSet: another set's clone belongs to
		// another Machine.
		set := metav1.GetControllerOf(s.Machine)
		return set != nil && set.Kind == "MachineSet" && set.UID == ref.UID
	}
	if _, cp := s.Machine.Labels[clusterv1.ControlPlaneLabel]; !cp || s.Cluster == nil || s.Cluster.Spec.ControlPlaneRef == nil {
		return false
	}
	cpRef := s.Cluster.Spec.ControlPlaneRef
	return gv.Group == cpRef.APIGroup && ref.Kind == cpRef.Kind && ref.Name == cpRef.Name
}
