package machine

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// RegistryName is the name the Machine TableSet gives in spec.registry.
const RegistryName = "machine"

// Registry returns the Machine registry: every fact observer and action the
// Machine tables may name, each with the line the rendered docs show.
var Registry = engine.LazyRegistry(RegistryName, registerFacts, registerWaits, registerActions, registerStatus, registerHealth)

// registerWaits gives the engine what the timeouts of the states' waits
// are computed from (the timed-out facts, the wake-up at the deadline and
// krtt explain read the same): the Machine's fields, since when the
// workload cluster has not been usable (WorkloadUnusableSince), and when a
// Node-side wait counts from.
func registerWaits(r *engine.Registry[*Scope]) {
	r.WaitFields(func(s *Scope) engine.WaitFields {
		if s.Machine == nil {
			return nil
		}
		return workloadFields{WaitFields: reconciler.ObjectFields(s.Machine, s.Now), w: s.Workload}
	})
	r.CountFrom("nodeSide", "A wait on the Node side counts from its start or from when the workload cluster last came back after an outage, whichever is later (NodeSideSince).", NodeSideSince)
	r.CountFrom("nodeSideOnceProviderID", "The creation wait counts from its start until the providerID is known; then, with only the Node left to join, as a wait on the Node side.", creationSince)
}

func registerActions(r *engine.Registry[*Scope]) {
	r.Action("DescribePause", "Say why the Machine is paused, in Cluster API's words.", reconciler.DescribePause(machinePause), engine.Pure())
	r.Action("AddFinalizer", "Add the cluster.krtt.dev/machine finalizer to the Machine.", reconciler.AddFinalizer(clusterv1.MachineFinalizer, machineOf), engine.Pure())
	r.Action("RemoveFinalizer", "Remove the cluster.krtt.dev/machine finalizer so Kubernetes can delete the Machine.", reconciler.RemoveFinalizer(clusterv1.MachineFinalizer, machineOf))
	r.Action("DescribeMissingCluster", "Name the Cluster spec.clusterName names, which does not exist; changes nothing.", describeMissingCluster, engine.Pure())
	r.Action("DescribeDeletedInfrastructure", "Say that the infrastructure object is gone after it was provisioned, in the words of InfrastructureReady; changes nothing.", describeDeletedInfrastructure, engine.Pure())
	r.Action("ExplainNodeSkip", "Name the Cluster and control plane for which the deletion leaves the Node alone (no control-plane Machine left); changes nothing.", explainNodeSkip, engine.Pure())
	r.Action("SetClusterOwnerAndLabels", "Set the cluster-name label and, for a stand-alone Machine, the Cluster as owner.", setClusterOwnerAndLabels, engine.Pure())
	r.Action("AdoptBootstrap", "Make the Machine the controller owner of its bootstrap object and watch its kind.", adoptBootstrap, engine.WritesThrough())
	r.Action("CopyDataSecretName", "Copy status.dataSecretName of the bootstrap object to spec.bootstrap.dataSecretName.", copyDataSecretName, engine.Pure())
	r.Action("AdoptInfrastructure", "Make the Machine the controller owner of its infrastructure object and watch its kind.", adoptInfrastructure, engine.WritesThrough())
	r.Action("ReleaseBootstrap", "Say whom the bootstrap object belongs to, and remove the Machine's owner reference from it if an earlier version set one.", releaseBootstrap, engine.WritesThrough())
	r.Action("ReleaseInfrastructure", "Say whom the infrastructure object belongs to, and remove the Machine's owner reference from it if an earlier version set one.", releaseInfrastructure, engine.WritesThrough())
	r.Action("CopyInfrastructureFields", "Copy providerID, addresses and failure domain from the infrastructure object.", copyInfrastructureFields, engine.WritesThrough())
	r.Action("CopyProviderFailure", "Copy status.failureReason and failureMessage of the failed provider object to the Machine.", copyProviderFailure, engine.Pure())
	r.Action("SetNodeRef", "Point status.nodeRef at the Node found by providerID.", setNodeRef, engine.Pure())
	r.Action("SyncNode", "Sync the managed labels, the krtt annotations, the interruptible label and the taints krtt owns onto the Node (writes only on change).", syncNode, engine.WritesThrough())
	r.Action("RecordPreDrainHookWait", "Record when the wait for pre-drain hooks started and list the hooks.", recordPreDrainHookWait, engine.Pure())
	r.Action("RecordPreTerminateHookWait", "Record when the wait for pre-terminate hooks started and list the hooks.", recordPreTerminateHookWait, engine.Pure())
	r.Action("MarkDrainStart", "Set status.deletion.nodeDrainStartTime if unset.", markDrainStart, engine.Pure())
	r.Action("DrainNode", "Cordon the Node and evict its Pods through the Eviction API, one pass per reconcile.", drainNode, engine.MayWait())
	r.Action("DrainUnreachableNode", "Drain an unreachable Node: evictions with a 1s grace period; Pods terminating for more than 1s no longer hold the drain.", drainUnreachableNode, engine.MayWait())
	r.Action("ForceDrainNode", "Cordon the Node and delete its Pods with grace period 0 (forced deletion: no eviction, PodDisruptionBudgets ignored, never DaemonSet or mirror Pods).", forceDrainNode, engine.MayWait())
	r.Action("DeleteVolumeAttachments", "Delete the Node's VolumeAttachments (forced deletion: the volume wait is skipped).", deleteVolumeAttachments)
	r.Action("MarkVolumeWaitStart", "Set status.deletion.waitForNodeVolumeDetachStartTime if unset.", markVolumeWaitStart, engine.Pure())
	r.Action("WaitForVolumeDetach", "Wait until the Node reports no attached volumes (ignoring volumes of Pods the drain skipped).", waitForVolumeDetach, engine.MayWait(), engine.Pure())
	r.Action("DeleteInfrastructure", "Delete the infrastructure object once and wait until it is gone (at once when it has no finalizer).", deleteInfrastructure, engine.MayWait(), engine.WritesThrough())
	r.Action("DeleteBootstrap", "Delete the bootstrap object once and wait until it is gone (at once when it has no finalizer).", deleteBootstrap, engine.MayWait(), engine.WritesThrough())
	r.Action("MarkNodeDeletionStart", "Set status.deletion.nodeDeletionStartTime if unset.", markNodeDeletionStart, engine.Pure())
	r.Action("DeleteNode", "Delete the Node object.", deleteNode)
	r.Action("DescribeWorkloadCluster", "Say which Secret and API server cannot be used, since when and why, and go on (the row's wait or result decides what happens).", describeWorkloadCluster, engine.Pure())
	r.Action("WaitForWorkloadCluster", "Wait while the workload cluster cannot be used, saying which Secret and API server, since when and why; {lastProbeSuccess} reads \"Last successful probe at <time>\" or, when none succeeded, \"Remote connection not established yet\" (Cluster API's words).", waitForWorkloadCluster, engine.MayWait(), engine.Pure(), engine.Offers("lastProbeSuccess"))
}

// machineOf is the Machine the scope reconciles, for the kit's actions.
func machineOf(s *Scope) client.Object { return s.Machine }
