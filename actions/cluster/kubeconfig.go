package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
)

func registerKubeconfig(reg *engine.Registry[*Scope]) {
	reg.Bool("kubeconfigSecret", func(s *Scope) bool { return s.KubeconfigSecret })
	reg.Bool("clusterCASecret", func(s *Scope) bool { return s.ClusterCASecret })
	reg.Action("GenerateKubeconfig", "Create the <cluster>-kubeconfig Secret (owned by the Cluster, key value): a kubeconfig for https://<spec.controlPlaneEndpoint> with a client certificate for kubernetes-admin (system:masters, valid a year) signed by the CA in the <cluster>-ca Secret; fail when that Secret cannot be read or cannot sign.", generateKubeconfig)
}

// readSecrets looks up the kubeconfig and CA Secrets by their metadata
// (the manager caches only Secrets' metadata). A kubeconfig Secret that
// could not be looked up counts as there: nothing is generated over what
// may exist.
func (o *Observer) readSecrets(ctx context.Context, s *Scope) {
	var err error
	if s.KubeconfigSecret, err = secretExists(ctx, o.Client, client.ObjectKey{Namespace: s.Key.Namespace, Name: remote.SecretName(s.Key.Name)}); err != nil {
		s.KubeconfigSecret = true
	}
	if err == nil {
		s.ClusterCASecret, err = secretExists(ctx, o.Client, client.ObjectKey{Namespace: s.Key.Namespace, Name: remote.CASecretName(s.Key.Name)})
	}
	if err != nil && s.Err == nil {
		s.Err = err
	}
}

func secretExists(ctx context.Context, c client.Reader, key client.ObjectKey) (bool, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	switch err := c.Get(ctx, key, m); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look up Secret %s: %w", key.Name, err)
	}
	return true, nil
}

// generateKubeconfig writes the Secret Cluster API's reconcileKubeconfig
// writes for a Cluster no control plane provider serves. The Secret's
// creation wakes the Cluster, which then reaches its Node side through it.
func generateKubeconfig(ctx context.Context, s *Scope) engine.Outcome {
	c := s.Cluster
	caKey := client.ObjectKey{Namespace: c.Namespace, Name: remote.CASecretName(c.Name)}
	ca := &corev1.Secret{}
	if err := s.Secrets.Get(ctx, caKey, ca); err != nil {
		return engine.Failf("read the CA Secret %s: %v", caKey.Name, err)
	}
	data, err := remote.NewKubeconfig(c.Name, c.Spec.ControlPlaneEndpoint.Host, c.Spec.ControlPlaneEndpoint.Port,
		ca.Data[remote.CACertKey], ca.Data[remote.CAKeyKey], s.Now)
	if err != nil {
		return engine.Failf("Secret %s cannot sign a kubeconfig: %v", caKey.Name, err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:            remote.SecretName(c.Name),
			Namespace:       c.Namespace,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: c.Name},
			OwnerReferences: []metav1.OwnerReference{ownerReference(c)},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{remote.SecretKey: data},
	}
	if err := s.Client.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		return engine.Failf("create Secret %s: %v", sec.Name, err)
	}
	return engine.OKf("Secret %s: a kubeconfig for %s signed by Secret %s", sec.Name,
		remote.ServerURL(c.Spec.ControlPlaneEndpoint.Host, c.Spec.ControlPlaneEndpoint.Port), caKey.Name)
}
