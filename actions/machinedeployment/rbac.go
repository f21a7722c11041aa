package machinedeployment

// The MachineDeployment controller's permissions, generated into
// config/rbac/role.yaml by `make manifests`. Reads come from the manager's
// cache (list, watch); get on machinedeployments is for the kit's uncached
// re-read after a status patch conflict. It creates, scales (patch) and
// deletes its MachineSets; setting blockOwnerDeletion on them needs update
// on machinedeployments/finalizers under OwnerReferencesPermissionEnforcement.
// It reads its Machines and the templates (only to meet an API error early)
// with the Machine and MachineSet controllers' list and watch.

// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedeployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedeployments/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinesets,verbs=list;watch;create;patch;delete
