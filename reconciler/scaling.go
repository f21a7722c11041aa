package reconciler

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// ScalingConditions are the ScalingUp and ScalingDown conditions of a
// MachineSet or a MachineDeployment worded as Cluster API's
// setScalingUpCondition and setScalingDownCondition do. current counts
// every Machine, those being deleted included; stale (StaleMachines) is
// added below a scale-down; an object
// being deleted wants none, whatever desired says. blocked, when not empty,
// says why Machines cannot be created ("because SimMachineTemplate does not
// exist"): it is added to a scale-up, and to a set that is not scaling up
// as what would block one.
func ScalingConditions(obj metav1.Object, current, desired int, stale, blocked string) (up, down metav1.Condition) {
	if obj.GetDeletionTimestamp() != nil {
		desired = 0
		blocked = ""
	}
	gen := obj.GetGeneration()
	up = metav1.Condition{Type: clusterv1.ScalingUpCondition, Status: metav1.ConditionFalse, Reason: "NotScalingUp", ObservedGeneration: gen}
	switch {
	case current < desired:
		up.Status, up.Reason = metav1.ConditionTrue, "ScalingUp"
		up.Message = fmt.Sprintf("Scaling up from %d to %d replicas", current, desired)
		if blocked != "" {
			up.Message += " is blocked " + blocked
		}
	case blocked != "":
		up.Message = "Scaling up would be blocked " + blocked
	}
	down = metav1.Condition{Type: clusterv1.ScalingDownCondition, Status: metav1.ConditionFalse, Reason: "NotScalingDown", ObservedGeneration: gen}
	if current > desired {
		down.Status, down.Reason = metav1.ConditionTrue, "ScalingDown"
		down.Message = fmt.Sprintf("Scaling down from %d to %d replicas", current, desired)
		if stale != "" {
			down.Message += "\n* " + stale
		}
	}
	return up, down
}
