package machine

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/krtt-dev/krtt/actions/clusterowner"
	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
)

// registerFacts binds every fact of transitions/machine/machine.yaml to the
// Go that computes it from the Scope. Each observer reads the snapshot only.
func registerFacts(r *engine.Registry[*Scope]) {
	r.Bool("machineFound", func(s *Scope) bool { return s.MachineFound })
	r.Bool("apiError", func(s *Scope) bool { return s.Err != nil })
	r.Bool("hasFinalizer", func(s *Scope) bool {
		return s.Machine != nil && hasString(s.Machine.Finalizers, clusterv1.MachineFinalizer)
	})
	r.Bool("deleting", func(s *Scope) bool { return s.IsDeleting() })
	r.Bool("paused", func(s *Scope) bool {
		p, _ := machinePause(s)
		return p
	})
	r.Enum("cluster", func(s *Scope) string {
		switch {
		case s.Cluster == nil:
			return "Missing"
		case !s.Cluster.DeletionTimestamp.IsZero():
			return "Deleting"
		}
		return "Found"
	})
	r.Bool("ownerAndLabelsSet", func(s *Scope) bool {
		if s.Machine == nil {
			return true
		}
		return ownerAndLabelsSet(s)
	})
	r.Bool("dataSecretNameSet", func(s *Scope) bool {
		return s.Machine != nil && s.Machine.Spec.Bootstrap.DataSecretName != nil && *s.Machine.Spec.Bootstrap.DataSecretName != ""
	})
	r.Enum("bootstrapConfig", func(s *Scope) string {
		switch {
		case s.Machine == nil:
			return "Missing"
		case s.Machine.Spec.Bootstrap.ConfigRef == nil:
			return "NotUsed"
		case s.Bootstrap == nil:
			return "Missing"
		case BootstrapDataSecretCreated(s.Bootstrap) && BootstrapDataSecretName(s.Bootstrap) != "":
			return "Ready"
		}
		return "NotReady"
	})
	r.Enum("infrastructure", func(s *Scope) string {
		return infrastructureState(s.Infrastructure)
	})
	r.Bool("providerFailure", func(s *Scope) bool {
		return ProviderFailure(s.Bootstrap) != "" || ProviderFailure(s.Infrastructure) != ""
	})
	r.Bool("infrastructureDeleting", func(s *Scope) bool {
		return s.Infrastructure != nil && s.Infrastructure.GetDeletionTimestamp() != nil
	})
	r.Enum("workloadCluster", func(s *Scope) string {
		if s.Machine == nil {
			// A Machine that is gone names no Cluster, which reads as
			// Missing: nothing of a Node side is observed either.
			return string(NoCluster)
		}
		if s.Workload.State == "" {
			// Connecting failed with an API error; apiError decides.
			return string(remote.Unreachable)
		}
		return string(s.Workload.State)
	})
	r.Bool("nodeUnreachable", func(s *Scope) bool {
		return NodeUnreachable(s.Node())
	})
	r.Bool("wasProvisioned", func(s *Scope) bool {
		return s.Machine != nil && s.Machine.Status.Initialization.InfrastructureProvisioned != nil && *s.Machine.Status.Initialization.InfrastructureProvisioned
	})
	r.Bool("hasProviderID", hasProviderID)
	r.Bool("availabilityPending", availabilityPending)
	r.RequeueAt("availableAt", "When the Machine becomes Available: its Ready condition's lastTransitionTime plus spec.minReadySeconds, while it waits for that (none otherwise).", availableAtOf)
	r.Bool("hasNodeRef", func(s *Scope) bool { return hasNodeRef(s) })
	r.Enum("node", func(s *Scope) string {
		switch {
		case s.Machine != nil && !hasNodeRef(s) && !hasProviderID(s):
			// Nodes are found by nodeRef or providerID: with neither there
			// is nothing to look up, whether or not the Node side is read.
			return "None"
		case s.NodeClient == nil:
			// The Node side was not read (the workload cluster cannot be
			// used, or the Cluster is gone): an unseen Node is not a lost one.
			return "Unknown"
		case hasNodeRef(s) && len(s.Nodes) == 0:
			return "Gone"
		case len(s.Nodes) == 1:
			return "Found"
		case len(s.Nodes) > 1:
			return "Multiple"
		}
		return "None"
	})
	r.Enum("controlPlane", func(s *Scope) string {
		switch {
		case s.Cluster == nil || s.Cluster.Spec.ControlPlaneRef == nil:
			return "NotUsed"
		case s.ControlPlane == nil:
			return "Missing"
		case s.ControlPlane.GetDeletionTimestamp() != nil:
			return "Deleting"
		case externallyManaged(s.ControlPlane):
			return "ExternallyManaged"
		}
		return "Found"
	})
	r.Bool("controlPlaneMachine", func(s *Scope) bool {
		return s.Machine != nil && hasKey(s.Machine.Labels, clusterv1.ControlPlaneLabel)
	})
	r.Bool("otherControlPlaneMachines", func(s *Scope) bool {
		return s.ControlPlaneMachines > 0
	})
	r.Bool("bootstrapControlledByOther", func(s *Scope) bool {
		return s.BootstrapClaim != ""
	})
	r.Bool("infrastructureControlledByOther", func(s *Scope) bool {
		return s.InfrastructureClaim != ""
	})
	r.Bool("bootstrapAdoptable", func(s *Scope) bool {
		return s.Bootstrap != nil && s.BootstrapClaim == "" && !adopted(s, s.Bootstrap)
	})
	r.Bool("infrastructureAdoptable", func(s *Scope) bool {
		return s.Infrastructure != nil && s.InfrastructureClaim == "" && !adopted(s, s.Infrastructure)
	})
	r.Bool("providerIDMismatch", func(s *Scope) bool {
		if s.Machine == nil || s.Machine.Spec.ProviderID == nil || *s.Machine.Spec.ProviderID == "" {
			return false
		}
		id := InfrastructureProviderID(s.Infrastructure)
		return id != "" && id != *s.Machine.Spec.ProviderID
	})
	r.Bool("preDrainHooks", func(s *Scope) bool {
		return s.Machine != nil && len(annotationsWithPrefix(s.Machine.Annotations, clusterv1.PreDrainDeleteHookAnnotationPrefix)) > 0
	})
	r.Bool("excludeDrain", func(s *Scope) bool {
		return s.Machine != nil && hasKey(s.Machine.Annotations, clusterv1.ExcludeNodeDrainingAnnotation)
	})
	r.Enum("forceDeletion", func(s *Scope) string {
		return forceDeletion(s)
	})
	r.Enum("onDrainTimeout", func(s *Scope) string {
		if s.Machine != nil && s.Machine.Spec.Deletion.OnDrainTimeout == clusterv1.DrainTimeoutForce {
			return "Force"
		}
		return "Skip"
	})
	r.Bool("excludeVolumeWait", func(s *Scope) bool {
		return s.Machine != nil && hasKey(s.Machine.Annotations, clusterv1.ExcludeWaitForNodeVolumeDetachAnnotation)
	})
	r.Bool("preTerminateHooks", func(s *Scope) bool {
		return s.Machine != nil && len(annotationsWithPrefix(s.Machine.Annotations, clusterv1.PreTerminateDeleteHookAnnotationPrefix)) > 0
	})
}

// NodeUnhealthyForce is how long a Node must have been NotReady, unreachable
// or read-only before the deletion of its Machine is forced (MCM drainNode).
const NodeUnhealthyForce = 5 * time.Minute

// forceDeletion says why a Machine's deletion is forced, the label first.
func forceDeletion(s *Scope) string {
	switch {
	case s.Machine == nil:
		return "No"
	case s.Machine.Labels[clusterv1.ForceDeletionLabel] == clusterv1.ForceDeletionLabelValue:
		return "Label"
	case forcedByNodeHealth(s):
		return "NodeUnhealthy"
	}
	return "No"
}

// forcedByNodeHealth: the Node has been unhealthy for more than
// NodeUnhealthyForce, counted as every Node-side timeout is: a Node seen
// unhealthy only through an outage of its workload cluster (the kubelet's
// reports could not be read either) gets its full 5 minutes again once the
// cluster is back, rather than being force-deleted on reconnection.
func forcedByNodeHealth(s *Scope) bool {
	start, _ := NodeUnhealthyStart(s.Node())
	return !start.IsZero() && s.Now.Sub(NodeSideSince(s, start)) > NodeUnhealthyForce
}

// NodeUnhealthyStart is since when the Node has been Ready=False or
// Unknown, or ReadonlyFilesystem=True (the earliest lastTransitionTime of
// those conditions), and that condition as Type=Status; zero when it is
// neither. The forced deletion's 5 minutes count from it.
func NodeUnhealthyStart(n *corev1.Node) (time.Time, string) {
	var start time.Time
	var which string
	if n == nil {
		return start, which
	}
	for _, c := range n.Status.Conditions {
		bad := (c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue) ||
			(c.Type == "ReadonlyFilesystem" && c.Status == corev1.ConditionTrue)
		if bad && !c.LastTransitionTime.IsZero() && (start.IsZero() || c.LastTransitionTime.Before(&metav1.Time{Time: start})) {
			start, which = c.LastTransitionTime.Time, string(c.Type)+"="+string(c.Status)
		}
	}
	return start, which
}

func infrastructureState(u *unstructured.Unstructured) string {
	switch {
	case u == nil:
		return "Missing"
	case !contract.Provisioned(u):
		return "NotProvisioned"
	case InfrastructureProviderID(u) == "":
		return "NoProviderID"
	}
	return "Provisioned"
}

// NodeUnreachable: the Node's Ready condition is Unknown, as the node
// lifecycle controller sets it when the kubelet stops reporting.
func NodeUnreachable(n *corev1.Node) bool {
	if n == nil {
		return false
	}
	c := nodeCondition(n, corev1.NodeReady)
	return c != nil && c.Status == corev1.ConditionUnknown
}

// externallyManaged reads status.externalManagedControlPlane of a control
// plane object (the Cluster API control plane contract).
func externallyManaged(cp *unstructured.Unstructured) bool {
	v, found, err := unstructured.NestedBool(cp.Object, "status", "externalManagedControlPlane")
	return found && err == nil && v
}

func hasNodeRef(s *Scope) bool {
	return s.Machine != nil && s.Machine.Status.NodeRef != nil && s.Machine.Status.NodeRef.Name != ""
}

func hasProviderID(s *Scope) bool {
	return s.Machine != nil && s.Machine.Spec.ProviderID != nil && *s.Machine.Spec.ProviderID != ""
}

func ownerAndLabelsSet(s *Scope) bool {
	return clusterowner.Set(s.Machine, s.Machine.Spec.ClusterName, s.Cluster)
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// machinePause: the Machine's own paused annotation or its Cluster's spec.paused,
// and why (reconciler.Paused).
func machinePause(s *Scope) (bool, string) {
	if s.Machine == nil {
		return false, ""
	}
	return reconciler.Paused("Machine", s.Machine, s.Cluster)
}
