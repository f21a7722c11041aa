package reconciler

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// DeletingCondition is the Deleting condition of a MachineSet or a
// MachineDeployment worded as Cluster API's setDeletingCondition does:
// False NotDeleting while obj is not being deleted; then True Deleting with
// the Machines left (stale, from StaleMachines, below them), or (none left)
// the MachineSets left, or "Deletion completed".
func DeletingCondition(obj metav1.Object, machines, machineSets int, stale string) metav1.Condition {
	c := metav1.Condition{Type: clusterv1.DeletingCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotDeletingReason,
		ObservedGeneration: obj.GetGeneration()}
	if obj.GetDeletionTimestamp() == nil {
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, clusterv1.DeletingReason
	switch {
	case machines == 1:
		c.Message = "Deleting 1 Machine"
	case machines > 1:
		c.Message = fmt.Sprintf("Deleting %d Machines", machines)
	case machineSets > 0:
		// Plural for one too, as Cluster API's setDeletingCondition.
		c.Message = fmt.Sprintf("Deleting %d MachineSets", machineSets)
	default:
		c.Message = "Deletion completed"
	}
	if machines > 0 && stale != "" {
		c.Message += "\n* " + stale
	}
	return c
}
