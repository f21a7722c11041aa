package machine

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/krtt-dev/krtt/actions/contract"
	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// registerStatus binds the status fields the tables name to the Machine's
// status, and registers what every reconcile mirrors from the observed world:
// the provider objects' and the Node's conditions, the certificates expiry,
// and the Ready summary. They read the snapshot Observe took; lifecycle
// decisions stay in the rows.
func registerStatus(r *engine.Registry[*Scope]) {
	r.StatusField("bootstrapDataSecretCreated", "status.initialization.bootstrapDataSecretCreated", func(s *Scope, v string) {
		s.Machine.Status.Initialization.BootstrapDataSecretCreated = ptr.To(v == "true")
	})
	r.StatusField("infrastructureProvisioned", "status.initialization.infrastructureProvisioned", func(s *Scope, v string) {
		s.Machine.Status.Initialization.InfrastructureProvisioned = ptr.To(v == "true")
	})
	r.StatusField("failureReason", "status.failureReason", func(s *Scope, v string) { s.Machine.Status.FailureReason = ptr.To(v) })
	r.StatusField("failureMessage", "status.failureMessage", func(s *Scope, v string) { s.Machine.Status.FailureMessage = ptr.To(v) })
	r.Mirror("providerConditions", "BootstrapConfigReady, InfrastructureReady, NodeReady and NodeHealthy mirror the bootstrap object and the infrastructure object (its Ready condition, an empty reason read as Ready when True and NoReasonReported otherwise; without one, by the Machine's status.initialization: True (Ready), else False (NotReady, \"<Kind> status.initialization.dataSecretCreated is false\" or \"<Kind> status.initialization.provisioned is false\"); False when it does not exist: ObjectDoesNotExist, \"<Kind> does not exist\"; ObjectDeleted, \"<Kind> has been deleted\" once it is gone after it made the data secret or was provisioned, \"while the Machine still exists\" for infrastructure lost before the deletion) and the Node (NodeReady: the Node's Ready, reason NodeReady, NodeNotReady or NodeReadyUnknown; NodeHealthy: Cluster API's summarizeNodeConditions over Ready, MemoryPressure, DiskPressure, PIDPressure and the types of spec.health.nodeConditions, NodeNotHealthy when one is not fine, NodeHealthyUnknown when one is unknown or not yet reported, a \"* Node.<Type>: <message>\" line for each, \"* Node.AllConditions\" when all say the same; while the Node side is read and no Node is seen: False (NodeDeleted, \"Node <name> has been deleted while the Machine still exists\", or \"has been deleted\" during the deletion) once the Node named in status.nodeRef is gone, Unknown (NodeDoesNotExist) while the Machine is being deleted, else Unknown (InspectionFailed) \"Waiting for <Kind> to report spec.providerID\", then \"Waiting for a Node with spec.providerID <id> to exist\"); Paused and Deleting are False unless a row says otherwise; Updating is always False (NotUpdating).", mirrorConditions)
	r.Mirror("certificatesExpiry", "status.certificatesExpiryDate from the certificates-expiry annotation of the Machine or its bootstrap object (control-plane Machines only); CertificatesExpiryKnown=False names an annotation that is not an RFC 3339 date.", mirrorCertificatesExpiry)
	r.Mirror("nodeInfo", "status.nodeInfo is the Node's status.nodeInfo whenever the Node is seen (Cluster API reconcileNode).", mirrorNodeInfo)
	r.Mirror("upToDate", "UpToDate, for a Machine whose MachineSet belongs to a MachineDeployment, as Cluster API's setUpToDateCondition: False (NotUpToDate) naming each rollout field (version, bootstrap, infrastructure, failure domain) in which the set's template differs from the deployment's, or an expired spec.rollout.after; False (Updating) while the Node's kubelet runs another version than spec.version; True (UpToDate) otherwise; Unknown (InternalError) while its MachineSet or MachineDeployment cannot be read. Left alone for other Machines.", mirrorUpToDate)
	r.Mirror("deletionStep", "status.deletion.step is the Machine's state while it is being deleted and empty otherwise (the DELETING column of kubectl get).", mirrorDeletionStep)
	r.Summary(clusterv1.ReadyCondition, "True (Ready) when the Machine is not being deleted and BootstrapConfigReady, InfrastructureReady, NodeHealthy, (when set) HealthCheckSucceeded and the conditions of spec.readinessGates are fine (True; False for a Negative gate); otherwise NotReady (ReadyUnknown when none is False) naming each that is not in the gates' order, a message of bullets indented below its condition, or the deletion step; Failed for a failed Machine.", summarizeReady)
	r.Summary(clusterv1.AvailableCondition, "True (Available) once Ready has been True for spec.minReadySeconds; False (WaitingForMinReadySeconds) before, False (NotReady) while Ready is not True.", summarizeAvailable)
}

func setCondition(m *clusterv1.Machine, t string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: m.Generation,
	})
}

func mirrorConditions(s *Scope) {
	m := s.Machine
	switch {
	case m.Spec.Bootstrap.ConfigRef == nil:
		// No message, as Cluster API's setBootstrapReadyCondition.
		setCondition(m, clusterv1.BootstrapConfigReadyCondition, metav1.ConditionTrue, "DataSecretProvided", "")
	case s.Bootstrap == nil && s.Err == nil:
		// The object configRef names is gone or was never there. A data
		// secret the user gave (or one copied before) lets the Machine go
		// on without it, so no row stops for it: the condition is the only
		// place that says so (Cluster API setBootstrapReadyCondition).
		kind := m.Spec.Bootstrap.ConfigRef.Kind
		if !m.DeletionTimestamp.IsZero() && ptr.Deref(m.Status.Initialization.BootstrapDataSecretCreated, false) {
			setCondition(m, clusterv1.BootstrapConfigReadyCondition, metav1.ConditionFalse, clusterv1.ObjectDeletedReason, kind+" has been deleted")
		} else {
			setCondition(m, clusterv1.BootstrapConfigReadyCondition, metav1.ConditionFalse, clusterv1.ObjectDoesNotExistReason, kind+" does not exist")
		}
	case s.Bootstrap != nil:
		mirrorProviderReady(m, clusterv1.BootstrapConfigReadyCondition, contract.ReadyCondition(s.Bootstrap),
			ptr.Deref(m.Status.Initialization.BootstrapDataSecretCreated, false),
			m.Spec.Bootstrap.ConfigRef.Kind+" status.initialization.dataSecretCreated is false")
	}
	switch {
	case s.Infrastructure != nil:
		mirrorProviderReady(m, clusterv1.InfrastructureReadyCondition, contract.ReadyCondition(s.Infrastructure),
			ptr.Deref(m.Status.Initialization.InfrastructureProvisioned, false),
			m.Spec.InfrastructureRef.Kind+" status.initialization.provisioned is false")
	case s.Err == nil:
		// Said from the first reconcile, deletion included, as Cluster
		// API's setInfrastructureReadyCondition; rows N20 and E03 decide
		// what the Machine does about it.
		reason, msg := infrastructureMissing(m)
		setCondition(m, clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, reason, msg)
	}
	// When the workload cluster cannot be seen (no NodeClient) the Node
	// conditions are not mirrored: the workloadCluster rows say why.
	if n := s.Node(); s.NodeClient != nil && n == nil && s.Err == nil && len(s.Nodes) == 0 {
		status, reason, msg := nodeMissing(s)
		setCondition(m, clusterv1.NodeReadyCondition, status, reason, msg)
		setCondition(m, clusterv1.NodeHealthyCondition, status, reason, msg)
	} else if n != nil {
		// NodeReady in Cluster API's words (setNodeHealthyAndReadyConditions):
		// its own reasons, and the Node's message when it is not Ready.
		switch ready := nodeCondition(n, corev1.NodeReady); {
		case ready == nil:
			setCondition(m, clusterv1.NodeReadyCondition, metav1.ConditionUnknown, "NodeReadyUnknown", "* Node.Ready: Condition not yet reported")
		case ready.Status == corev1.ConditionTrue:
			setCondition(m, clusterv1.NodeReadyCondition, metav1.ConditionTrue, "NodeReady", "")
		default:
			reason := "NodeNotReady"
			if ready.Status != corev1.ConditionFalse {
				reason = "NodeReadyUnknown"
			}
			msg := ""
			if ready.Message != "" {
				msg = "* Node.Ready: " + ready.Message
			}
			setCondition(m, clusterv1.NodeReadyCondition, metav1.ConditionStatus(ready.Status), reason, msg)
		}
		healthy, reason, msg := nodeHealth(n, healthNodeConditions(m))
		setCondition(m, clusterv1.NodeHealthyCondition, healthy, reason, msg)
	}
	setCondition(m, clusterv1.PausedCondition, metav1.ConditionFalse, "NotPaused", "")
	setCondition(m, clusterv1.UpdatingCondition, metav1.ConditionFalse, clusterv1.NotUpdatingReason, "")
	if m.DeletionTimestamp.IsZero() {
		setCondition(m, clusterv1.DeletingCondition, metav1.ConditionFalse, clusterv1.NotDeletingReason, "")
	}
}

// nodeMissing words NodeReady and NodeHealthy while no Node is seen (the
// Node side read, no error). The Node named in nodeRef is gone: said on
// every reconcile, deletion included, so no stale Node condition outlives
// it. Otherwise, as Cluster API's setNodeHealthyAndReadyConditions: a
// Machine being deleted has no Node; one that is not waits for the
// infrastructure provider's providerID, then for a Node with it.
func nodeMissing(s *Scope) (metav1.ConditionStatus, string, string) {
	m := s.Machine
	switch {
	case hasNodeRef(s):
		if !m.DeletionTimestamp.IsZero() {
			return metav1.ConditionFalse, clusterv1.NodeDeletedReason, "Node " + m.Status.NodeRef.Name + " has been deleted"
		}
		return metav1.ConditionFalse, clusterv1.NodeDeletedReason, "Node " + m.Status.NodeRef.Name + " has been deleted while the Machine still exists"
	case !m.DeletionTimestamp.IsZero():
		return metav1.ConditionUnknown, clusterv1.NodeDoesNotExistReason, "Node does not exist"
	case hasProviderID(s):
		return metav1.ConditionUnknown, clusterv1.NodeInspectionFailedReason, fmt.Sprintf("Waiting for a Node with spec.providerID %s to exist", *m.Spec.ProviderID)
	}
	return metav1.ConditionUnknown, clusterv1.NodeInspectionFailedReason, fmt.Sprintf("Waiting for %s to report spec.providerID", m.Spec.InfrastructureRef.Kind)
}

// mirrorProviderReady writes condition t from a provider object's Ready
// condition c, as Cluster API's mirror does: its status, reason and message,
// an empty reason read as Ready when True and NoReasonReported otherwise.
// An object that reports no Ready condition is judged by the Machine's own
// status.initialization flag (done), which the rows set once the object
// did its part: True (Ready), or False (NotReady) saying notDone.
func mirrorProviderReady(m *clusterv1.Machine, t string, c *metav1.Condition, done bool, notDone string) {
	switch {
	case c != nil:
		setCondition(m, t, c.Status, contract.MirroredReason(c, clusterv1.ProviderReadyReason), c.Message)
	case done:
		setCondition(m, t, metav1.ConditionTrue, clusterv1.ProviderReadyReason, "")
	default:
		setCondition(m, t, metav1.ConditionFalse, clusterv1.ProviderNotReadyReason, notDone)
	}
}

// infrastructureMissing words InfrastructureReady for an infrastructure
// object that does not exist: deleted once it had been provisioned (while
// the Machine is being deleted, or not), else not there (yet).
func infrastructureMissing(m *clusterv1.Machine) (reason, message string) {
	kind := m.Spec.InfrastructureRef.Kind
	switch {
	case !ptr.Deref(m.Status.Initialization.InfrastructureProvisioned, false):
		return clusterv1.ObjectDoesNotExistReason, kind + " does not exist"
	case m.DeletionTimestamp.IsZero():
		return clusterv1.ObjectDeletedReason, kind + " has been deleted while the Machine still exists"
	}
	return clusterv1.ObjectDeletedReason, kind + " has been deleted"
}

// describeDeletedInfrastructure gives row E03 the words of
// InfrastructureReady for the infrastructure object it lost.
func describeDeletedInfrastructure(_ context.Context, s *Scope) engine.Outcome {
	_, msg := infrastructureMissing(s.Machine)
	return engine.OKf("%s", msg)
}

// mirrorNodeInfo keeps the last value seen while the Node cannot be seen
// (its workload cluster unreachable, or the Node gone): what the Machine ran
// stays readable.
func mirrorNodeInfo(s *Scope) {
	if n := s.Node(); n != nil {
		s.Machine.Status.NodeInfo = n.Status.NodeInfo.DeepCopy()
	}
}

// mirrorDeletionStep runs after the kit recorded the row's target state,
// so the column names the step the Machine is in now.
func mirrorDeletionStep(s *Scope) {
	m := s.Machine
	m.Status.Deletion.Step = ""
	if !m.DeletionTimestamp.IsZero() {
		m.Status.Deletion.Step = m.Status.State
	}
}

func nodeCondition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// summarizeReady words Ready as Cluster API's setReadyCondition: NotReady
// (or ReadyUnknown when nothing is False) with a "* <Type>: <message>" line
// for each of BootstrapConfigReady, InfrastructureReady, NodeHealthy,
// HealthCheckSucceeded when a health checker set it, and the conditions of
// spec.readinessGates that are not fine (one not yet reported is Unknown, as
// in Cluster API's summaries); a Machine being deleted says which step it is
// in. A failed Machine, which Cluster API has no phase for, says its failure
// (reason Failed).
func summarizeReady(s *Scope) {
	m := s.Machine
	if m.Status.FailureReason != nil {
		msg := *m.Status.FailureReason
		if m.Status.FailureMessage != nil {
			msg = *m.Status.FailureMessage
		}
		setCondition(m, clusterv1.ReadyCondition, metav1.ConditionFalse, "Failed", msg)
		return
	}
	// Every Machine reconcile summarizes: a buffer on the stack holds the
	// gates and a few readiness gates without an allocation.
	var buf [9]reconciler.Gate
	gates, conds := buf[:0], m.Status.Conditions
	if !m.DeletionTimestamp.IsZero() {
		// Cluster API's setReadyCondition while deleting: Deleting first,
		// worded by calculateDeletingConditionForSummary; provider objects
		// and a Node already gone are fine (its custom merge strategy).
		conds = append([]metav1.Condition{deletingForSummary(m, s.Now)}, conds...)
		gates = append(gates, reconciler.Gate{Type: clusterv1.DeletingCondition, Negative: true})
	}
	gates = append(gates,
		reconciler.Gate{Type: clusterv1.BootstrapConfigReadyCondition, Fine: goneWhileDeleting(m, objectGoneReasons)},
		reconciler.Gate{Type: clusterv1.InfrastructureReadyCondition, Fine: goneWhileDeleting(m, objectGoneReasons)},
		reconciler.Gate{Type: clusterv1.NodeHealthyCondition, Fine: goneWhileDeleting(m, nodeGoneReasons)},
		reconciler.Gate{Type: clusterv1.HealthCheckSucceededCondition, Optional: true})
	for _, g := range m.Spec.ReadinessGates {
		gates = reconciler.AddGate(gates, reconciler.Gate{Type: g.ConditionType, Negative: g.Polarity == clusterv1.NegativePolarity})
	}
	status, msg := reconciler.Summarize(conds, gates...)
	switch status {
	case metav1.ConditionTrue:
		// The kit stamps a condition that changes with the reconcile's
		// clock, which is the scope's; summarizeAvailable counts from it.
		s.readySince = s.Now
		if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.ReadyCondition); c != nil && c.Status == metav1.ConditionTrue {
			s.readySince = c.LastTransitionTime.Time
		}
		setCondition(m, clusterv1.ReadyCondition, metav1.ConditionTrue, "Ready", "")
	case metav1.ConditionUnknown:
		setCondition(m, clusterv1.ReadyCondition, metav1.ConditionUnknown, "ReadyUnknown", msg)
	default:
		setCondition(m, clusterv1.ReadyCondition, metav1.ConditionFalse, "NotReady", msg)
	}
}

var (
	objectGoneReasons = []string{clusterv1.ObjectDeletedReason, clusterv1.ObjectDoesNotExistReason}
	nodeGoneReasons   = []string{clusterv1.NodeDeletedReason, clusterv1.NodeDoesNotExistReason}
)

// goneWhileDeleting gives the reasons that say an object is gone, for a
// Machine being deleted only: before, a lost object is an issue.
func goneWhileDeleting(m *clusterv1.Machine, reasons []string) []string {
	if m.DeletionTimestamp.IsZero() {
		return nil
	}
	return reasons
}

// deletingForSummary is the Deleting condition as Ready tells it (Cluster
// API's calculateDeletingConditionForSummary): the step, and past 15
// minutes how long, with what likely holds a drain running for over 5.
// It is found first, so it hides the Machine's own Deleting condition.
func deletingForSummary(m *clusterv1.Machine, now time.Time) metav1.Condition {
	stage := m.Status.State
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition); c != nil && c.Status == metav1.ConditionTrue {
		stage = c.Reason
	}
	msg := "Machine deletion in progress, stage: " + stage
	if now.Sub(m.DeletionTimestamp.Time) > reconciler.StaleDeletion {
		msg = "Machine deletion in progress since more than 15m, stage: " + stage
	}
	if why := reconciler.DrainDelays(m, now); len(why) > 0 {
		msg += ", delay likely due to " + strings.Join(why, ", ")
	}
	return metav1.Condition{Type: clusterv1.DeletingCondition, Status: metav1.ConditionTrue, Reason: clusterv1.DeletingReason, Message: msg}
}

// mirrorUpToDate is Cluster API's setUpToDateCondition. It compares the
// set's template, not the Machine, with the deployment's, as the deployment
// does when it decides on a rollout, so the two never disagree. A Machine
// without a version says nothing about its kubelet's (Cluster API's
// compares even an empty spec.version).
func mirrorUpToDate(s *Scope) {
	m, ms, md := s.Machine, s.Set, s.Deployment
	if s.OwnersErr != nil {
		// Said where a user looks; the lifecycle goes on.
		setCondition(m, clusterv1.UpToDateCondition, metav1.ConditionUnknown, "InternalError", "Cannot read the Machine's owners: "+s.OwnersErr.Error())
		return
	}
	if ms == nil || md == nil {
		return
	}
	diffs := uptodate.Differences(uptodate.Of(&ms.Spec.Template.Spec), uptodate.Of(&md.Spec.Template.Spec))
	// A set named after the deployment's current hash was made for this
	// rollout.after, whatever the API server's clock put in its
	// creationTimestamp: the deployment does not roll it out either.
	if after := md.Spec.Rollout.After; after != nil && !s.Now.Before(after.Time) && ms.CreationTimestamp.Before(after) &&
		ms.Labels[clusterv1.MachineTemplateHashLabel] != uptodate.Hash(md, s.Now) {
		diffs = append(diffs, "MachineDeployment spec.rolloutAfter expired")
	}
	if len(diffs) > 0 {
		setCondition(m, clusterv1.UpToDateCondition, metav1.ConditionFalse, "NotUpToDate", "* "+strings.Join(diffs, "\n* "))
		return
	}
	if info := m.Status.NodeInfo; info != nil && info.KubeletVersion != "" && m.Spec.Version != "" && info.KubeletVersion != m.Spec.Version {
		setCondition(m, clusterv1.UpToDateCondition, metav1.ConditionFalse, "Updating",
			fmt.Sprintf("* Node.status.nodeInfo.kubeletVersion %s, %s required", info.KubeletVersion, m.Spec.Version))
		return
	}
	setCondition(m, clusterv1.UpToDateCondition, metav1.ConditionTrue, "UpToDate", "")
}

// summarizeAvailable is Cluster API's setAvailableCondition: available once
// Ready for spec.minReadySeconds. Waking the Machine when that time comes is
// a row's business (availabilityPending).
func summarizeAvailable(s *Scope) {
	m := s.Machine
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionTrue {
		setCondition(m, clusterv1.AvailableCondition, metav1.ConditionFalse, "NotReady", "")
		return
	}
	since := s.readySince
	if since.IsZero() {
		since = c.LastTransitionTime.Time
	}
	if s.Now.Before(availableAt(m, since)) {
		setCondition(m, clusterv1.AvailableCondition, metav1.ConditionFalse, "WaitingForMinReadySeconds", "")
		return
	}
	setCondition(m, clusterv1.AvailableCondition, metav1.ConditionTrue, "Available", "")
}

// availableAt is when a Machine Ready since readySince becomes Available.
func availableAt(m *clusterv1.Machine, readySince time.Time) time.Time {
	return readySince.Add(time.Duration(m.Spec.MinReadySeconds) * time.Second)
}

// availabilityPending: the Machine's stored Ready condition is True, but not
// yet for spec.minReadySeconds.
func availabilityPending(s *Scope) bool {
	return !availableAtOf(s).IsZero()
}

// availableAtOf is when a Machine waiting for spec.minReadySeconds becomes
// Available (its stored Ready condition's transition plus the seconds);
// zero when it does not wait for that.
func availableAtOf(s *Scope) time.Time {
	if s.Machine == nil || s.Machine.Spec.MinReadySeconds == 0 {
		return time.Time{}
	}
	c := meta.FindStatusCondition(s.Machine.Status.Conditions, clusterv1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionTrue {
		return time.Time{}
	}
	if at := availableAt(s.Machine, c.LastTransitionTime.Time); s.Now.Before(at) {
		return at
	}
	return time.Time{}
}

// mirrorCertificatesExpiry: only control-plane Machines carry certificates
// whose expiry matters (as in Cluster API); a date that does not parse is
// left out rather than guessed, and said so in a condition.
func mirrorCertificatesExpiry(s *Scope) {
	m := s.Machine
	m.Status.CertificatesExpiryDate = nil
	// Removing copies the list; most Machines never had the condition.
	if meta.FindStatusCondition(m.Status.Conditions, clusterv1.CertificatesExpiryKnownCondition) != nil {
		meta.RemoveStatusCondition(&m.Status.Conditions, clusterv1.CertificatesExpiryKnownCondition)
	}
	if _, cp := m.Labels[clusterv1.ControlPlaneLabel]; !cp {
		return
	}
	raw, from := m.Annotations[clusterv1.CertificatesExpiryAnnotation], "the Machine"
	if raw == "" && s.Bootstrap != nil {
		raw, from = s.Bootstrap.GetAnnotations()[clusterv1.CertificatesExpiryAnnotation], "the bootstrap object"
	}
	if raw == "" {
		return
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		setCondition(m, clusterv1.CertificatesExpiryKnownCondition, metav1.ConditionFalse, "InvalidDate",
			fmt.Sprintf("annotation %s on %s is %q, not an RFC 3339 date (such as 2027-01-31T00:00:00Z); status.certificatesExpiryDate is left unset",
				clusterv1.CertificatesExpiryAnnotation, from, raw))
		return
	}
	m.Status.CertificatesExpiryDate = &metav1.Time{Time: t}
}
