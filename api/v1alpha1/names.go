package v1alpha1

import corev1 "k8s.io/api/core/v1"

// Condition types set on Machines (Paused and Ready are also used on
// Clusters).
const (
	// BootstrapConfigReadyCondition mirrors the Ready condition of the
	// bootstrap config object.
	BootstrapConfigReadyCondition = "BootstrapConfigReady"
	// InfrastructureReadyCondition mirrors the Ready condition of the
	// infrastructure machine object.
	InfrastructureReadyCondition = "InfrastructureReady"
	// NodeReadyCondition mirrors the Ready condition of the Node.
	NodeReadyCondition = "NodeReady"
	// NodeHealthyCondition summarises the health of the Node.
	NodeHealthyCondition = "NodeHealthy"
	// HealthCheckSucceededCondition is set by a health checker outside krtt
	// (as Cluster API's MachineHealthCheck); krtt only reads it: False puts
	// the Machine first in a MachineSet's scale-down.
	HealthCheckSucceededCondition = "HealthCheckSucceeded"
	// OwnerRemediatedCondition is set by a health checker outside krtt too:
	// False while the Machine waits for its owner to remediate it. The
	// Cluster's Remediating condition reads it.
	OwnerRemediatedCondition = "OwnerRemediated"
	// RemediationMachineDeletingReason is the OwnerRemediated reason a
	// MachineSet sets on a Machine a health checker marked, as it deletes it
	// (Cluster API's MachineSetMachineRemediationMachineDeletingReason).
	RemediationMachineDeletingReason = "MachineDeleting"
	// RemediationDeferredReason is the OwnerRemediated reason of a marked
	// Machine whose deletion waits for maxInFlight or the preflight checks
	// (Cluster API's MachineSetMachineRemediationDeferredReason).
	RemediationDeferredReason = "RemediationDeferred"
	// CannotBeRemediatedReason is the OwnerRemediated reason of a marked
	// Machine of an old revision's MachineSet: the rollout removes it
	// (Cluster API's MachineSetMachineCannotBeRemediatedReason).
	CannotBeRemediatedReason = "CannotBeRemediated"
	// DeletingCondition reports deletion progress; its reason is one of the
	// Deleting reasons below.
	DeletingCondition = "Deleting"
	// PausedCondition is true while the object or its Cluster is paused.
	PausedCondition = "Paused"
	// UpdatingCondition is a Machine's in-place update in Cluster API;
	// krtt replaces Machines instead, so it is always False (NotUpdating).
	UpdatingCondition = "Updating"
	NotUpdatingReason = "NotUpdating"
	// ReadyCondition summarises the other conditions.
	ReadyCondition = "Ready"
	// UpToDateCondition says whether a Machine of a MachineDeployment
	// carries its deployment's current template.
	UpToDateCondition = "UpToDate"
	// CertificatesExpiryKnownCondition appears, False, only while a
	// control-plane Machine's certificates-expiry annotation is not an RFC
	// 3339 date, so the bad value is visible rather than silently dropped.
	CertificatesExpiryKnownCondition = "CertificatesExpiryKnown"
)

// Reasons of the Deleting condition.
const (
	NotDeletingReason                              = "NotDeleting"
	DeletingReason                                 = "Deleting"
	DeletingInternalErrorReason                    = "InternalError"
	DeletingWaitingForPreDrainHookReason           = "WaitingForPreDrainHook"
	DeletingDrainingNodeReason                     = "DrainingNode"
	DeletingWaitingForVolumeDetachReason           = "WaitingForVolumeDetach"
	DeletingWaitingForPreTerminateHookReason       = "WaitingForPreTerminateHook"
	DeletingWaitingForInfrastructureDeletionReason = "WaitingForInfrastructureDeletion"
	DeletingWaitingForBootstrapDeletionReason      = "WaitingForBootstrapDeletion"
	DeletingDeletingNodeReason                     = "DeletingNode"
	DeletingDeletionCompletedReason                = "DeletionCompleted"
)

// Reasons of the conditions that say how an object another controller
// provides is doing: BootstrapConfigReady and InfrastructureReady on
// Machines, InfrastructureReady and the control plane conditions on
// Clusters. They are Cluster API's v1beta2 reasons, so tools written for
// it read them alike.
const (
	// ObjectDoesNotExistReason: the object the reference names does not
	// exist (yet).
	ObjectDoesNotExistReason = "ObjectDoesNotExist"
	// ObjectDeletedReason: the object existed and did its part, and is
	// gone now.
	ObjectDeletedReason = "ObjectDeleted"
	// ProviderReadyReason and ProviderNotReadyReason: the object reports
	// no Ready condition of its own, and its part is done (the data
	// secret created, the infrastructure provisioned) or not yet.
	ProviderReadyReason    = "Ready"
	ProviderNotReadyReason = "NotReady"
	// NoReasonReportedReason stands for the empty reason of a condition
	// the object reports as not True.
	NoReasonReportedReason = "NoReasonReported"
)

// Reasons of NodeReady and NodeHealthy while the Machine has no Node to
// read them from (Cluster API's).
const (
	// NodeInspectionFailedReason: no Node can be looked at yet, as the
	// Machine waits for its providerID or for a Node with it.
	NodeInspectionFailedReason = "InspectionFailed"
	// NodeDoesNotExistReason: a Machine being deleted has no Node.
	NodeDoesNotExistReason = "NodeDoesNotExist"
	// NodeDeletedReason: the Node status.nodeRef names is gone.
	NodeDeletedReason = "NodeDeleted"
)

// Reasons of NodeHealthy read from the Node (Cluster API's).
const (
	NodeHealthyReason       = "NodeHealthy"
	NodeNotHealthyReason    = "NodeNotHealthy"
	NodeHealthUnknownReason = "NodeHealthyUnknown"
)

// Finalizers.
const (
	// MachineFinalizer keeps a Machine until its Node, infrastructure and
	// bootstrap objects are cleaned up.
	MachineFinalizer = "cluster.krtt.dev/machine"
	// ClusterFinalizer keeps a Cluster until its MachineSets and Machines
	// are gone (Cluster API's cluster.cluster.x-k8s.io).
	ClusterFinalizer = "cluster.krtt.dev/cluster"
	// LegacyMachineFinalizer and LegacyClusterFinalizer are the names the
	// finalizers had before they took the <group>/<name> form the API
	// server expects; the kit replaces them (reconciler.Spec.LegacyFinalizers).
	LegacyMachineFinalizer = "machine.cluster.krtt.dev"
	LegacyClusterFinalizer = "cluster.cluster.krtt.dev"
)

// Annotations on Machines (and Clusters, for PausedAnnotation).
const (
	// PausedAnnotation pauses reconciliation of the object that carries it.
	PausedAnnotation = "cluster.krtt.dev/paused"

	// PreDrainDeleteHookAnnotationPrefix starts annotations that block the
	// Node drain until their owners remove them.
	PreDrainDeleteHookAnnotationPrefix = "pre-drain.delete.hook.machine.cluster.krtt.dev/"

	// PreTerminateDeleteHookAnnotationPrefix starts annotations that block
	// infrastructure deletion until their owners remove them.
	PreTerminateDeleteHookAnnotationPrefix = "pre-terminate.delete.hook.machine.cluster.krtt.dev/"

	// ExcludeNodeDrainingAnnotation skips the Node drain.
	ExcludeNodeDrainingAnnotation = "machine.cluster.krtt.dev/exclude-node-draining"

	// ExcludeWaitForNodeVolumeDetachAnnotation skips waiting for volumes to
	// detach.
	ExcludeWaitForNodeVolumeDetachAnnotation = "machine.cluster.krtt.dev/exclude-wait-for-node-volume-detach"

	// CertificatesExpiryAnnotation overrides the certificates expiry date
	// (RFC 3339) reported in status.certificatesExpiryDate.
	CertificatesExpiryAnnotation = "machine.cluster.krtt.dev/certificates-expiry"

	// WatchFilterLabel splits a fleet between operator instances: one
	// started with --watch-filter=VALUE manages only the Machines labelled
	// with VALUE (label a Cluster's Machines alike, control plane included).
	WatchFilterLabel = "cluster.krtt.dev/watch-filter"
)

// Labels on Machines.
const (
	// ClusterNameLabel names the Cluster a Machine belongs to.
	ClusterNameLabel = "cluster.krtt.dev/cluster-name"
	// ControlPlaneLabel marks a control-plane Machine.
	ControlPlaneLabel = "cluster.krtt.dev/control-plane"
)

// Pod label that overrides the drain rules for one Pod: skip leaves it
// alone, wait-completed never evicts it and waits until it has completed.
const (
	PodDrainLabel                   = "cluster.krtt.dev/drain"
	PodDrainLabelValueSkip          = "skip"
	PodDrainLabelValueWaitCompleted = "wait-completed"
)

// ForceDeletionLabel on a Machine being deleted forces its deletion: the
// Node's remaining Pods are deleted with grace period 0 (never DaemonSet or
// mirror Pods), its VolumeAttachments deleted and the volume wait skipped.
// Hooks are still honoured.
const (
	ForceDeletionLabel      = "cluster.krtt.dev/force-deletion"
	ForceDeletionLabelValue = "true"
)

// Domains whose Machine labels (and, for ManagedNodeDomain, annotations)
// the controller copies onto the Node: a key whose part before "/" is the
// domain or a subdomain of it (node-role.kubernetes.io itself only), as
// Cluster API's GetManagedLabels and GetManagedAnnotations.
const (
	NodeRoleLabelDomain        = "node-role.kubernetes.io"
	NodeRestrictionLabelDomain = "node-restriction.kubernetes.io"
	ManagedNodeDomain          = "node.cluster.krtt.dev"
)

// NodeUninitializedTaint is the taint a bootstrap provider may give a Node
// at registration (NoSchedule) so nothing is scheduled before the Machine's
// labels are on it; the controller removes it when it syncs the Node.
const NodeUninitializedTaint = ManagedNodeDomain + "/uninitialized"

// NodeOutdatedRevisionTaint (PreferNoSchedule) is on the Node of a Machine
// whose MachineSet is of an older revision than its MachineDeployment's, so
// Pods evicted from the first Nodes a rollout replaces are not scheduled
// onto Nodes that will go next (Cluster API's NodeOutdatedRevisionTaint).
// The controller adds and removes it when it syncs the Node.
const NodeOutdatedRevisionTaint = ManagedNodeDomain + "/outdated-revision"

// InterruptibleLabel is on the Node of a Machine whose infrastructure object
// reports status.interruptible true (a spot or preemptible instance), so
// workloads can keep off or tolerate it (Cluster API's InterruptibleLabel).
const InterruptibleLabel = "cluster.krtt.dev/interruptible"

// Prefixes of Machine label keys in those domains.
const (
	NodeRoleLabelPrefix        = NodeRoleLabelDomain + "/"
	NodeRestrictionLabelPrefix = NodeRestrictionLabelDomain + "/"
	ManagedNodeLabelPrefix     = ManagedNodeDomain + "/"
)

// Annotations the controller sets on the Node.
const (
	MachineAnnotation          = "cluster.krtt.dev/machine"
	ClusterNameAnnotation      = "cluster.krtt.dev/cluster-name"
	ClusterNamespaceAnnotation = "cluster.krtt.dev/cluster-namespace"
	// OwnerKindAnnotation and OwnerNameAnnotation name the Machine's
	// controller (its MachineSet, or control plane); absent without one.
	OwnerKindAnnotation = "cluster.krtt.dev/owner-kind"
	OwnerNameAnnotation = "cluster.krtt.dev/owner-name"
)

// MachineSet names.
const (
	// MachineSetFinalizer keeps a MachineSet until its Machines are gone.
	MachineSetFinalizer = "cluster.krtt.dev/machineset"
	// LegacyMachineSetFinalizer is its name before, replaced by the kit.
	LegacyMachineSetFinalizer = "machineset.cluster.krtt.dev"
	// SetNameLabel names the MachineSet that created a Machine (a name
	// that is not a valid label value is hashed: see
	// actions/machineset.LabelValue).
	SetNameLabel = "cluster.krtt.dev/set-name"
	// ManagedLabelsAnnotation and ManagedAnnotationsAnnotation list, comma
	// separated, the label and annotation keys a MachineSet put on a
	// Machine from its template, so that a key removed from the template
	// is removed from the Machine while keys others added stay.
	ManagedLabelsAnnotation      = "machineset.cluster.krtt.dev/managed-labels"
	ManagedAnnotationsAnnotation = "machineset.cluster.krtt.dev/managed-annotations"
	// DeleteMachineAnnotation marks a Machine its MachineSet deletes first
	// when it scales down.
	DeleteMachineAnnotation = "cluster.krtt.dev/delete-machine"
	// RemediateMachineAnnotation marks a Machine its MachineSet replaces
	// first of those to replace while maxInFlight holds the others back
	// (Cluster API's remediate-machine).
	RemediateMachineAnnotation = "cluster.krtt.dev/remediate-machine"
	// DisableMachineCreateAnnotation "true" on a MachineSet stops it from
	// creating Machines: an OnDelete MachineDeployment sets it on its old
	// MachineSets, so only the current one replaces a deleted Machine.
	DisableMachineCreateAnnotation = "machineset.cluster.krtt.dev/disable-machine-create"
	// SkipPreflightChecksAnnotation on a MachineSet (or, when the set has
	// none, on its bootstrap template) lists, comma separated, the
	// preflight checks the set skips before it creates or replaces
	// Machines: PreflightCheckAll or the names below. A MachineDeployment
	// that carries it passes it on to its MachineSets.
	SkipPreflightChecksAnnotation = "machineset.cluster.krtt.dev/skip-preflight-checks"
)

// The preflight checks a MachineSet runs before it creates or replaces
// Machines, by Cluster API's names (MachineSetPreflightCheck).
const (
	PreflightCheckAll = "All"
	// PreflightCheckControlPlaneIsStable: the control plane is neither
	// provisioning nor upgrading.
	PreflightCheckControlPlaneIsStable = "ControlPlaneIsStable"
	// PreflightCheckKubernetesVersionSkew: the set's version is not newer
	// than the control plane's, nor more than 3 minor versions older.
	PreflightCheckKubernetesVersionSkew = "KubernetesVersionSkew"
	// PreflightCheckKubeadmVersionSkew: with a kubeadm bootstrap template,
	// the set's minor version is the control plane's.
	PreflightCheckKubeadmVersionSkew = "KubeadmVersionSkew"
	// PreflightCheckControlPlaneVersionSkew is accepted in the annotation
	// for Cluster API's sake; it only applies to managed topologies, which
	// krtt has not.
	PreflightCheckControlPlaneVersionSkew = "ControlPlaneVersionSkew"
)

// Condition types set on MachineSets (Paused too).
const (
	MachinesReadyCondition = "MachinesReady"
	ScalingUpCondition     = "ScalingUp"
	ScalingDownCondition   = "ScalingDown"
	RemediatingCondition   = "Remediating"
)

// MachineDeployment names.
const (
	// MachineDeploymentFinalizer keeps a MachineDeployment until its
	// MachineSets are gone.
	MachineDeploymentFinalizer = "cluster.krtt.dev/machinedeployment"
	// MachineTemplateHashLabel on a MachineSet of a deployment (and its
	// Machines) is the hash of the template revision it was made from.
	MachineTemplateHashLabel = "cluster.krtt.dev/machine-template-hash"
	// DeploymentNameLabel names the MachineDeployment of a MachineSet.
	DeploymentNameLabel = "cluster.krtt.dev/deployment-name"
	// RevisionAnnotation on a MachineSet is its revision number, and on a
	// MachineDeployment the revision of its current template.
	RevisionAnnotation = "machinedeployment.cluster.krtt.dev/revision"
	// DeploymentLabelsAnnotation and DeploymentAnnotationsAnnotation list,
	// comma separated, the label and annotation keys a MachineDeployment
	// copied onto a MachineSet (its template's labels, its own
	// annotations), so that a key it drops is removed from the set while
	// keys others added stay.
	DeploymentLabelsAnnotation      = "machinedeployment.cluster.krtt.dev/managed-labels"
	DeploymentAnnotationsAnnotation = "machinedeployment.cluster.krtt.dev/managed-annotations"
	// DesiredReplicasAnnotation on a MachineSet is the deployment's
	// spec.replicas when it was last sized; a different spec.replicas is
	// a scaling event, spread over the sets by size.
	DesiredReplicasAnnotation = "machinedeployment.cluster.krtt.dev/desired-replicas"
	// MaxReplicasAnnotation on a MachineSet is spec.replicas + maxSurge of
	// its deployment when it was last sized.
	MaxReplicasAnnotation = "machinedeployment.cluster.krtt.dev/max-replicas"
)

// Condition types set on MachineDeployments (Paused, Deleting, ScalingUp,
// ScalingDown and MachinesReady too); MachineSets of a MachineDeployment
// have MachinesUpToDate too.
const (
	AvailableCondition        = "Available"
	ProgressingCondition      = "Progressing"
	RollingOutCondition       = "RollingOut"
	MachinesUpToDateCondition = "MachinesUpToDate"
)

// ClusterSecretType is the type of the Secrets krtt writes for a Cluster
// (its generated <cluster>-kubeconfig), as Cluster API types its own.
const ClusterSecretType corev1.SecretType = "cluster.krtt.dev/secret"
