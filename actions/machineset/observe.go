package machineset

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// ControllerUIDIndex indexes Machines by the UID of their controller owner,
// so a set finds its Machines by lookup, not by scanning the namespace.
const ControllerUIDIndex = "metadata.controllerUID"

// ControllerUIDIndexer extracts the index key.
func ControllerUIDIndexer(obj client.Object) []string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return nil
	}
	return []string{string(ref.UID)}
}

// Observer reads everything a MachineSet reconcile looks at, once.
type Observer struct {
	Client client.Client
	// Reader is handed to actions to wait for their writes; Client if nil.
	Reader client.Reader
}

// Observe builds the Scope for one MachineSet. API errors do not abort it:
// the first is kept in Scope.Err and the apiError fact lets a row decide.
func (o *Observer) Observe(ctx context.Context, key client.ObjectKey, now time.Time) *Scope {
	s := &Scope{Client: o.Client, Reader: o.Reader, Now: now, Key: key}
	ms := &clusterv1.MachineSet{}
	if err := o.Client.Get(ctx, key, ms); err != nil {
		if !apierrors.IsNotFound(err) {
			s.Keep(fmt.Errorf("get MachineSet: %w", err))
		}
		return s
	}
	s.Found, s.Set = true, ms

	c := &clusterv1.Cluster{}
	switch err := o.Client.Get(ctx, client.ObjectKey{Namespace: ms.Namespace, Name: ms.Spec.ClusterName}, c); {
	case err == nil:
		s.Cluster = c
	case !apierrors.IsNotFound(err):
		s.Keep(fmt.Errorf("get Cluster %s: %w", ms.Spec.ClusterName, err))
	}
	if ms.DeletionTimestamp.IsZero() {
		// Nothing the deletion does needs a template (Cluster API's
		// reconcileDelete reads none), so one that cannot be read, or a kind
		// no longer served, does not hold the deletion.
		o.readTemplates(ctx, s)
		s.Preflight = o.preflight(ctx, s)
		o.readDeployment(ctx, s)
	}
	if overlaps, err := overlapping(ctx, o.Client, ms); err != nil {
		s.Keep(err)
	} else {
		s.Overlaps = overlaps
	}
	o.claim(ctx, s)
	s.Counts = count(s.Owned, ms)
	s.OutOfSync = outOfSync(ms, s.Owned)
	s.Recovered = recovered(s.Owned)
	s.Counts.UpToDate = upToDate(ms, s.Owned, s.OutOfSync)
	return s
}

// readDeployment compares the set's revision with its MachineDeployment's
// current one (Cluster API reconcileUnhealthyMachines remediates only in
// the current revision's set). A deployment that is gone leaves the set
// current: nothing else replaces its Machines.
func (o *Observer) readDeployment(ctx context.Context, s *Scope) {
	ref := metav1.GetControllerOf(s.Set)
	if ref == nil || ref.Kind != "MachineDeployment" {
		return
	}
	md := &clusterv1.MachineDeployment{}
	switch err := o.Client.Get(ctx, client.ObjectKey{Namespace: s.Set.Namespace, Name: ref.Name}, md); {
	case apierrors.IsNotFound(err):
		return
	case err != nil:
		s.Keep(fmt.Errorf("get MachineDeployment %s: %w", ref.Name, err))
		return
	}
	if md.UID != ref.UID {
		return
	}
	s.Deployment = fmt.Sprintf("MachineDeployment %s (revision %s)", md.Name, md.Annotations[clusterv1.RevisionAnnotation])
	s.StaleRevision = staleRevision(s.Set, md)
}

// staleRevision: ms is an old revision of md once md names another
// revision, or already when md's template no longer matches ms's in what
// rolls out (as Cluster API tells the current set, by the template): md
// writes its revision only after it made the new set, and a Machine that
// fails in between must not be replaced in a set the rollout is about to
// empty.
func staleRevision(ms *clusterv1.MachineSet, md *clusterv1.MachineDeployment) bool {
	if current := md.Annotations[clusterv1.RevisionAnnotation]; current != "" && current != ms.Annotations[clusterv1.RevisionAnnotation] {
		return true
	}
	return len(uptodate.Differences(uptodate.Of(&ms.Spec.Template.Spec), uptodate.Of(&md.Spec.Template.Spec))) > 0
}

func (o *Observer) readTemplates(ctx context.Context, s *Scope) {
	spec := s.Set.Spec.Template.Spec
	if ref := spec.Bootstrap.ConfigRef; ref != nil {
		s.BootstrapTemplate = o.readTemplate(ctx, s, *ref, "bootstrap template")
	}
	s.InfrastructureTemplate = o.readTemplate(ctx, s, spec.InfrastructureRef, "infrastructure template")
}

// readTemplate reads one template; a missing one is named for the
// messages, an API error kept.
func (o *Observer) readTemplate(ctx context.Context, s *Scope, ref clusterv1.ObjectReference, what string) *unstructured.Unstructured {
	t, err := contract.Get(ctx, o.Client, ref, s.Set.Namespace, what)
	switch {
	case err != nil:
		s.Keep(err)
	case t == nil:
		s.MissingTemplates = append(s.MissingTemplates, fmt.Sprintf("%s %s %s", what, ref.Kind, ref.Name))
		s.MissingKinds = append(s.MissingKinds, ref.Kind)
	}
	return t
}

// claim sorts the Machines the set may care about: those it controls (minus
// the strays that no longer match) and the orphans it may adopt.
func (o *Observer) claim(ctx context.Context, s *Scope) {
	ms := s.Set
	owned, err := o.controlledBy(ctx, ms)
	if err != nil {
		s.Keep(err)
		return
	}
	for _, m := range owned {
		if Matches(ms, m) {
			s.Owned = append(s.Owned, m)
		} else {
			s.Strays = append(s.Strays, m)
		}
	}
	candidates := &clusterv1.MachineList{}
	if err := o.Client.List(ctx, candidates, client.InNamespace(ms.Namespace), client.MatchingLabels(ms.Spec.Selector.MatchLabels)); err != nil {
		s.Keep(fmt.Errorf("list Machines matching the selector: %w", err))
		return
	}
	for i := range candidates.Items {
		m := &candidates.Items[i]
		// Machines being deleted are adopted too (as Cluster API's
		// getAndAdoptMachinesForMachineSet does): the set counts them
		// until they are gone, and does not replace them before.
		if metav1.GetControllerOf(m) != nil || !Matches(ms, m) {
			continue
		}
		if contested(s.Overlaps, m) {
			s.Contested = append(s.Contested, m)
			continue
		}
		s.Orphans = append(s.Orphans, m)
	}
	sortByName(s.Owned)
	sortByName(s.Orphans)
	sortByName(s.Contested)
	sortByName(s.Strays)
}

// controlledBy lists the Machines whose controller is the set, through the
// index, or by a filtered list where the client has none (krtt explain).
func (o *Observer) controlledBy(ctx context.Context, ms *clusterv1.MachineSet) ([]*clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	if err := o.Client.List(ctx, list, client.InNamespace(ms.Namespace), client.MatchingFields{ControllerUIDIndex: string(ms.UID)}); err != nil {
		if err := o.Client.List(ctx, list, client.InNamespace(ms.Namespace)); err != nil {
			return nil, fmt.Errorf("list Machines: %w", err)
		}
	}
	var out []*clusterv1.Machine
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == ms.UID {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

func sortByName(ms []*clusterv1.Machine) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
}

// Matches reports whether a Machine belongs to the set: it carries every
// selector label and names the set's Cluster.
func Matches(ms *clusterv1.MachineSet, m *clusterv1.Machine) bool {
	if m.Spec.ClusterName != ms.Spec.ClusterName {
		return false
	}
	for k, v := range ms.Spec.Selector.MatchLabels {
		if got, ok := m.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Failed reports whether a Machine failed for good: a failure reason (the
// provider or the Machine controller gave up) or the Failed phase.
func Failed(m *clusterv1.Machine) bool {
	return m.Status.FailureReason != nil || m.Status.Phase == clusterv1.MachinePhaseFailed
}

// RemediationRequested reports whether a health checker outside krtt (as
// Cluster API's MachineHealthCheck) asks the Machine's owner to remediate
// it: HealthCheckSucceeded and OwnerRemediated both False
// (collections.IsUnhealthyAndOwnerRemediated).
func RemediationRequested(m *clusterv1.Machine) bool {
	return meta.IsStatusConditionFalse(m.Status.Conditions, clusterv1.HealthCheckSucceededCondition) &&
		meta.IsStatusConditionFalse(m.Status.Conditions, clusterv1.OwnerRemediatedCondition)
}

// recovered are the live Machines whose remediation mark outlived their
// health check failure (Cluster API reconcileUnhealthyMachines removes it).
func recovered(owned []*clusterv1.Machine) []*clusterv1.Machine {
	var out []*clusterv1.Machine
	for _, m := range owned {
		if m.DeletionTimestamp.IsZero() &&
			meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.HealthCheckSucceededCondition) &&
			meta.IsStatusConditionFalse(m.Status.Conditions, clusterv1.OwnerRemediatedCondition) {
			out = append(out, m)
		}
	}
	return out
}

// NeedsReplacement reports whether the set deletes the Machine to replace
// it: it failed, or a health checker asks for its remediation.
func NeedsReplacement(m *clusterv1.Machine) bool { return Failed(m) || RemediationRequested(m) }

// Unhealthy reports whether a scale-down should take the Machine before the
// healthy ones. As Cluster API's isMachineHealthy: it has no Node yet, or
// NodeHealthy or HealthCheckSucceeded is False (Unknown, as while its
// workload cluster cannot be reached, makes no assumption); krtt adds a
// failed Machine, which Cluster API has no phase for.
func Unhealthy(m *clusterv1.Machine) bool {
	if Failed(m) || m.Status.NodeRef == nil || m.Status.NodeRef.Name == "" {
		return true
	}
	for _, t := range []string{clusterv1.NodeHealthyCondition, clusterv1.HealthCheckSucceededCondition} {
		if meta.IsStatusConditionFalse(m.Status.Conditions, t) {
			return true
		}
	}
	return false
}

// inFlight: a Machine being deleted as a replacement the set made: a
// failed one, or one a health checker marked that the set said it deletes
// (OwnerRemediated reason MachineDeleting, as Cluster API counts them in
// reconcileUnhealthyMachines). A marked Machine deleted by someone else, or
// by a scale-down, takes no maxInFlight token.
func inFlight(m *clusterv1.Machine) bool {
	if Failed(m) {
		return true
	}
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.OwnerRemediatedCondition)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == clusterv1.RemediationMachineDeletingReason
}

// count classifies the set's Machines for the facts and messages.
func count(owned []*clusterv1.Machine, ms *clusterv1.MachineSet) Counts {
	var c Counts
	c.Total = len(owned)
	for _, m := range owned {
		if !m.DeletionTimestamp.IsZero() {
			c.Deleting++
			if inFlight(m) {
				c.InFlight++
			}
			continue
		}
		c.Live++
		if Failed(m) {
			c.Failed++
		}
		switch {
		case NeedsReplacement(m):
			c.Replace++
			if !Failed(m) {
				c.Marked++
			}
		default:
			c.Active++
		}
		if fullyLabeled(ms, m) {
			c.FullyLabeled++
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.ReadyCondition) {
			c.Ready++
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.AvailableCondition) {
			c.Available++
		}
	}
	return c
}

// upToDate counts a deployment's set's Machines whose UpToDate condition is
// True, being deleted or not, as Cluster API does. A stand-alone set's
// Machines have no such condition (Cluster API's set counts none): it counts
// its live Machines in sync with its template in place.
func upToDate(ms *clusterv1.MachineSet, owned, outOfSync []*clusterv1.Machine) int {
	if ref := metav1.GetControllerOf(ms); ref != nil && ref.Kind == "MachineDeployment" {
		n := 0
		for _, m := range owned {
			if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.UpToDateCondition) {
				n++
			}
		}
		return n
	}
	n := 0
	for _, m := range owned {
		if m.DeletionTimestamp.IsZero() {
			n++
		}
	}
	for _, m := range outOfSync {
		if m.DeletionTimestamp.IsZero() {
			n--
		}
	}
	return n
}

func fullyLabeled(ms *clusterv1.MachineSet, m *clusterv1.Machine) bool {
	for k, v := range ms.Spec.Template.ObjectMeta.Labels {
		if m.Labels[k] != v {
			return false
		}
	}
	return true
}

// MaxUnhealthy is how many failed Machines the set tolerates before it stops
// replacing them: spec.remediation.maxUnhealthy of spec.replicas (100% when
// unset; a percentage rounds down).
func (s *Scope) MaxUnhealthy() int {
	v := intstr.FromString("100%")
	if s.Set.Spec.Remediation.MaxUnhealthy != nil {
		v = *s.Set.Spec.Remediation.MaxUnhealthy
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, s.Replicas(), false)
	if err != nil {
		return s.Replicas()
	}
	return n
}

// RemediationTokens is how many more Machines the set may delete to replace
// them now: maxInFlight less those being replaced already, never below 0.
func (s *Scope) RemediationTokens() int { return max(s.MaxInFlight()-s.Counts.InFlight, 0) }

// MaxInFlight is spec.remediation.maxInFlight: a number, or a percentage of
// spec.replicas rounded up (Cluster API reconcileUnhealthyMachines); 1 when
// unset, and at least 1 (a percentage of a set of no replicas).
func (s *Scope) MaxInFlight() int {
	p := s.Set.Spec.Remediation.MaxInFlight
	if p == nil {
		return 1
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(p, s.Replicas(), true)
	if err != nil || n < 1 {
		return 1
	}
	return n
}
