package sim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/internal/remote"
)

// disconnectReconciler closes the connection to a workload cluster whose
// kubeconfig Secret is gone, which stops the node side the sim runs there.
// The cloud would only notice at the Cluster's next SimMachine event; until
// then the kubelet kept heartbeating a cluster that was usually gone too (a
// test's, after the test), retrying refused connections for minutes.
type disconnectReconciler struct {
	client   client.Client
	clusters *remote.Cache
}

func setupDisconnect(mgr ctrl.Manager, clusters *remote.Cache) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Secret{}, builder.OnlyMetadata, builder.WithPredicates(remote.KubeconfigSecrets(), predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Named("sim-workload-disconnect").
		Complete(&disconnectReconciler{client: mgr.GetClient(), clusters: clusters})
}

func (r *disconnectReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster, ok := remote.ClusterOfSecret(req.Name)
	if !ok {
		return reconcile.Result{}, nil
	}
	// Deleted and created again since the event: the connection stays (the
	// cloud reopens it for a new Secret version anyway).
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.client.Get(ctx, req.NamespacedName, meta); !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	r.clusters.Disconnect(client.ObjectKey{Namespace: req.Namespace, Name: cluster})
	return reconcile.Result{}, nil
}
