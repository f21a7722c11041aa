package machinedeployment

import (
	"context"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/clusterowner"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// RegistryName is the name the MachineDeployment TableSet gives in
// spec.registry.
const RegistryName = "machinedeployment"

// Registry returns the MachineDeployment registry: every fact observer,
// action and status projection its tables may name.
var Registry = engine.LazyRegistry(RegistryName, registerFacts, registerWaits, registerActions, registerStatus)

func registerActions(r *engine.Registry[*Scope]) {
	r.Action("ReportObserveError", "Fail with the API error met while observing, so the row's onFailure names it.", reconciler.ReportObserveError[*Scope], engine.Pure())
	r.Action("DescribePause", "Say why the MachineDeployment is paused, in Cluster API's words.", reconciler.DescribePause(deploymentPause), engine.Pure())
	r.Action("AddFinalizer", "Add the cluster.krtt.dev/machinedeployment finalizer to the MachineDeployment.", reconciler.AddFinalizer(clusterv1.MachineDeploymentFinalizer, deploymentOf))
	r.Action("RemoveFinalizer", "Remove the cluster.krtt.dev/machinedeployment finalizer so Kubernetes can delete the MachineDeployment.", reconciler.RemoveFinalizer(clusterv1.MachineDeploymentFinalizer, deploymentOf))
	r.Action("AnnotateRevision", "Set the revision annotation of the MachineDeployment to its current MachineSet's revision.", annotateRevision, engine.Pure())
	r.Action("SetClusterOwnerAndLabels", "Set the cluster-name label and, unless another controller owns it, the Cluster as owner (not controller).", setClusterOwnerAndLabels, engine.Pure())
	r.Action("AdoptMachineSets", "Make the deployment the controller of the MachineSets without one that its selector matches.", adoptMachineSets)
	r.Action("AnnotateMachineSets", "Annotate every MachineSet whose desired-replicas or max-replicas annotation is stale with spec.replicas and spec.replicas plus maxSurge; replicas stay.", annotateMachineSets)
	r.Action("SyncMachineSets", "Patch the MachineSets with the deployment's in-place fields (every one: template metadata, readiness gates, deletion and health settings, minReadySeconds, deletion order, remediation; the current one: the highest revision); replicas stay.", syncMachineSets)
	r.Action("DeleteOldMachineSets", "Delete the oldest MachineSets with no replicas and no Machine beyond revisionHistoryLimit.", deleteOldMachineSets)
	r.Action("ScaleMachineSets", "Spread spec.replicas over the MachineSets with replicas by their size, and annotate them with it.", scaleMachineSets)
	r.Action("CreateMachineSet", "Create the current template's MachineSet <deployment>-<hash>, with the next revision, sized as the strategy allows.", createMachineSet)
	r.Action("ScaleUpNewMachineSet", "Scale the current MachineSet up to what the strategy allows now.", scaleUpNewMachineSet)
	r.Action("ScaleDownOldMachineSets", "Scale old MachineSets down, oldest first, by their unavailable replicas and what the available Machines exceed spec.replicas - maxUnavailable.", scaleDownOldMachineSets)
	r.Action("ScaleDownNewMachineSet", "Scale the current MachineSet down to spec.replicas.", scaleDownNewMachineSet)
	r.Action("ScaleDownOldMachineSetsToReplicas", "Scale old MachineSets down, oldest first, until they and the current MachineSet ask for spec.replicas.", scaleDownOldMachineSetsToReplicas)
	r.Action("ScaleOldMachineSetsToZero", "Scale every old MachineSet to 0.", scaleOldMachineSetsToZero)
	r.Action("ScaleOldMachineSetsToMachines", "Scale each old MachineSet down to its Machines not being deleted.", scaleOldMachineSetsToMachines)
	r.Action("DescribeMissingTemplates", "Name the templates spec.template references that do not exist (no change).", describeMissingTemplates, engine.Pure())
	r.Action("DescribeRollout", "Report what the rollout waits on (no change).", describeRollout, engine.Pure())
	r.Action("DeleteMachineSets", "Delete every MachineSet of the deployment once and wait until they are gone.", deleteMachineSets, engine.MayWait())
}

// setClusterOwnerAndLabels changes the MachineDeployment in memory; the kit
// patches it.
func setClusterOwnerAndLabels(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s", clusterowner.Ensure(s.MD, s.MD.Spec.ClusterName, s.Cluster))
}

// revisionAnnotated: the deployment's revision annotation names its current
// MachineSet's revision (Cluster API surfaces it on the MachineDeployment);
// without a current MachineSet there is none to name.
func revisionAnnotated(s *Scope) bool {
	return s.MD == nil || s.New == nil || s.MD.Annotations[clusterv1.RevisionAnnotation] == strconv.FormatInt(s.New.Revision, 10)
}

// annotateRevision changes the MachineDeployment in memory; the kit
// patches it.
func annotateRevision(_ context.Context, s *Scope) engine.Outcome {
	if s.MD.Annotations == nil {
		s.MD.Annotations = map[string]string{}
	}
	rev := strconv.FormatInt(s.New.Revision, 10)
	s.MD.Annotations[clusterv1.RevisionAnnotation] = rev
	return engine.OKf("revision %s (MachineSet %s)", rev, s.New.MS.Name)
}

// deploymentOf is the MachineDeployment the scope reconciles.
func deploymentOf(s *Scope) client.Object { return s.MD }

// registerWaits gives the engine the deployment's fields, which the
// progress deadline (RollingOut's wait) is timed from.
func registerWaits(r *engine.Registry[*Scope]) {
	r.WaitFields(func(s *Scope) engine.WaitFields {
		if s.MD == nil {
			return nil
		}
		return reconciler.ObjectFields(s.MD, s.Now)
	})
}
