package cluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// Conditions Cluster API's Cluster aggregates from its Machines, split into
// control plane and workers (setControlPlaneMachinesReadyCondition,
// setWorkerMachinesReadyCondition, setControlPlaneMachinesUpToDateCondition,
// setWorkerMachinesUpToDateCondition).
const (
	ControlPlaneMachinesReadyCondition    = "ControlPlaneMachinesReady"
	WorkerMachinesReadyCondition          = "WorkerMachinesReady"
	ControlPlaneMachinesUpToDateCondition = "ControlPlaneMachinesUpToDate"
	WorkerMachinesUpToDateCondition       = "WorkerMachinesUpToDate"
)

// mirrorMachineAggregates sets the four aggregates of the Cluster's
// Machines: Ready and UpToDate, of the control plane and of the workers.
func mirrorMachineAggregates(s *Scope) {
	c := s.Cluster
	var cp, workers []*clusterv1.Machine
	for _, m := range s.Machines {
		if isControlPlane(m) {
			cp = append(cp, m)
		} else {
			workers = append(workers, m)
		}
	}
	for _, a := range []metav1.Condition{
		reconciler.AggregateMachines(cp, clusterv1.ReadyCondition, ControlPlaneMachinesReadyCondition, reconciler.ReadyReasons, c.Generation),
		reconciler.AggregateMachines(workers, clusterv1.ReadyCondition, WorkerMachinesReadyCondition, reconciler.ReadyReasons, c.Generation),
		reconciler.AggregateUpToDate(cp, ControlPlaneMachinesUpToDateCondition, s.Now, c.Generation),
		reconciler.AggregateUpToDate(workers, WorkerMachinesUpToDateCondition, s.Now, c.Generation),
	} {
		meta.SetStatusCondition(&c.Status.Conditions, a)
	}
}

// Conditions Cluster API's Cluster aggregates from its control plane
// object, MachineDeployments and stand-alone MachineSets
// (setRollingOutCondition, setScalingUpCondition, setScalingDownCondition).
const (
	RollingOutCondition  = clusterv1.RollingOutCondition
	ScalingUpCondition   = clusterv1.ScalingUpCondition
	ScalingDownCondition = clusterv1.ScalingDownCondition
)

// rolloutAggregates are those three, each with its reasons and whether the
// Cluster's stand-alone MachineSets count.
var rolloutAggregates = []struct {
	cond    string
	reasons reconciler.AggregateReasons
	sets    bool
}{
	{RollingOutCondition, reconciler.AggregateReasons{Fine: "NotRollingOut", Issue: "RollingOut", Unknown: "RollingOutUnknown"}, false},
	{ScalingUpCondition, reconciler.AggregateReasons{Fine: "NotScalingUp", Issue: "ScalingUp", Unknown: "ScalingUpUnknown"}, true},
	{ScalingDownCondition, reconciler.AggregateReasons{Fine: "NotScalingDown", Issue: "ScalingDown", Unknown: "ScalingDownUnknown"}, true},
}

// mirrorRolloutAggregates sets RollingOut, ScalingUp and ScalingDown: True
// when the control plane object (only if it reports the condition), a
// MachineDeployment or (scaling) a MachineSet the Cluster owns reports it
// True, Unknown when one reports it Unknown or has not reported it, False
// otherwise (also with none of them); Unknown (InternalError) while the
// control plane object or the MachineDeployments cannot be read.
func mirrorRolloutAggregates(s *Scope) {
	c := s.Cluster
	var cpConds []metav1.Condition
	if s.ControlPlane != nil {
		cpConds = contract.Conditions(s.ControlPlane)
	}
	for _, a := range rolloutAggregates {
		var unread error
		switch {
		case c.Spec.ControlPlaneRef != nil && s.ControlPlaneUnread:
			unread = fmt.Errorf("%s %s could not be read: %w", c.Spec.ControlPlaneRef.Kind, c.Spec.ControlPlaneRef.Name, s.ControlPlaneErr)
		case s.MachineDeploymentsErr != nil:
			unread = s.MachineDeploymentsErr
		}
		if unread != nil {
			meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: a.cond, Status: metav1.ConditionUnknown,
				Reason: "InternalError", Message: unread.Error(), ObservedGeneration: c.Generation})
			continue
		}
		var items []reconciler.AggregateItem
		if meta.FindStatusCondition(cpConds, a.cond) != nil {
			items = append(items, reconciler.AggregateItem{Kind: s.ControlPlane.GetKind(), Name: s.ControlPlane.GetName(), Conditions: cpConds})
		}
		for i := range s.MachineDeployments {
			md := &s.MachineDeployments[i]
			items = append(items, reconciler.AggregateItem{Kind: "MachineDeployment", Name: md.Name, Conditions: md.Status.Conditions})
		}
		if a.sets {
			for i := range s.StandaloneSets {
				ms := &s.StandaloneSets[i]
				items = append(items, reconciler.AggregateItem{Kind: "MachineSet", Name: ms.Name, Conditions: ms.Status.Conditions})
			}
		}
		meta.SetStatusCondition(&c.Status.Conditions, reconciler.Aggregate(items, a.cond, a.cond, a.reasons, true, c.Generation))
	}
}

// mirrorRemediating is Cluster API's setRemediatingCondition over the
// Cluster's Machines.
func mirrorRemediating(s *Scope) {
	meta.SetStatusCondition(&s.Cluster.Status.Conditions, reconciler.Remediating(s.Machines, "", s.Cluster.Generation))
}
