package machineset

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// registerStatus registers what every reconcile mirrors from the observed
// Machines: the replica counts, the selector for the scale subresource, the
// conditions' default (rows that fire write theirs over them) and the
// MachinesReady summary.
func registerStatus(r *engine.Registry[*Scope]) {
	r.Mirror("replicaCounts", "status.replicas (every Machine of the set, being deleted included), readyReplicas, availableReplicas, upToDateReplicas, fullyLabeledReplicas, failedReplicas, versions (the Machines by the Kubernetes version they run) and selector from the set's Machines.", mirrorCounts)
	r.Mirror("replicaConditions", "ScalingUp, ScalingDown, Deleting and Remediating say what the counts show (ScalingUp also that a scale-up is or would be blocked by templates that do not exist); Paused is False unless a row says otherwise.", mirrorConditions)
	r.Summary(clusterv1.MachinesReadyCondition, "The aggregate of the Machines' Ready condition, those being deleted included, as Cluster API's setMachinesReadyCondition (NoReplicas, Ready, NotReady, ReadyUnknown, with a line per message naming the Machines); Unknown (ClusterNotFound) for a set without Machines whose Cluster does not exist.", summarizeMachinesReady)
	r.Summary(clusterv1.MachinesUpToDateCondition, "For a set of a MachineDeployment, the aggregate of its Machines' UpToDate condition as Cluster API's setMachinesUpToDateCondition (NoReplicas, UpToDate, NotUpToDate, UpToDateUnknown; a Machine younger than 10s without the condition left out); absent on a stand-alone set, whose Machines have none.", summarizeMachinesUpToDate)
}

// summarizeMachinesUpToDate: Cluster API's stand-alone set would report its
// Machines' missing conditions as Unknown for good; krtt leaves the
// condition out there (upToDateReplicas says how many follow the template).
func summarizeMachinesUpToDate(s *Scope) {
	if ref := metav1.GetControllerOf(s.Set); ref == nil || ref.Kind != "MachineDeployment" {
		meta.RemoveStatusCondition(&s.Set.Status.Conditions, clusterv1.MachinesUpToDateCondition)
		return
	}
	meta.SetStatusCondition(&s.Set.Status.Conditions,
		reconciler.AggregateUpToDate(s.Owned, clusterv1.MachinesUpToDateCondition, s.Now, s.Set.Generation))
}

func mirrorCounts(s *Scope) {
	st, c := &s.Set.Status, s.Counts
	st.Replicas = int32(c.Total)
	st.ReadyReplicas = int32(c.Ready)
	st.AvailableReplicas = int32(c.Available)
	st.UpToDateReplicas = int32(c.UpToDate)
	st.FullyLabeledReplicas = int32(c.FullyLabeled)
	st.FailedReplicas = int32(c.Failed)
	st.Versions = reconciler.MachineVersions(s.Owned)
	st.Selector = labels.SelectorFromSet(s.Set.Spec.Selector.MatchLabels).String()
}

// blockedBy words the templates that do not exist as Cluster API's
// setScalingUpCondition appends them to ScalingUp: as a list item while a
// scale-up is due ("is blocked because:\n* K does not exist"), inline while
// none is ("would be blocked because K does not exist").
func blockedBy(missingKinds []string, scalingUp bool) string {
	kinds := contract.MissingKinds(missingKinds)
	switch {
	case kinds == "":
		return ""
	case scalingUp:
		return "because:\n* " + kinds
	}
	return "because " + kinds
}

func setCondition(s *Scope, t string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&s.Set.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: s.Set.Generation,
	})
}

// mirrorConditions words ScalingUp, ScalingDown and Deleting as Cluster
// API's setScalingUpCondition, setScalingDownCondition and
// setDeletingCondition do (a set being deleted wants 0 Machines); rows that
// hold a scale-up (R04, R12) say why in ScalingUp.
func mirrorConditions(s *Scope) {
	c := s.Counts
	stale := reconciler.StaleMachines(s.Owned, s.Now)
	up, down := reconciler.ScalingConditions(s.Set, c.Total, s.Replicas(), stale, blockedBy(s.MissingKinds, c.Total < s.Replicas()))
	meta.SetStatusCondition(&s.Set.Status.Conditions, up)
	meta.SetStatusCondition(&s.Set.Status.Conditions, down)
	meta.SetStatusCondition(&s.Set.Status.Conditions, reconciler.DeletingCondition(s.Set, c.Total, 0, stale))
	// Machines a health checker marked are said as Cluster API's
	// setRemediatingCondition says them; those krtt replaces because they
	// failed (status.failureReason), which it has no word for, are counted.
	remediating := reconciler.Remediating(s.Owned, " by MachineSet", s.Set.Generation)
	if remediating.Status != metav1.ConditionTrue && (c.Replace > 0 || c.InFlight > 0) {
		remediating.Status, remediating.Reason = metav1.ConditionTrue, reconciler.RemediatingReasons.Issue
		remediating.Message = fmt.Sprintf("%d failed Machine(s) wait, %d being replaced", c.Replace, c.InFlight)
	}
	meta.SetStatusCondition(&s.Set.Status.Conditions, remediating)
	setCondition(s, clusterv1.PausedCondition, metav1.ConditionFalse, "NotPaused", "")
}

// describeMissingCluster names the Cluster a MachineSet waits for (row
// S09): a typo in spec.clusterName is the usual cause.
func describeMissingCluster(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("The Cluster %s named in spec.clusterName does not exist in namespace %s; no Machine is created until it does",
		s.Set.Spec.ClusterName, s.Set.Namespace)
}

func summarizeMachinesReady(s *Scope) {
	if s.Cluster == nil && len(s.Owned) == 0 {
		// "0 of 0 Machines Ready" would read as a healthy set; it has no
		// Machine because its Cluster is missing.
		setCondition(s, clusterv1.MachinesReadyCondition, metav1.ConditionUnknown, "ClusterNotFound",
			fmt.Sprintf("The set has no Machine: the Cluster %s named in spec.clusterName does not exist", s.Set.Spec.ClusterName))
		return
	}
	meta.SetStatusCondition(&s.Set.Status.Conditions,
		reconciler.AggregateMachines(s.Owned, clusterv1.ReadyCondition, clusterv1.MachinesReadyCondition, reconciler.ReadyReasons, s.Set.Generation))
}
