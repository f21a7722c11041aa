package remote

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// CASecretName is the name of the Secret holding a Cluster's certificate
// authority (keys tls.crt and tls.key), as Cluster API names it: a Cluster
// without a control plane object gets its kubeconfig signed by it.
func CASecretName(cluster string) string { return cluster + "-ca" }

// ClusterOfCASecret returns the Cluster a CA Secret belongs to.
func ClusterOfCASecret(secretName string) (string, bool) {
	name, ok := strings.CutSuffix(secretName, "-ca")
	return name, ok && name != ""
}

// Keys of a CA Secret (kubernetes.io/tls).
const (
	CACertKey = "tls.crt"
	CAKeyKey  = "tls.key"
)

// AdminCertValidity is how long the client certificate of a generated
// kubeconfig is valid (Cluster API's certs.DefaultCertDuration).
const AdminCertValidity = 365 * 24 * time.Hour

// Subject of the generated kubeconfig's client certificate: the cluster
// administrator kubeadm sets up.
const (
	AdminCommonName   = "kubernetes-admin"
	AdminOrganization = "system:masters"
)

// NewKubeconfig returns a kubeconfig for the API server at host:port of the
// Cluster named cluster, trusting the CA and authenticating with a fresh
// RSA 2048 key whose certificate the CA signs for AdminCommonName in
// AdminOrganization, valid from the CA's own start until now plus
// AdminCertValidity. The names follow Cluster API's util/kubeconfig: the
// cluster entry is the Cluster's name, the user <cluster>-admin, the
// context <cluster>-admin@<cluster>.
func NewKubeconfig(cluster, host string, port int32, caCertPEM, caKeyPEM []byte, now time.Time) ([]byte, error) {
	caCert, err := parseCert(caCertPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CACertKey, err)
	}
	caKey, err := parseKey(caKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CAKeyKey, err)
	}
	if !caCert.IsCA {
		return nil, fmt.Errorf("%s: the certificate (%s) is not a certificate authority", CACertKey, caCert.Subject)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("client key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: AdminCommonName, Organization: []string{AdminOrganization}},
		NotBefore:    caCert.NotBefore,
		NotAfter:     now.Add(AdminCertValidity).UTC(),
		KeyUsage:     x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("sign the client certificate with the CA: %w", err)
	}
	user := cluster + "-admin"
	contextName := user + "@" + cluster
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{
		Server:                   ServerURL(host, port),
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caCert.Raw}),
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: user}
	cfg.CurrentContext = contextName
	return clientcmd.Write(*cfg)
}

// ServerURL is the address of the API server at a control plane endpoint.
func ServerURL(host string, port int32) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(int(port)))
}

func parseCert(data []byte) (*x509.Certificate, error) {
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
	return nil, errors.New("no PEM CERTIFICATE block")
}

// parseKey reads a PKCS#1 RSA, SEC 1 EC or PKCS#8 private key that can
// sign.
func parseKey(data []byte) (crypto.Signer, error) {
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		switch block.Type {
		case "RSA PRIVATE KEY":
			return x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			return x509.ParseECPrivateKey(block.Bytes)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, err
			}
			switch k := k.(type) {
			case *rsa.PrivateKey, *ecdsa.PrivateKey:
				return k.(crypto.Signer), nil
			}
			return nil, fmt.Errorf("a %T key cannot sign certificates here (RSA or ECDSA)", k)
		}
	}
	return nil, errors.New("no PEM RSA PRIVATE KEY, EC PRIVATE KEY or PRIVATE KEY block")
}
