package features

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
)

// Steps for the kubeconfig a Cluster without a control plane object gets
// from its certificate authority (row K23).
func registerKubeconfigSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the Secret "([^"]*)" holding the certificate authority of the Cluster "([^"]*)" is created$`, w.createClusterCA)
	sc.Step(`^the Cluster "([^"]*)" has no kubeconfig Secret$`, w.noKubeconfigSecret)
	sc.Step(`^the Cluster "([^"]*)" gets a kubeconfig Secret for "([^"]*)" signed by its certificate authority$`, w.generatedKubeconfig)
}

// createClusterCA writes a self-signed CA as kubeadm leaves one for Cluster
// API (kubernetes.io/tls: tls.crt, tls.key) and keeps its certificate to
// verify what it signs.
func (w *world) createClusterCA(ctx context.Context, name, cluster string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cluster + "-ca"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if w.clusterCA, err = x509.ParseCertificate(der); err != nil {
		return err
	}
	return w.h.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	})
}

// noKubeconfigSecret checks the Secret is absent now: the step follows one
// that waited for the reconcile that would have written it.
func (w *world) noKubeconfigSecret(ctx context.Context, cluster string) error {
	err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: remote.SecretName(cluster)}, &corev1.Secret{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("the Cluster %s has a kubeconfig Secret", cluster)
}

// generatedKubeconfig waits for the Secret and checks it as Cluster API's
// reconcileKubeconfig writes it: owned by the Cluster, labelled with its
// name, a kubeconfig for the endpoint that trusts the CA, and a client
// certificate the CA signed for kubernetes-admin in system:masters.
func (w *world) generatedKubeconfig(ctx context.Context, cluster, server string) error {
	sec := &corev1.Secret{}
	err := w.eventually(ctx, "kubeconfig Secret of "+cluster, func(ctx context.Context) error {
		return w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: remote.SecretName(cluster)}, sec)
	})
	if err != nil {
		return err
	}
	c, err := w.cluster1(ctx, cluster)
	if err != nil {
		return err
	}
	if refs := sec.OwnerReferences; len(refs) != 1 || refs[0].UID != c.UID || refs[0].Kind != "Cluster" {
		return fmt.Errorf("Secret %s is owned by %+v, want only the Cluster %s", sec.Name, refs, cluster)
	}
	if sec.Labels[clusterv1.ClusterNameLabel] != cluster || sec.Type != clusterv1.ClusterSecretType {
		return fmt.Errorf("Secret %s has labels %v and type %q", sec.Name, sec.Labels, sec.Type)
	}
	cfg, err := clientcmd.Load(sec.Data[remote.SecretKey])
	if err != nil {
		return fmt.Errorf("Secret %s key %s: %w", sec.Name, remote.SecretKey, err)
	}
	ctxName := cluster + "-admin@" + cluster
	kctx := cfg.Contexts[ctxName]
	if cfg.CurrentContext != ctxName || kctx == nil || cfg.Clusters[kctx.Cluster] == nil || cfg.AuthInfos[kctx.AuthInfo] == nil {
		return fmt.Errorf("Secret %s: current context %q, want %s with its cluster and user", sec.Name, cfg.CurrentContext, ctxName)
	}
	if got := cfg.Clusters[kctx.Cluster].Server; got != server {
		return fmt.Errorf("Secret %s names the server %q, want %q", sec.Name, got, server)
	}
	block, _ := pem.Decode(cfg.AuthInfos[kctx.AuthInfo].ClientCertificateData)
	if block == nil {
		return fmt.Errorf("Secret %s has no client certificate", sec.Name)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AddCert(w.clusterCA)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("the client certificate of Secret %s is not a client certificate of the CA: %w", sec.Name, err)
	}
	if cert.Subject.CommonName != remote.AdminCommonName || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != remote.AdminOrganization {
		return fmt.Errorf("the client certificate of Secret %s is for %s", sec.Name, cert.Subject)
	}
	return nil
}
