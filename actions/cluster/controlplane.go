package cluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// ControlPlaneAvailableCondition mirrors the Available condition of the
// object spec.controlPlaneRef names (Cluster API
// setControlPlaneAvailableCondition); row K13 tells a missing one with a
// Warning Event.
const ControlPlaneAvailableCondition = "ControlPlaneAvailable"

// ReferencedObjectIndex indexes Clusters by the objects their
// controlPlaneRef and infrastructureRef name, so an object that appears or
// changes wakes the Clusters that name it.
const ReferencedObjectIndex = "cluster.referencedObjects"

func referencedKey(group, kind, name string) string { return group + "/" + kind + "/" + name }

// ReferencedObjectIndexer extracts the ReferencedObjectIndex keys.
func ReferencedObjectIndexer(obj client.Object) []string {
	c, ok := obj.(*clusterv1.Cluster)
	if !ok {
		return nil
	}
	var out []string
	for _, ref := range []*clusterv1.ObjectReference{c.Spec.ControlPlaneRef, c.Spec.InfrastructureRef} {
		if ref != nil {
			out = append(out, referencedKey(ref.APIGroup, ref.Kind, ref.Name))
		}
	}
	return out
}

// referenced is an object a Cluster's reference names, as read: obj is nil
// when it does not exist (missing says why: not found, or its kind not
// served) or an API error (err) left it unread.
type referenced struct {
	obj       *unstructured.Unstructured
	missing   string
	notServed bool
	unread    bool
	err       error
}

// readReferenced reads the object ref names and makes sure its kind is
// watched: a Cluster waiting for an object that does not exist yet is
// woken by its creation, and by its status changing, not by a timer.
func (o *Observer) readReferenced(ctx context.Context, s *Scope, ref clusterv1.ObjectReference, what string) referenced {
	mapping, err := o.Client.RESTMapper().RESTMapping(contract.GroupKindFor(ref))
	if err == nil && o.Watcher != nil {
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(mapping.GroupVersionKind)
		if werr := o.Watcher.Watch(ctx, probe); werr != nil && s.Err == nil {
			s.Err = werr
		}
	}
	u, err := contract.Get(ctx, o.Client, ref, s.Key.Namespace, what)
	switch {
	case contract.IsNoMatch(err):
		return referenced{missing: fmt.Sprintf("%s/%s does not exist: %s", ref.Kind, ref.Name, notServed(ref)), notServed: true}
	case err != nil:
		if s.Err == nil {
			s.Err = err
		}
		return referenced{unread: true, err: err}
	case u == nil:
		return referenced{missing: fmt.Sprintf("%s/%s does not exist", ref.Kind, ref.Name)}
	}
	return referenced{obj: u}
}

func (o *Observer) readControlPlane(ctx context.Context, s *Scope, ref clusterv1.ObjectReference) {
	r := o.readReferenced(ctx, s, ref, "control plane")
	s.ControlPlane, s.ControlPlaneMissing, s.ControlPlaneNotServed, s.ControlPlaneUnread, s.ControlPlaneErr = r.obj, r.missing, r.notServed, r.unread, r.err
}

func controlPlane(s *Scope) string {
	switch {
	case s.Cluster == nil || s.Cluster.Spec.ControlPlaneRef == nil:
		return "NotNamed"
	case s.ControlPlaneUnread:
		return "Unread"
	case s.ControlPlane == nil:
		return "Missing"
	case s.ControlPlane.GetDeletionTimestamp() != nil:
		return "Deleting"
	}
	return "Found"
}

// controlPlaneAvailable is the ControlPlaneAvailable condition for what is
// observed, as Cluster API's setControlPlaneAvailableCondition: the control
// plane object's Available condition (an empty reason read as Available
// when True, NoReasonReported otherwise), or without one True (Available)
// once the control plane is initialized and False (NotAvailable) before;
// False while the object does not exist (ObjectDoesNotExist, or
// ObjectDeleted once the control plane had come up); Unknown
// (InternalError) while it cannot be read. ok is false without
// spec.controlPlaneRef: the Cluster then has no such condition.
func controlPlaneAvailable(s *Scope) (cond metav1.Condition, ok bool) {
	c := s.Cluster
	ref := c.Spec.ControlPlaneRef
	if ref == nil {
		return metav1.Condition{}, false
	}
	cond = metav1.Condition{Type: ControlPlaneAvailableCondition, ObservedGeneration: c.Generation}
	switch controlPlane(s) {
	case "Unread":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, "InternalError", fmt.Sprintf("%s %s could not be read: %v", ref.Kind, ref.Name, s.ControlPlaneErr)
	case "Missing":
		cond.Status = metav1.ConditionFalse
		cond.Reason, cond.Message = controlPlaneMissing(s)
	default:
		if available := meta.FindStatusCondition(contract.Conditions(s.ControlPlane), "Available"); available != nil {
			cond.Status, cond.Reason, cond.Message = available.Status, contract.MirroredReason(available, controlPlaneAvailableReason), available.Message
			break
		}
		if controlPlaneInitialized(s) {
			cond.Status, cond.Reason = metav1.ConditionTrue, controlPlaneAvailableReason
			break
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, controlPlaneNotAvailableReason, fmt.Sprintf("%s status.initialization.controlPlaneInitialized is false", ref.Kind)
	}
	return cond, true
}

// Reasons of ControlPlaneAvailable when the control plane object reports no
// reason of its own (Cluster API's).
const (
	controlPlaneAvailableReason    = "Available"
	controlPlaneNotAvailableReason = "NotAvailable"
)

// controlPlaneMissing words a control plane object that does not exist, in
// Cluster API's reasons and words: deleted once the control plane had come
// up (ObjectDeleted), or not there yet (ObjectDoesNotExist; a kind the API
// server does not serve is said too).
func controlPlaneMissing(s *Scope) (reason, message string) {
	c := s.Cluster
	ref := c.Spec.ControlPlaneRef
	switch {
	case !controlPlaneWasInitialized(s) && s.ControlPlaneNotServed:
		return clusterv1.ObjectDoesNotExistReason, ref.Kind + " does not exist: " + notServed(*ref)
	case !controlPlaneWasInitialized(s):
		return clusterv1.ObjectDoesNotExistReason, ref.Kind + " does not exist"
	case c.DeletionTimestamp.IsZero():
		return clusterv1.ObjectDeletedReason, ref.Kind + " has been deleted while the cluster still exists"
	}
	return clusterv1.ObjectDeletedReason, ref.Kind + " has been deleted"
}

// notServed says that the API server does not serve the kind ref names.
func notServed(ref clusterv1.ObjectReference) string {
	return fmt.Sprintf("the API server does not serve the kind %s.%s", ref.Kind, ref.APIGroup)
}

// controlPlaneWasInitialized: the Cluster records that its control plane
// came up once (status.initialization.controlPlaneInitialized).
func controlPlaneWasInitialized(s *Scope) bool {
	return s.Cluster != nil && ptr.Deref(s.Cluster.Status.Initialization.ControlPlaneInitialized, false)
}

// controlPlaneInitialized: the Cluster says its control plane came up, or
// the object says so now.
func controlPlaneInitialized(s *Scope) bool {
	if ptr.Deref(s.Cluster.Status.Initialization.ControlPlaneInitialized, false) {
		return true
	}
	return contract.ControlPlaneInitialized(s.ControlPlane)
}

// mirrorControlPlaneAvailable writes controlPlaneAvailable.
func mirrorControlPlaneAvailable(s *Scope) {
	cond, ok := controlPlaneAvailable(s)
	if !ok {
		meta.RemoveStatusCondition(&s.Cluster.Status.Conditions, ControlPlaneAvailableCondition)
		return
	}
	meta.SetStatusCondition(&s.Cluster.Status.Conditions, cond)
}

// controlPlaneMissingTold: unless the object spec.controlPlaneRef names is
// missing, there is nothing for row K13 to tell; when it is, whether
// ControlPlaneAvailable says so already, in the same words.
func controlPlaneMissingTold(s *Scope) bool {
	if s.Cluster == nil || controlPlane(s) != "Missing" {
		return true
	}
	c := meta.FindStatusCondition(s.Cluster.Status.Conditions, ControlPlaneAvailableCondition)
	reason, msg := controlPlaneMissing(s)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason && c.Message == msg
}

func describeControlPlane(_ context.Context, s *Scope) engine.Outcome {
	_, msg := controlPlaneMissing(s)
	return engine.OKf("%s", msg)
}

// deleteControlPlane deletes the object spec.controlPlaneRef names (see
// deleteReferenced).
func deleteControlPlane(ctx context.Context, s *Scope) engine.Outcome {
	ref := s.Cluster.Spec.ControlPlaneRef
	return s.deleteReferenced(ctx, ref.Kind, s.ControlPlane, s.ControlPlaneUnread, s.ControlPlaneErr,
		fmt.Sprintf("every Machine the Cluster waits for is gone, but %s %s", ref.Kind, ref.Name))
}

// deleteReferenced deletes obj, an object the Cluster names, by its UID,
// unless it is being deleted already, and waits for it (its kind is
// watched: its going wakes the Cluster). One an API error left unread
// (unread, err) is neither deleted nor taken for gone: the failure says
// what could not be read.
func (s *Scope) deleteReferenced(ctx context.Context, kind string, obj *unstructured.Unstructured, unread bool, err error, what string) engine.Outcome {
	switch {
	case unread || obj == nil:
		return engine.Failf("%s could not be read: %v", what, err)
	case obj.GetDeletionTimestamp() == nil:
		target := &unstructured.Unstructured{}
		target.SetGroupVersionKind(obj.GroupVersionKind())
		target.SetNamespace(obj.GetNamespace())
		target.SetName(obj.GetName())
		if err := s.deleteObject(ctx, target, obj.GetUID()); err != nil {
			return engine.Failf("%v", err)
		}
	}
	// Cluster API's wording, the kind alone.
	return engine.Wait("Waiting for %s to be deleted", kind)
}

// referenceLeft names the object ref names while the teardown still waits
// for it: state (the controlPlane or infrastructure fact) says it exists,
// is being deleted or could not be read. Empty otherwise (not named, or
// gone).
func referenceLeft(state string, ref *clusterv1.ObjectReference) string {
	switch state {
	case "Found", "Deleting", "Unread":
		return ref.Kind + " " + ref.Name
	}
	return ""
}

// clustersNaming wakes the Clusters whose controlPlaneRef or
// infrastructureRef names o.
func clustersNaming(c client.Reader) func(context.Context, *unstructured.Unstructured) []reconcile.Request {
	return func(ctx context.Context, o *unstructured.Unstructured) []reconcile.Request {
		list := &clusterv1.ClusterList{}
		key := referencedKey(o.GroupVersionKind().Group, o.GetKind(), o.GetName())
		if err := c.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{ReferencedObjectIndex: key}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}

// ControlPlaneInitializedCondition says the control plane came up once.
const ControlPlaneInitializedCondition = "ControlPlaneInitialized"

// mirrorControlPlaneInitialized is Cluster API's
// setControlPlaneInitializedCondition: once True it stays, and so does
// status.initialization.controlPlaneInitialized. With a control
// plane object it reads the contract's
// status.initialization.controlPlaneInitialized; without one, the control
// plane is up once one of its Machines has a Node.
func mirrorControlPlaneInitialized(s *Scope) {
	c := s.Cluster
	defer func() {
		if meta.IsStatusConditionTrue(c.Status.Conditions, ControlPlaneInitializedCondition) {
			if c.Spec.ControlPlaneRef != nil && !ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) {
				// Cluster API reconcileControlPlane tells this once, for a
				// control plane object.
				s.Told.Tell(reconciler.Tell{Reason: "ControlPlaneInitialized", Note: fmt.Sprintf("Cluster %s ControlPlaneInitialized is now True", c.Name)})
			}
			c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		}
	}()
	if meta.IsStatusConditionTrue(c.Status.Conditions, ControlPlaneInitializedCondition) {
		return
	}
	set := func(status metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: ControlPlaneInitializedCondition,
			Status: status, Reason: reason, Message: message, ObservedGeneration: c.Generation})
	}
	if ref := c.Spec.ControlPlaneRef; ref != nil {
		switch {
		case s.ControlPlaneUnread:
			set(metav1.ConditionUnknown, "InternalError", fmt.Sprintf("%s %s could not be read: %v", ref.Kind, ref.Name, s.ControlPlaneErr))
		case s.ControlPlane == nil:
			set(metav1.ConditionUnknown, clusterv1.ObjectDoesNotExistReason, fmt.Sprintf("%s does not exist", ref.Kind))
		default:
			if contract.ControlPlaneInitialized(s.ControlPlane) {
				set(metav1.ConditionTrue, "Initialized", "")
				return
			}
			set(metav1.ConditionFalse, "NotInitialized", "Control plane not yet initialized")
		}
		return
	}
	for _, m := range s.Machines {
		if isControlPlane(m) && m.Status.NodeRef != nil {
			set(metav1.ConditionTrue, "Initialized", "")
			return
		}
	}
	set(metav1.ConditionFalse, "NotInitialized", "Waiting for the first control plane machine to have status.nodeRef set")
}

// mirrorControlPlaneCounts is Cluster API's setControlPlaneReplicas: the
// counters the control plane object reports by the contract (none while it
// does not exist or cannot be read), or without one its Machines counted by
// their conditions; a counter nothing adds to stays unset.
func mirrorControlPlaneCounts(s *Scope) {
	c := s.Cluster
	var out clusterv1.ClusterReplicas
	if c.Spec.ControlPlaneRef != nil {
		if s.ControlPlane != nil {
			field := func(path ...string) *int32 {
				if v, found, err := unstructured.NestedInt64(s.ControlPlane.Object, path...); found && err == nil {
					return ptr.To(int32(v))
				}
				return nil
			}
			out = clusterv1.ClusterReplicas{DesiredReplicas: field("spec", "replicas"), Replicas: field("status", "replicas"),
				ReadyReplicas: field("status", "readyReplicas"), AvailableReplicas: field("status", "availableReplicas"),
				UpToDateReplicas: field("status", "upToDateReplicas"), Versions: contractVersions(s.ControlPlane)}
		}
		c.Status.ControlPlane = out
		return
	}
	inc := func(p **int32) { *p = ptr.To(ptr.Deref(*p, 0) + 1) }
	var machines []*clusterv1.Machine
	for _, m := range s.Machines {
		if !isControlPlane(m) {
			continue
		}
		machines = append(machines, m)
		inc(&out.Replicas)
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.ReadyCondition) {
			inc(&out.ReadyReplicas)
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.AvailableCondition) {
			inc(&out.AvailableReplicas)
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.UpToDateCondition) {
			inc(&out.UpToDateReplicas)
		}
	}
	out.Versions = reconciler.MachineVersions(machines)
	// Each stand-alone Machine made is one replica wanted, as Cluster API
	// counts them.
	out.DesiredReplicas = out.Replicas
	c.Status.ControlPlane = out
}

// contractVersions reads the control plane object's status.versions
// (version and replicas of each entry, the contract's); entries that do not
// read so are left out.
func contractVersions(cp *unstructured.Unstructured) []clusterv1.StatusVersion {
	var out []clusterv1.StatusVersion
	for _, entry := range contract.Entries(cp, "status", "versions") {
		v, _, _ := unstructured.NestedString(entry, "version")
		n, _, _ := unstructured.NestedInt64(entry, "replicas")
		if v != "" && n > 0 {
			out = append(out, clusterv1.StatusVersion{Version: v, Replicas: int32(n)})
		}
	}
	return reconciler.SumVersions(out)
}
