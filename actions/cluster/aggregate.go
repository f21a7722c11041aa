package cluster

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
