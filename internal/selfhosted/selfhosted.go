// Package selfhosted is the opt-in part of the operator's permissions: what
// it needs only for self-hosted Clusters, those without a
// <cluster>-kubeconfig Secret, whose Nodes, Pods and volumes live in the
// management cluster itself.
//
// The markers below are generated into config/rbac-self-hosted/role.yaml by
// `make manifests`, apart from the default role (config/rbac), which covers
// only Clusters with a workload kubeconfig Secret: there every Node-side
// request goes with the Secret's credentials to the workload cluster, and
// the operator's ServiceAccount needs no Node, Pod, eviction,
// PodDisruptionBudget or volume rights in the management cluster (Cluster
// API's manager holds none either). A package of its own keeps the markers
// out of the default role's controller-gen run (paths=./actions/...).
//
// Every Node-side read goes through the manager's cache (list and watch);
// the writes are the drain (evict, or delete with grace period 0 when a
// deletion is forced), the Node's deletion and the cordon (patch), and the
// forced deletion of a Node's VolumeAttachments. Namespaces are read for
// MachineDrainRules' namespaceSelector, DaemonSets for the drain's skip of
// their Pods, claims and volumes for the volume detach wait.
package selfhosted

// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=list;watch;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=list;watch

// Flag is the operator's command-line flag that serves self-hosted
// Clusters.
const Flag = "self-hosted-clusters"

// RBACDir is where the component's ClusterRole and binding are, relative to
// the repository (and in the release, applied with kubectl apply -k).
const RBACDir = "config/rbac-self-hosted"

// Hint is what a Cluster without a kubeconfig Secret says while the
// operator does not serve self-hosted Clusters: how to turn them on.
const Hint = "self-hosted Clusters are not enabled: give the Cluster a <cluster>-kubeconfig Secret, or apply " +
	RBACDir + " and start the operator with --" + Flag
