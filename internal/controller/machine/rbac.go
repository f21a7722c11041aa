package machine

// The operator's permissions, generated into config/rbac/role.yaml by `make manifests`.

// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machines/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io;infrastructure.cluster.x-k8s.io;controlplane.cluster.x-k8s.io;sim.krtt.dev,resources=*,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get;list;watch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update
