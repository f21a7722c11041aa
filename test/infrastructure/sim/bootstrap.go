package sim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simbootstrapconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=sim.krtt.dev,resources=simbootstrapconfigs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create

// bootstrapReconciler plays a bootstrap provider: it writes a data secret
// for every SimBootstrapConfig and reports it by the bootstrap contract.
type bootstrapReconciler struct {
	client client.Client
}

func setupBootstrap(mgr ctrl.Manager, _ Options) error {
	r := &bootstrapReconciler{client: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		For(&simv1.SimBootstrapConfig{}).
		// Only a data Secret's deletion needs the config again (to write
		// it anew): its creation comes from this reconciler, and a wake on
		// it would read the config from a cache that may not hold the status
		// just written, and send that status again.
		Owns(&corev1.Secret{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Named("sim-bootstrap").
		Complete(r)
}

// BootstrapSecretName is the name of the data secret of a SimBootstrapConfig.
func BootstrapSecretName(config string) string { return config + "-bootstrap" }

// Reconcile retries conflicts quietly.
func (r *bootstrapReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *bootstrapReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cfg := &simv1.SimBootstrapConfig{}
	if err := r.client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cfg.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	name := BootstrapSecretName(cfg.Name)
	secret := &corev1.Secret{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: cfg.Namespace, Name: name,
				Labels: map[string]string{"sim.krtt.dev/bootstrap-config": cfg.Name}},
			Type:       "cluster.krtt.dev/secret",
			StringData: map[string]string{"value": cloudInit(cfg), "format": format(cfg)},
		}
		if err := controllerutil.SetControllerReference(cfg, secret, r.client.Scheme()); err != nil {
			return reconcile.Result{}, err
		}
		if err := r.client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return reconcile.Result{}, fmt.Errorf("create bootstrap secret %s/%s: %w", cfg.Namespace, name, err)
		}
	case err != nil:
		return reconcile.Result{}, err
	}

	before := cfg.DeepCopy()
	cfg.Status.DataSecretName = ptr.To(name)
	cfg.Status.Initialization.DataSecretCreated = ptr.To(true)
	meta.SetStatusCondition(&cfg.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "DataSecretCreated",
		Message: "bootstrap data secret " + name + " created", ObservedGeneration: cfg.Generation,
	})
	if statusEqual(before.Status, cfg.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.client.Status().Patch(ctx, cfg, client.MergeFrom(before))
}

func format(cfg *simv1.SimBootstrapConfig) string {
	if cfg.Spec.Format != "" {
		return cfg.Spec.Format
	}
	return "cloud-config"
}

func cloudInit(cfg *simv1.SimBootstrapConfig) string {
	return fmt.Sprintf(`## template: jinja
#cloud-config
# simulated bootstrap data for %s/%s (sim.krtt.dev)
hostname: %s
runcmd:
  - echo "sim kubelet joins the cluster"
`, cfg.Namespace, cfg.Name, cfg.Name)
}
