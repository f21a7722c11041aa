package machineset

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// RegistryName is the name the MachineSet TableSet gives in spec.registry.
const RegistryName = "machineset"

// Registry returns the MachineSet registry: every fact observer, action and
// status projection the MachineSet tables may name.
var Registry = engine.LazyRegistry(RegistryName, registerFacts, registerActions, registerStatus)

func registerActions(r *engine.Registry[*Scope]) {
	r.Action("ReportObserveError", "Fail with the API error met while observing, so the row's onFailure names it.", reconciler.ReportObserveError[*Scope], engine.Pure())
	r.Action("DescribeMissingCluster", "Name the Cluster spec.clusterName names, which does not exist; changes nothing.", describeMissingCluster, engine.Pure())
	r.Action("DescribePause", "Say why the MachineSet is paused, in Cluster API's words.", reconciler.DescribePause(setPause), engine.Pure())
	r.Action("AddFinalizer", "Add the cluster.krtt.dev/machineset finalizer to the MachineSet.", reconciler.AddFinalizer(clusterv1.MachineSetFinalizer, setOf))
	r.Action("RemoveFinalizer", "Remove the cluster.krtt.dev/machineset finalizer so Kubernetes can delete the MachineSet.", reconciler.RemoveFinalizer(clusterv1.MachineSetFinalizer, setOf))
	r.Action("OwnTemplates", "Give the set's bootstrap and infrastructure templates an owner reference to the Cluster.", ownTemplates, engine.WritesThrough())
	r.Action("SetClusterOwnerAndLabels", "Set the cluster-name label and, for a stand-alone MachineSet, the Cluster as owner (not controller).", setClusterOwnerAndLabels, engine.Pure())
	r.Action("DescribeSelectorOverlap", "Name the other MachineSets of the Cluster that can select the same Machines, or say that none can (no change).", describeSelectorOverlap, engine.Pure())
	r.Action("AdoptMachines", "Make the set the controller owner of the matching orphan Machines and label them with its name.", adoptMachines)
	r.Action("ReleaseMachines", "Remove the set's controller reference and set-name label from the Machines that no longer match.", releaseMachines)
	r.Action("DeleteFailedMachines", "Delete failed Machines, at most maxInFlight being deleted at once; wait until the cache shows it.", deleteFailedMachines)
	r.Action("DescribeRemediation", "Say what a replacement held by maxInFlight waits on (no change): while only Machines a health checker marked are to be replaced, a line per OwnerRemediated message as Cluster API's setRemediatingCondition; else as DescribeFailedMachines.", describeRemediation, engine.Pure())
	r.Action("DescribeFailedMachines", "Report the failed Machines against maxUnhealthy and maxInFlight (no change); {replicas} is the number of the set's Machines, {desiredReplicas} its spec.replicas.", describeFailedMachines, engine.Pure(), engine.Offers("replicas", "desiredReplicas"))
	r.Action("SyncMachines", "Update the set's Machines in place from the template: its labels and annotations (the keys the set manages), spec.deletion, spec.readinessGates and spec.health; nothing else changes and no Machine is replaced.", syncMachines)
	r.Action("DescribeMissingTemplates", "Report the templates that do not exist (no change).", describeMissingTemplates, engine.Pure())
	r.Action("DescribeDisabledCreation", "Report that the set's annotation holds the scale-up (no change).", describeDisabledCreation, engine.Pure())
	r.Action("DescribeBlockedScaleUp", "Report the preflight checks that hold the scale-up (no change).", describeBlockedScaleUp, engine.Pure())
	r.Action("ClearRemediationMarks", "Remove the OwnerRemediated condition of the Machines a health checker finds healthy again.", clearRemediationMarks)
	r.Action("LeaveRemediationToRollout", "Set OwnerRemediated False, reason CannotBeRemediated, on the Machines a health checker marked: the MachineDeployment's rollout removes them.", leaveRemediationToRollout)
	r.Action("DeferRemediationToInFlight", "Set OwnerRemediated False, reason RemediationDeferred, on the Machines a health checker marked: maxInFlight are being replaced.", deferRemediationToInFlight)
	r.Action("DeferRemediationToPreflight", "Set OwnerRemediated False, reason RemediationDeferred with a line per failed preflight check, on the Machines a health checker marked.", deferRemediationToPreflight)
	r.Action("DescribeLeftToRollout", "Report the failed Machines an old MachineSet leaves to its MachineDeployment's rollout (no change).", describeLeftToRollout, engine.Pure())
	r.Action("DescribeDeferredRemediation", "Report the failed Machines whose replacement the preflight checks hold (no change).", describeDeferredRemediation, engine.Pure())
	r.Action("CreateMachines", "Clone the templates and create the missing Machines in slow-start batches, at most 100 per reconcile; wait until the cache shows them.", createMachines, engine.MayWait())
	r.Action("DeleteSurplusMachines", "Delete the surplus Machines (Machines being deleted count), at most 100 per reconcile: Machines being deleted already first, then the delete-machine annotation, then failed or unhealthy, then spec.deletion.order.", deleteSurplusMachines, engine.MayWait())
	r.Action("DeleteAllMachines", "Delete every Machine of the set once and wait until they are gone.", deleteAllMachines, engine.MayWait())
}

// setOf is the MachineSet the scope reconciles, for the kit's actions.
func setOf(s *Scope) client.Object { return s.Set }
