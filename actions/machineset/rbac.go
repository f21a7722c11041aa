package machineset

// The MachineSet controller's permissions, generated into
// config/rbac/role.yaml by `make manifests` together with the Machine
// controller's (actions/machine/rbac.go). Reads come from the
// manager's cache (list, watch); get on machinesets is for the kit's
// uncached re-read after a status patch conflict. It creates Machines and
// the provider objects cloned from templates, patches Machines to adopt or
// release them and deletes them on scale-down and set deletion, and patches
// the OwnerRemediated condition of a Machine a health checker marked before
// it deletes it (machines/status); it reads the Cluster's control plane
// object for the preflight checks (its version) and its MachineDeployment's
// revision; setting
// blockOwnerDeletion on what it creates needs update on machinesets/finalizers
// under OwnerReferencesPermissionEnforcement.

// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinesets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinesets/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinesets/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=*,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedeployments,verbs=list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io;infrastructure.cluster.x-k8s.io;sim.krtt.dev,resources=*,verbs=list;watch;create;patch;delete
