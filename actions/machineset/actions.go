package machineset

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// The actions change the MachineSet in memory only (the kit patches it once)
// or create, patch and delete Machines and provider objects idempotently.
// Counts are read from the Scope and reported in the outcome's message.

func (s *Scope) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: s.Set.Name,
		UID: s.Set.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// patchMachine changes a Machine with optimistic locking: owner references
// are a list a merge patch replaces whole, so a concurrent change must fail
// the patch rather than be lost.
func patchMachine(ctx context.Context, s *Scope, m *clusterv1.Machine, change func(*clusterv1.Machine)) error {
	base := m.DeepCopy()
	change(m)
	return s.Client.Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

func adoptMachines(ctx context.Context, s *Scope) engine.Outcome {
	for _, m := range s.Orphans {
		err := patchMachine(ctx, s, m, func(m *clusterv1.Machine) {
			m.OwnerReferences = append(m.OwnerReferences, s.ownerRef())
			if m.Labels == nil {
				m.Labels = map[string]string{}
			}
			m.Labels[clusterv1.SetNameLabel] = LabelValue(s.Set.Name)
		})
		if err != nil {
			s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedAdopt", Related: m, Note: fmt.Sprintf("Failed to adopt Machine %q: %v", m.Name, err)})
			return engine.Fail(fmt.Errorf("adopt Machine %s: %w", m.Name, err))
		}
		s.Told.Tell(reconciler.Tell{Reason: "SuccessfulAdopt", Related: m, Note: fmt.Sprintf("Adopted Machine %q", m.Name)})
	}
	return engine.OKf("adopted %s", names(s.Orphans))
}

func releaseMachines(ctx context.Context, s *Scope) engine.Outcome {
	for _, m := range s.Strays {
		err := patchMachine(ctx, s, m, func(m *clusterv1.Machine) {
			refs := m.OwnerReferences[:0]
			for _, ref := range m.OwnerReferences {
				if ref.UID != s.Set.UID {
					refs = append(refs, ref)
				}
			}
			m.OwnerReferences = refs
			if m.Labels[clusterv1.SetNameLabel] == LabelValue(s.Set.Name) {
				delete(m.Labels, clusterv1.SetNameLabel)
			}
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return engine.Fail(fmt.Errorf("release Machine %s: %w", m.Name, err))
		}
	}
	return engine.OKf("released %s", names(s.Strays))
}

// deleteMachines deletes Machines not being deleted yet and waits until the
// cache shows it, so the next reconcile does not count them again; with
// tell, each deletion is an Event of the set (a scale-down: Cluster API
// tells those, not the deletions of a remediation or of the set's own
// deletion).
func deleteMachines(ctx context.Context, s *Scope, ms []*clusterv1.Machine, tell bool) error {
	var objs []client.Object
	for _, m := range ms {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Machine %s: %w", m.Name, err)
		}
		if tell {
			s.Told.Tell(reconciler.Tell{Reason: "SuccessfulDelete", Related: m, Note: fmt.Sprintf("Deleted Machine %q", m.Name)})
		}
		objs = append(objs, m)
	}
	return reconciler.WaitForCache(ctx, s.reader(), objs, reconciler.Deleted)
}

func (s *Scope) liveMachines(failed bool) []*clusterv1.Machine {
	var out []*clusterv1.Machine
	for _, m := range s.Owned {
		if m.DeletionTimestamp.IsZero() && NeedsReplacement(m) == failed {
			out = append(out, m)
		}
	}
	return out
}

func deleteFailedMachines(ctx context.Context, s *Scope) engine.Outcome {
	n := s.RemediationTokens()
	victims := RemediationOrder(s.liveMachines(true))
	deferred := victims[min(n, len(victims)):]
	victims = victims[:min(n, len(victims))]
	if _, err := markOwnerRemediated(ctx, s, victims, clusterv1.RemediationMachineDeletingReason, "Machine is deleting"); err != nil {
		return engine.Fail(err)
	}
	if _, err := markOwnerRemediated(ctx, s, deferred, clusterv1.RemediationDeferredReason, s.inFlightMessage()); err != nil {
		return engine.Fail(err)
	}
	if err := deleteMachines(ctx, s, victims, false); err != nil {
		return engine.Fail(err)
	}
	if msg, ok := s.healthCheckerWords(); ok {
		return engine.OKf("%s", msg)
	}
	return engine.OKf("Replacing %s Machine(s) %s: %s; maxInFlight %d", replaceWhat(s.Counts), names(victims), replaceCount(s.Counts), s.MaxInFlight())
}

// healthCheckerWords: while every Machine to replace is one a health
// checker marked, the set's Remediating says what Cluster API's
// setRemediatingCondition says, a "* Machine m: <OwnerRemediated message>"
// line each (Machine is deleting; Waiting because there are already too
// many remediations in progress ...); krtt's own failed Machines, which it
// has no such words for, are counted instead.
func (s *Scope) healthCheckerWords() (string, bool) {
	c := s.Counts
	if c.Marked == 0 || c.Marked != c.Replace {
		return "", false
	}
	cond := reconciler.Remediating(s.Owned, " by MachineSet", s.Set.Generation)
	return cond.Message, cond.Status == metav1.ConditionTrue && cond.Message != ""
}

// describeRemediation says what a replacement held by maxInFlight waits
// on: the health checker's words for marked Machines, else the counts.
func describeRemediation(ctx context.Context, s *Scope) engine.Outcome {
	if msg, ok := s.healthCheckerWords(); ok {
		return engine.OKf("%s", msg)
	}
	return describeFailedMachines(ctx, s)
}

// inFlightMessage is the OwnerRemediated message of a marked Machine that
// waits because maxInFlight Machines are already being replaced.
func (s *Scope) inFlightMessage() string {
	limit := ptr.Deref(s.Set.Spec.Remediation.MaxInFlight, intstr.FromInt32(1))
	// Cluster API's words, field path included (krtt's field is
	// spec.remediation.maxInFlight).
	return fmt.Sprintf("Waiting because there are already too many remediations in progress (spec.strategy.remediation.maxInFlight is %s)", limit.String())
}

// deferRemediationToInFlight tells the health checker of every marked
// Machine that its deletion waits for those being replaced (Cluster API
// reconcileUnhealthyMachines: RemediationDeferred once maxInFlight is reached).
func deferRemediationToInFlight(ctx context.Context, s *Scope) engine.Outcome {
	return markLiveMarked(ctx, s, clusterv1.RemediationDeferredReason, s.inFlightMessage())
}

// deferRemediationToPreflight tells the health checker of the marked
// Machines maxInFlight would let the set delete that their deletion waits
// for the failed preflight checks, a line per check, and the others that
// they wait for maxInFlight (Cluster API reconcileUnhealthyMachines:
// RemediationDeferred, the maxInFlight cut made before the checks).
func deferRemediationToPreflight(ctx context.Context, s *Scope) engine.Outcome {
	marked := s.liveMarked()
	n := min(s.RemediationTokens(), len(marked))
	wrote, err := markOwnerRemediated(ctx, s, marked[:n], clusterv1.RemediationDeferredReason, bullets(s.Preflight))
	if err != nil {
		return engine.Fail(err)
	}
	more, err := markOwnerRemediated(ctx, s, marked[n:], clusterv1.RemediationDeferredReason, s.inFlightMessage())
	return marksOutcome(wrote || more, err)
}

// leftToRolloutMessage is Cluster API's OwnerRemediated message for a
// marked Machine of an old revision's set.
const leftToRolloutMessage = "Machine won't be remediated because it is pending removal due to rollout"

// leaveRemediationToRollout tells the health checker of every marked Machine
// of an old revision's set that the set does not delete it: the rollout
// removes it (Cluster API reconcileUnhealthyMachines: CannotBeRemediated).
func leaveRemediationToRollout(ctx context.Context, s *Scope) engine.Outcome {
	return markLiveMarked(ctx, s, clusterv1.CannotBeRemediatedReason, leftToRolloutMessage)
}

// markLiveMarked sets the OwnerRemediated condition of the live Machines a
// health checker marked; it reports having written nothing when each says so already.
func markLiveMarked(ctx context.Context, s *Scope, reason, message string) engine.Outcome {
	return marksOutcome(markOwnerRemediated(ctx, s, s.liveMarked(), reason, message))
}

// liveMarked are the live Machines a health checker marked, in the order
// the set would delete them.
func (s *Scope) liveMarked() []*clusterv1.Machine {
	var marked []*clusterv1.Machine
	for _, m := range RemediationOrder(s.liveMachines(true)) {
		if RemediationRequested(m) {
			marked = append(marked, m)
		}
	}
	return marked
}

// untold are the live marked Machines whose OwnerRemediated condition does
// not give the reason and message yet.
func (s *Scope) untold(reason, message string) []*clusterv1.Machine {
	var out []*clusterv1.Machine
	for _, m := range s.liveMarked() {
		if !toldOwnerRemediated(m, reason, message) {
			out = append(out, m)
		}
	}
	return out
}

// toldOwnerRemediated: the Machine's OwnerRemediated condition gives the
// reason and message.
func toldOwnerRemediated(m *clusterv1.Machine, reason, message string) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.OwnerRemediatedCondition)
	return c != nil && c.Reason == reason && c.Message == message
}

// marksOutcome is the outcome of writing OwnerRemediated marks: done,
// having written nothing when every Machine said so already.
func marksOutcome(wrote bool, err error) engine.Outcome {
	switch {
	case err != nil:
		return engine.Fail(err)
	case !wrote:
		return engine.OK().Untouched()
	}
	return engine.OK()
}

// markOwnerRemediated tells the health checker that marked a Machine what
// its owner does about it: OwnerRemediated stays False with the reason and
// message given. Machines no health checker marked, and those that say so
// already, are not written. The mark comes before a deletion, so a retry
// after a failed deletion marks it again (Cluster API
// reconcileUnhealthyMachines).
func markOwnerRemediated(ctx context.Context, s *Scope, machines []*clusterv1.Machine, reason, message string) (wrote bool, err error) {
	for _, m := range machines {
		if !RemediationRequested(m) {
			continue
		}
		if toldOwnerRemediated(m, reason, message) {
			continue
		}
		if err := patchMachineStatus(ctx, s, m, func(m *clusterv1.Machine) {
			meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: clusterv1.OwnerRemediatedCondition, Status: metav1.ConditionFalse,
				Reason: reason, Message: message, ObservedGeneration: m.Generation})
		}); err != nil {
			return wrote, fmt.Errorf("set the OwnerRemediated condition of Machine %s to %s: %w", m.Name, reason, err)
		}
		wrote = true
	}
	return wrote, nil
}

// clearRemediationMarks removes the OwnerRemediated condition of the
// Machines whose health check passes again, so the mark cannot outlive the
// failure it was for (Cluster API reconcileUnhealthyMachines).
func clearRemediationMarks(ctx context.Context, s *Scope) engine.Outcome {
	for _, m := range s.Recovered {
		if err := patchMachineStatus(ctx, s, m, func(m *clusterv1.Machine) {
			meta.RemoveStatusCondition(&m.Status.Conditions, clusterv1.OwnerRemediatedCondition)
		}); err != nil {
			return engine.Fail(fmt.Errorf("remove the remediation mark of Machine %s: %w", m.Name, err))
		}
	}
	return engine.OKf("Machine(s) %s are healthy again: their OwnerRemediated condition is removed", names(s.Recovered))
}

// patchMachineStatus writes what change does to a Machine's status, failing
// on a conflict so a health checker's newer word is never overwritten; a
// Machine already gone is not an error.
func patchMachineStatus(ctx context.Context, s *Scope, m *clusterv1.Machine, change func(*clusterv1.Machine)) error {
	base := m.DeepCopy()
	change(m)
	if err := s.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// replaceWhat words the Machines the set replaces: failed ones, ones a
// health checker marked for remediation, or both.
func replaceWhat(c Counts) string {
	switch {
	case c.Marked == 0:
		return "failed"
	case c.Marked == c.Replace:
		return "unhealthy"
	}
	return "failed or unhealthy"
}

func replaceCount(c Counts) string {
	out := fmt.Sprintf("%d of %d failed", c.Failed, c.Live)
	if c.Marked > 0 {
		out += fmt.Sprintf(", %d marked for remediation by a health check", c.Marked)
	}
	return out
}

func describeFailedMachines(_ context.Context, s *Scope) engine.Outcome {
	c := s.Counts
	return engine.OKf("%d of %d Machines %s (%s); maxUnhealthy %d, maxInFlight %d, %d being replaced",
		c.Replace, c.Live, replaceWhat(c), names(s.liveMachines(true)), s.MaxUnhealthy(), s.MaxInFlight(), c.InFlight).
		With("replicas", strconv.Itoa(c.Total)).With("desiredReplicas", strconv.Itoa(s.Replicas()))
}

// describeMissingTemplates words a blocked scale-up as Cluster API's
// setScalingUpCondition does: a line per failed preflight check, then the
// kinds of the templates that do not exist (calculateMissingReferencesMessage).
func describeMissingTemplates(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("Scaling up from %d to %d replicas is blocked because:\n%s",
		s.Counts.Total, s.Replicas(), bullets(append(slices.Clone(s.Preflight), contract.MissingKinds(s.MissingKinds))))
}

// describeDisabledCreation says why no Machine is created. Cluster API's
// ScalingUp does not (syncReplicas returns before createMachines), so the
// condition keeps the plain count; this goes to the transition's message.
func describeDisabledCreation(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("No Machine is created: the MachineSet has the %s annotation (its MachineDeployment replaces deleted Machines through its current MachineSet)",
		clusterv1.DisableMachineCreateAnnotation)
}

// describeBlockedScaleUp words a scale-up the preflight checks hold as
// Cluster API's setScalingUpCondition does: a line per failed check.
func describeBlockedScaleUp(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("Scaling up from %d to %d replicas is blocked because:\n%s", s.Counts.Total, s.Replicas(), bullets(s.Preflight))
}

// describeDeferredRemediation names the failed Machines that wait for the
// preflight checks (Cluster API reconcileUnhealthyMachines defers their
// remediation with the same checks).
func describeDeferredRemediation(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("The replacement of failed Machine(s) %s waits because:\n%s", names(s.liveMachines(true)), bullets(s.Preflight))
}

// describeLeftToRollout names the Machines an old revision's set does not
// replace: the rollout replaces every Machine of the set.
func describeLeftToRollout(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("Machine(s) %s are not replaced: the set is an old revision (%s) of %s, whose rollout replaces its Machines",
		names(s.liveMachines(true)), cmp.Or(s.Set.Annotations[clusterv1.RevisionAnnotation], "none"), s.Deployment)
}

func bullets(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "* " + l
	}
	return strings.Join(out, "\n")
}

// createMachines creates replicas - Total Machines: Machines being deleted
// count until they are gone (Cluster API syncReplicas), so the set never
// has more than spec.replicas Machines.
func createMachines(ctx context.Context, s *Scope) engine.Outcome {
	missing := s.Replicas() - s.Counts.Total
	n := min(missing, BurstReplicas)
	created := make([]*clusterv1.Machine, n)
	done, err := SlowStart(n, func(i int) error {
		m, err := createMachine(ctx, s)
		created[i] = m
		if err == nil {
			s.Told.Tell(reconciler.Tell{Reason: "SuccessfulCreate", Related: m, Note: fmt.Sprintf("Created Machine %q", m.Name)})
		}
		return err
	})
	if werr := reconciler.WaitForCache(ctx, s.reader(), createdObjects(created), reconciler.Created); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		// Worded as Cluster API's ScalingUp, which stays True while a
		// creation fails; the line below says what the API server answered.
		return engine.Fail(fmt.Errorf("Scaling up from %d to %d replicas is blocked because:\n* creating the missing Machines failed after %d of %d: %w",
			s.Counts.Total, s.Replicas(), done, missing, err))
	}
	if n < missing {
		return engine.Wait("Created %d Machines (at most %d per reconcile); %d more are missing", n, BurstReplicas, missing-n)
	}
	return engine.OKf("Scaling up from %d to %d replicas: created %d", s.Counts.Total, s.Replicas(), n)
}

// createdObjects keeps the Machines that were created. A failed creation
// leaves a nil *Machine; compared as a client.Object it would not be nil
// (a typed nil), so the filter is on the pointer.
func createdObjects(ms []*clusterv1.Machine) []client.Object {
	var out []client.Object
	for _, m := range ms {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// createMachine clones the templates for a new Machine and creates it; on a
// failure the clones already created are deleted again, so nothing is left
// half-way. It returns the Machine when it was created.
func createMachine(ctx context.Context, s *Scope) (*clusterv1.Machine, error) {
	ms := s.Set
	name, err := machineName(ms)
	if err != nil {
		return nil, err
	}
	owner := s.ownerRef()
	labels, annotations := machineMetadata(ms)
	spec := *ms.Spec.Template.Spec.DeepCopy()
	spec.ClusterName = ms.Spec.ClusterName

	var clones []*unstructured.Unstructured
	cleanup := func(cause error) error {
		for _, u := range clones {
			if err := s.Client.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("%w (and deleting %s %s created for it failed: %v)", cause, u.GetKind(), u.GetName(), err)
			}
		}
		return cause
	}
	clone := func(tpl *unstructured.Unstructured, ref *clusterv1.ObjectReference) error {
		// The clone carries what the Machine carries from the set: its
		// labels, and the template's annotations without the set's
		// bookkeeping of which keys it manages.
		u, err := contract.FromTemplate(tpl, contract.Clone{Name: name, ClusterName: ms.Spec.ClusterName,
			Labels: labels, Annotations: ms.Spec.Template.ObjectMeta.Annotations, Owner: &owner})
		if err != nil {
			return err
		}
		if err := s.Client.Create(ctx, u); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), name, err)
		}
		clones = append(clones, u)
		ref.Kind, ref.Name = u.GetKind(), name
		return nil
	}
	if spec.Bootstrap.ConfigRef != nil {
		if s.BootstrapTemplate == nil {
			return nil, fmt.Errorf("the bootstrap template %s was not read", spec.Bootstrap.ConfigRef.Name)
		}
		if err := clone(s.BootstrapTemplate, spec.Bootstrap.ConfigRef); err != nil {
			return nil, cleanup(err)
		}
	}
	if s.InfrastructureTemplate == nil {
		return nil, cleanup(fmt.Errorf("the infrastructure template %s was not read", spec.InfrastructureRef.Name))
	}
	if err := clone(s.InfrastructureTemplate, &spec.InfrastructureRef); err != nil {
		return nil, cleanup(err)
	}
	// Created with the Machine controller's finalizer, as Cluster API's
	// computeDesiredMachine does: the Machine is protected from its first
	// moment, and its controller has no finalizer to add.
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ms.Namespace, Name: name, Labels: labels,
			Annotations: annotations, OwnerReferences: []metav1.OwnerReference{owner},
			Finalizers: []string{clusterv1.MachineFinalizer}},
		Spec: spec,
	}
	if err := s.Client.Create(ctx, m); err != nil {
		return nil, cleanup(fmt.Errorf("create Machine %s: %w", name, err))
	}
	return m, nil
}

// deleteSurplusMachines deletes Total - replicas Machines, picked from every
// Machine of the set (Cluster API deleteMachines): those being deleted
// already first (they are part of the surplus and are not deleted again),
// then the delete-machine annotation, then failed or unhealthy ones, then
// spec.deletion.order. Failed Machines go first also while their
// remediation is throttled or over its limit.
func deleteSurplusMachines(ctx context.Context, s *Scope) engine.Outcome {
	surplus := s.Counts.Total - s.Replicas()
	victims := DeletionOrder(s.Owned, s.Set.Spec.Deletion.Order)[:surplus]
	var fresh []*clusterv1.Machine
	for _, m := range victims {
		if m.DeletionTimestamp.IsZero() && len(fresh) < BurstReplicas {
			fresh = append(fresh, m)
		}
	}
	if err := deleteMachines(ctx, s, fresh, true); err != nil {
		return engine.Fail(fmt.Errorf("Scaling down from %d to %d replicas is blocked because:\n* %w", s.Counts.Total, s.Replicas(), err))
	}
	deleting := countDeleting(victims)
	if left := surplus - deleting - len(fresh); left > 0 {
		return engine.Wait("Deleted %s (at most %d per reconcile); %d more are surplus", names(fresh), BurstReplicas, left)
	}
	return engine.OKf("Scaling down from %d to %d replicas: deleted %s; %d already being deleted", s.Counts.Total, s.Replicas(), names(fresh), deleting)
}

func countDeleting(ms []*clusterv1.Machine) int {
	n := 0
	for _, m := range ms {
		if !m.DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

func deleteAllMachines(ctx context.Context, s *Scope) engine.Outcome {
	all := append(append([]*clusterv1.Machine(nil), s.Owned...), s.Strays...)
	if err := deleteMachines(ctx, s, all, false); err != nil {
		return engine.Fail(fmt.Errorf("Scaling down from %d to 0 replicas is blocked because:\n* %w", len(all), err))
	}
	return engine.Wait("%s", reconciler.DeletingCondition(s.Set, len(all), 0, reconciler.StaleMachines(all, s.Now)).Message)
}

// names lists a few Machine names and says how many more there are.
func names(ms []*clusterv1.Machine) string {
	const few = 5
	var out []string
	for i, m := range ms {
		if i == few {
			out = append(out, fmt.Sprintf("and %d more", len(ms)-few))
			break
		}
		out = append(out, m.Name)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
