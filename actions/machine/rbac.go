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
// kubeconfig once per workload cluster connection.

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
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io;infrastructure.cluster.x-k8s.io;controlplane.cluster.x-k8s.io;sim.krtt.dev,resources=*,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=list;watch;delete
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedrainrules,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
