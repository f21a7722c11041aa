package machinedeployment

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// registerStatus registers what every reconcile mirrors from the observed
// MachineSets and Machines.
func registerStatus(r *engine.Registry[*Scope]) {
	r.Mirror("phase", "status.phase compares the Machines (being deleted included) with spec.replicas: Running when equal, ScalingUp when fewer, ScalingDown when more or while the deployment is deleted, Unknown when they could not be read.", mirrorPhase)
	r.Mirror("replicaCounts", "status.replicas (every Machine, being deleted included), updatedReplicas (the current MachineSet's Machines not being deleted), readyReplicas, availableReplicas, upToDateReplicas (Machines whose UpToDate condition is True), unavailableReplicas, versions (the Machines by the Kubernetes version they run), selector, and progressTime when the counts or the generation changed.", mirrorCounts)
	r.Mirror("availability", "Available is Unknown (WaitingForAvailableReplicasSet) while the deployment has no MachineSet, as Cluster API leaves status.availableReplicas unset then; True when at least spec.replicas - maxUnavailable Machines are available (spec.replicas for Recreate and OnDelete); Paused is False unless a row says otherwise.", mirrorConditions)
	r.Mirror("machineConditions", "ScalingUp and ScalingDown compare the Machines with spec.replicas (0 while deleting; a missing template blocks the scale-up); Deleting says how many Machines (or MachineSets) a deployment being deleted waits for, each with the Machines in deletion over 15 minutes; RollingOut counts the Machines not of the current MachineSet and lists below the lines of their UpToDate=False messages, each once, a version change first, as Cluster API's setRollingOutCondition; MachinesUpToDate aggregates the Machines' UpToDate condition as Cluster API's (a Machine younger than 10s without it left out); MachinesReady aggregates the Machines' Ready condition, those being deleted included, as Cluster API's; Remediating is Cluster API's setRemediatingCondition over the Machines.", mirrorMachineConditions)
}

// mirrorPhase is Cluster API's setPhase: a count, not a state, so a surge
// shows ScalingDown and an OnDelete deployment waiting for users Running.
func mirrorPhase(s *Scope) {
	t, st := s.Totals(), &s.MD.Status
	switch {
	case s.Err != nil:
		st.Phase = "Unknown"
	case !s.MD.DeletionTimestamp.IsZero():
		st.Phase = "ScalingDown"
	case t.Total == s.Replicas():
		st.Phase = "Running"
	case t.Total < s.Replicas():
		st.Phase = "ScalingUp"
	default:
		st.Phase = "ScalingDown"
	}
}

func mirrorCounts(s *Scope) {
	st, t := &s.MD.Status, s.Totals()
	if s.Progressed {
		st.ProgressTime = &metav1.Time{Time: s.Now}
	}
	st.Replicas = int32(t.Total)
	st.UpdatedReplicas = 0
	if s.New != nil {
		st.UpdatedReplicas = int32(s.New.Live)
	}
	st.ReadyReplicas = int32(t.Ready)
	st.AvailableReplicas = int32(t.Available)
	st.UpToDateReplicas = int32(t.UpToDate)
	st.UnavailableReplicas = int32(max(0, s.Replicas()-t.Available))
	st.Versions = reconciler.MachineVersions(s.Machines)
	st.Selector = labels.SelectorFromSet(s.MD.Spec.Selector.MatchLabels).String()
}

func setCondition(s *Scope, t string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&s.MD.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: s.MD.Generation,
	})
}

// mirrorConditions words Available as Cluster API's setAvailableCondition
// does (Unknown while there is no MachineSet to count). Paused is about
// reconciliation (the annotation or the Cluster, said by row N04);
// spec.paused holds only rollouts and leaves it False, as Cluster API's
// EnsurePausedCondition does.
func mirrorConditions(s *Scope) {
	want, have := s.Replicas(), s.Totals().Available
	rolling := s.Strategy() == clusterv1.RollingUpdateStrategy
	if rolling {
		_, unavailable := s.Fenceposts()
		want -= unavailable
	}
	switch {
	case len(s.Sets) == 0 && s.Err == nil:
		// Cluster API sums the MachineSets' counters, so without one
		// (a template not there yet) its availableReplicas is unset.
		setCondition(s, clusterv1.AvailableCondition, metav1.ConditionUnknown, "WaitingForAvailableReplicasSet", "Waiting for status.availableReplicas set")
	case have >= want:
		setCondition(s, clusterv1.AvailableCondition, metav1.ConditionTrue, "Available", "")
	case !s.MD.DeletionTimestamp.IsZero():
		setCondition(s, clusterv1.AvailableCondition, metav1.ConditionFalse, "NotAvailable", "Deletion in progress")
	case rolling:
		ru := s.MD.Spec.Strategy.RollingUpdate
		maxUnavailable := "0"
		if ru.MaxUnavailable != nil {
			maxUnavailable = ru.MaxUnavailable.String()
		}
		setCondition(s, clusterv1.AvailableCondition, metav1.ConditionFalse, "NotAvailable",
			fmt.Sprintf("%d available replicas, at least %d required (spec.strategy.rollout.maxUnavailable is %s, spec.replicas is %d)", have, want, maxUnavailable, s.Replicas()))
	default:
		setCondition(s, clusterv1.AvailableCondition, metav1.ConditionFalse, "NotAvailable", fmt.Sprintf("%d available replicas, at least %d required", have, want))
	}
	setCondition(s, clusterv1.PausedCondition, metav1.ConditionFalse, "NotPaused", "")
}

// rolloutReasons counts the Machines whose UpToDate is False and gives the
// lines of their messages, each once, as Cluster API's
// setRollingOutCondition counts and lists them under RollingOut: a version
// change first, then in text order.
func rolloutReasons(machines []*clusterv1.Machine) (rollingOut int, reasons []string) {
	seen := map[string]bool{}
	var out []string
	for _, m := range machines {
		c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.UpToDateCondition)
		if c == nil || c.Status != metav1.ConditionFalse {
			continue
		}
		rollingOut++
		if c.Message == "" {
			continue
		}
		for _, l := range strings.Split(c.Message, "\n") {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		av, bv := strings.HasPrefix(a, "* Version"), strings.HasPrefix(b, "* Version")
		switch {
		case av && !bv:
			return -1
		case bv && !av:
			return 1
		}
		return strings.Compare(a, b)
	})
	return rollingOut, out
}

// mirrorMachineConditions words the conditions Cluster API's updateStatus
// computes from the MachineSets and Machines (setScalingUpCondition,
// setScalingDownCondition, setDeletingCondition, setRollingOutCondition,
// setMachinesReadyCondition, setMachinesUpToDateCondition); the stale
// Machines are looked for once, for ScalingDown and Deleting. RollingOut counts the Machines whose own
// UpToDate is False, one being deleted included, as it is still there (and
// not Ready); MachinesUpToDate aggregates the Machines' own
// UpToDate condition, which says the same per Machine.
func mirrorMachineConditions(s *Scope) {
	t := s.Totals()
	stale := reconciler.StaleMachines(s.Machines, s.Now)
	up, down := reconciler.ScalingConditions(s.MD, t.Total, s.Replicas(), stale, blockedBy(s.MissingTemplates))
	meta.SetStatusCondition(&s.MD.Status.Conditions, up)
	meta.SetStatusCondition(&s.MD.Status.Conditions, down)
	meta.SetStatusCondition(&s.MD.Status.Conditions, reconciler.DeletingCondition(s.MD, t.Total, len(s.Sets), stale))
	if n, why := rolloutReasons(s.Machines); n > 0 {
		msg := fmt.Sprintf("Rolling out %d not up-to-date replicas", n)
		if len(why) > 0 {
			msg += "\n" + strings.Join(why, "\n")
		}
		setCondition(s, clusterv1.RollingOutCondition, metav1.ConditionTrue, "RollingOut", msg)
	} else {
		setCondition(s, clusterv1.RollingOutCondition, metav1.ConditionFalse, "NotRollingOut", "")
	}
	meta.SetStatusCondition(&s.MD.Status.Conditions,
		reconciler.AggregateUpToDate(s.Machines, clusterv1.MachinesUpToDateCondition, s.Now, s.MD.Generation))
	meta.SetStatusCondition(&s.MD.Status.Conditions,
		reconciler.AggregateMachines(s.Machines, clusterv1.ReadyCondition, clusterv1.MachinesReadyCondition, reconciler.ReadyReasons, s.MD.Generation))
	meta.SetStatusCondition(&s.MD.Status.Conditions, reconciler.Remediating(s.Machines, " by MachineDeployment/MachineSet", s.MD.Generation))
}

// missingKinds are the kinds of the templates that do not exist.
func missingKinds(refs []clusterv1.ObjectReference) []string {
	kinds := make([]string, len(refs))
	for i, r := range refs {
		kinds[i] = r.Kind
	}
	return kinds
}

// blockedBy says why a scale-up is blocked ("because SimMachineTemplate does
// not exist"), "" when nothing blocks it.
func blockedBy(refs []clusterv1.ObjectReference) string {
	if len(refs) == 0 {
		return ""
	}
	return "because " + contract.MissingKinds(missingKinds(refs))
}
