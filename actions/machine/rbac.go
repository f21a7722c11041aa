package machine

// The operator's permissions, generated into config/rbac/role.yaml by `make manifests`.
//
// test/security proves them: a full lifecycle runs as a ServiceAccount bound
// only to the generated role and must not be refused, and every verb granted
// here must be used by it (or be listed there with the reason). Every read
// goes through the manager's cache, so reads need list and watch; the one
// exception is get on machines: after a status patch conflict the kit re-reads
// the Machine uncached to rebase its change onto the newest version.
// Secrets are watched as metadata only (a <cluster>-kubeconfig Secret appearing
// or changing wakes the Cluster's Machines), and get reads such a Secret's
// kubeconfig once per workload cluster connection. A control plane object is
// only read (the Machine counts its Cluster's control plane), never patched
// or deleted by the Machine controller.
//
// No Node, Pod, eviction, PodDisruptionBudget or volume right is granted
// here: in the workload clusters the Secret's credentials carry them, and in
// the management cluster they are needed only for self-hosted Clusters, the
// opt-in component config/rbac-self-hosted (markers in internal/selfhosted,
// the operator's --self-hosted-clusters).

// The operator never deletes a Machine, nor writes machines/finalizers; on API
// servers with the OwnerReferencesPermissionEnforcement admission plugin
// (OpenShift enables it) changing an object's ownerReferences needs delete on
// it (the Cluster owner set on a Machine), and setting blockOwnerDeletion needs
// update on the owner's finalizers (the Machine as controller of its provider
// objects).

// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=clusters,verbs=list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io;infrastructure.cluster.x-k8s.io;sim.krtt.dev,resources=*,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=*,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedrainrules,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinesets;machinedeployments,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
