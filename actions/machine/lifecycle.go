package machine

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/clusterowner"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// The actions in this file change the Machine in memory only (the
// reconciler patches it once), or touch one other object idempotently.

func setClusterOwnerAndLabels(_ context.Context, s *Scope) engine.Outcome {
	clusterowner.Ensure(s.Machine, s.Machine.Spec.ClusterName, s.Cluster)
	return engine.OK()
}

// adopt makes the Machine the controller owner of an external object and
// makes sure its kind is watched; it writes only when the reference is
// missing. An object that belongs to something else (claim) is refused:
// the rows do not adopt it (E09/E10), and the refusal says whose it is.
func adopt(ctx context.Context, s *Scope, u *unstructured.Unstructured, claim string) engine.Outcome {
	if u == nil {
		return engine.OK()
	}
	if claim != "" {
		return engine.Failf("%s; the Machine does not take it over", claim)
	}
	if s.Watcher != nil {
		if err := s.Watcher.Watch(ctx, u); err != nil {
			return engine.Fail(fmt.Errorf("watch %s: %w", u.GetKind(), err))
		}
	}
	if adopted(s, u) {
		return engine.OK()
	}
	labels := map[string]string{clusterv1.ClusterNameLabel: s.Machine.Spec.ClusterName}
	var refs []metav1.OwnerReference
	if owner := metav1.GetControllerOf(u); owner != nil && owner.UID == s.Machine.UID {
		// Owned already; the cluster-name label is put back if someone
		// removed it (Cluster API ensureExternalOwnershipAndWatch sets both
		// on every reconcile).
		refs = u.GetOwnerReferences()
	} else {
		for _, ref := range u.GetOwnerReferences() {
			if createdFor(s, ref) {
				// The MachineSet or control plane that created the object
				// for this Machine hands it over.
				continue
			}
			refs = append(refs, ref)
		}
		refs = append(refs, metav1.OwnerReference{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: s.Machine.Name, UID: s.Machine.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		})
	}
	// The write tests the owner references it replaces: a controller set
	// since the observation makes it conflict instead of being overwritten,
	// and the next reconcile sees the new owner (row E09/E10); the
	// provider's own writes meanwhile do not. The observed copy takes the
	// write in (the facts read after it see the object as the API server
	// has it now); a failed write leaves it as observed.
	if err := reconciler.PatchOwnersAndLabels(ctx, s.Client, u, refs, labels); err != nil {
		return engine.Fail(fmt.Errorf("set owner of %s %s: %w", u.GetKind(), u.GetName(), err))
	}
	return engine.OK()
}

// adopted: the Machine controls u, and u carries the Machine's cluster-name
// label.
func adopted(s *Scope, u *unstructured.Unstructured) bool {
	owner := metav1.GetControllerOfNoCopy(u)
	return owner != nil && s.Machine != nil && owner.UID == s.Machine.UID &&
		u.GetLabels()[clusterv1.ClusterNameLabel] == s.Machine.Spec.ClusterName
}

func adoptBootstrap(ctx context.Context, s *Scope) engine.Outcome {
	return adopt(ctx, s, s.Bootstrap, s.BootstrapClaim)
}

func adoptInfrastructure(ctx context.Context, s *Scope) engine.Outcome {
	return adopt(ctx, s, s.Infrastructure, s.InfrastructureClaim)
}

// release leaves an object that belongs to something else: it says whose
// it is, and removes this Machine's owner reference if an earlier version
// set one, for the garbage collector would otherwise delete the object
// with the Machine.
func release(ctx context.Context, s *Scope, u *unstructured.Unstructured, claim string) engine.Outcome {
	if u == nil || claim == "" {
		return engine.Failf("no object that belongs to something else")
	}
	var refs []metav1.OwnerReference
	for _, ref := range u.GetOwnerReferences() {
		if ref.UID != s.Machine.UID {
			refs = append(refs, ref)
		}
	}
	if len(refs) == len(u.GetOwnerReferences()) {
		return engine.OKf("%s", claim)
	}
	if err := reconciler.PatchOwnersAndLabels(ctx, s.Client, u, refs, nil); err != nil {
		return engine.Fail(fmt.Errorf("remove the Machine's owner reference from %s %s: %w", u.GetKind(), u.GetName(), err))
	}
	return engine.OKf("%s (the Machine's owner reference, set by an earlier version, was removed)", claim)
}

func releaseBootstrap(ctx context.Context, s *Scope) engine.Outcome {
	return release(ctx, s, s.Bootstrap, s.BootstrapClaim)
}

func releaseInfrastructure(ctx context.Context, s *Scope) engine.Outcome {
	return release(ctx, s, s.Infrastructure, s.InfrastructureClaim)
}

func copyDataSecretName(_ context.Context, s *Scope) engine.Outcome {
	name := BootstrapDataSecretName(s.Bootstrap)
	if name == "" {
		return engine.Failf("bootstrap object reports its data secret but status.dataSecretName is empty")
	}
	s.Machine.Spec.Bootstrap.DataSecretName = ptr.To(name)
	return engine.OKf("data secret %s", name)
}

// copyInfrastructureFields copies the provider's fields onto the Machine.
// The providerID keys the Node lookup: when it changes, the Node is looked
// up again (from the cache), so the facts read after it are what a new
// observation would find (write-through).
func copyInfrastructureFields(ctx context.Context, s *Scope) engine.Outcome {
	m, u := s.Machine, s.Infrastructure
	id := InfrastructureProviderID(u)
	if m.Spec.ProviderID != nil && *m.Spec.ProviderID != "" && *m.Spec.ProviderID != id {
		return engine.Failf("infrastructure reports providerID %q but the Machine already has %q", id, *m.Spec.ProviderID)
	}
	changed := ptr.Deref(m.Spec.ProviderID, "") != id
	m.Spec.ProviderID = ptr.To(id)
	if changed && s.NodeClient != nil {
		s.Nodes = nil
		s.findNodes(ctx)
	}
	if addrs := InfrastructureAddresses(u); len(addrs) > 0 {
		m.Status.Addresses = addrs
	}
	if fd := InfrastructureFailureDomain(u); fd != "" {
		m.Status.FailureDomain = fd
		if m.Spec.FailureDomain == "" {
			m.Spec.FailureDomain = fd
		}
	}
	return engine.OKf("providerID %s", id)
}

func setNodeRef(_ context.Context, s *Scope) engine.Outcome {
	n := s.Node()
	if n == nil {
		return engine.Failf("no single Node to reference")
	}
	if ref := s.Machine.Status.NodeRef; ref == nil || ref.Name != n.Name {
		s.Told.Tell(reconciler.Tell{Reason: "SuccessfulSetNodeRef", Related: n, Note: n.Name})
	}
	s.Machine.Status.NodeRef = &clusterv1.MachineNodeReference{Name: n.Name}
	return engine.OKf("Node %s", n.Name)
}

func startClock(field **metav1.Time, now metav1.Time) {
	if *field == nil {
		*field = &now
	}
}

func hookWait(s *Scope, prefix, point string, field **metav1.Time) engine.Outcome {
	startClock(field, metav1.NewTime(s.Now))
	// Cluster API's reconcileDelete wording: the full annotation keys,
	// sorted; when the wait started is in status.deletion.
	hooks := annotationsWithPrefix(s.Machine.Annotations, prefix)
	return engine.OKf("Waiting for %s hooks to succeed (hooks: %s)", point, strings.Join(hooks, ","))
}

func recordPreDrainHookWait(_ context.Context, s *Scope) engine.Outcome {
	return hookWait(s, clusterv1.PreDrainDeleteHookAnnotationPrefix, "pre-drain", &s.Machine.Status.Deletion.WaitForPreDrainHookStartTime)
}

func recordPreTerminateHookWait(_ context.Context, s *Scope) engine.Outcome {
	return hookWait(s, clusterv1.PreTerminateDeleteHookAnnotationPrefix, "pre-terminate", &s.Machine.Status.Deletion.WaitForPreTerminateHookStartTime)
}

func markDrainStart(_ context.Context, s *Scope) engine.Outcome {
	startClock(&s.Machine.Status.Deletion.NodeDrainStartTime, metav1.NewTime(s.Now))
	return engine.OK()
}

func markVolumeWaitStart(_ context.Context, s *Scope) engine.Outcome {
	s.volumeWaitStarted = s.Machine.Status.Deletion.WaitForNodeVolumeDetachStartTime == nil
	startClock(&s.Machine.Status.Deletion.WaitForNodeVolumeDetachStartTime, metav1.NewTime(s.Now))
	return engine.OK()
}

func markNodeDeletionStart(_ context.Context, s *Scope) engine.Outcome {
	startClock(&s.Machine.Status.Deletion.NodeDeletionStartTime, metav1.NewTime(s.Now))
	return engine.OK()
}

// deleteExternal issues one delete for an object that is not already going
// away and reports the wait until it is gone. An object without finalizers,
// deleted in the version observed (a resourceVersion precondition, and
// background propagation, which adds none), is gone once the API server
// says so: the object leaves the observation (*u = nil) and the path goes
// on in this reconcile, as it would after the watch told it. One that
// changed since it was read fails the precondition with a conflict, which
// the kit decides again on the newer version.
func deleteExternal(ctx context.Context, s *Scope, u **unstructured.Unstructured, claim, what string) engine.Outcome {
	obj := *u
	if obj == nil {
		return engine.OK()
	}
	if claim != "" {
		// The rows leave such an object alone (D25, D26); this is the last
		// line of defence.
		return engine.Failf("%s: the Machine does not delete it", claim)
	}
	if obj.GetDeletionTimestamp() != nil {
		return waitingForDeletion(obj)
	}
	atOnce := len(obj.GetFinalizers()) == 0
	var opts []client.DeleteOption
	if atOnce {
		opts = append(opts, client.Preconditions{UID: ptr.To(obj.GetUID()), ResourceVersion: ptr.To(obj.GetResourceVersion())},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
	}
	switch err := s.Client.Delete(ctx, obj, opts...); {
	case apierrors.IsNotFound(err):
		*u = nil
		return engine.OKf("%s %s %s is gone", what, obj.GetKind(), obj.GetName())
	case err != nil:
		return engine.Fail(fmt.Errorf("delete %s %s %s: %w", what, obj.GetKind(), obj.GetName(), err))
	case atOnce:
		*u = nil
		return engine.OKf("%s %s %s deleted", what, obj.GetKind(), obj.GetName())
	}
	return waitingForDeletion(obj)
}

// waitingForDeletion is Cluster API's reconcileDelete wording, the kind
// alone (a Machine has one object of each).
func waitingForDeletion(obj *unstructured.Unstructured) engine.Outcome {
	return engine.Wait("Waiting for %s to be deleted", obj.GetKind())
}

func deleteInfrastructure(ctx context.Context, s *Scope) engine.Outcome {
	return deleteExternal(ctx, s, &s.Infrastructure, s.InfrastructureClaim, "infrastructure")
}

func deleteBootstrap(ctx context.Context, s *Scope) engine.Outcome {
	return deleteExternal(ctx, s, &s.Bootstrap, s.BootstrapClaim, "bootstrap")
}

func deleteNode(ctx context.Context, s *Scope) engine.Outcome {
	n := s.Node()
	if n == nil {
		return engine.OK()
	}
	if err := s.NodeClient.Delete(ctx, n); err != nil && !apierrors.IsNotFound(err) {
		s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedDeleteNode", Related: n, Note: fmt.Sprintf("error deleting Machine's Node: %v", err)})
		return engine.Fail(fmt.Errorf("delete Node %s: %w", n.Name, err))
	}
	return engine.OKf("Node %s deleted", n.Name)
}

// copyProviderFailure copies a provider object's terminal failure onto the
// Machine, as the contract says (the infrastructure object's first).
func copyProviderFailure(_ context.Context, s *Scope) engine.Outcome {
	for _, u := range []*unstructured.Unstructured{s.Infrastructure, s.Bootstrap} {
		if u == nil || ProviderFailure(u) == "" {
			continue
		}
		reason := nestedString(u, "status", "failureReason")
		if reason == "" {
			reason = "ProviderFailed"
		}
		msg := fmt.Sprintf("Failure detected from referenced resource %s %s: %s", u.GetKind(), u.GetName(), ProviderFailure(u))
		s.Machine.Status.FailureReason = ptr.To(reason)
		s.Machine.Status.FailureMessage = ptr.To(msg)
		return engine.OKf("%s", msg)
	}
	return engine.Failf("no provider object reports a failure")
}
