package remote_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/krtt-dev/krtt/internal/remote"
)

// testCA makes a self-signed certificate authority (isCA false: a leaf)
// and returns its certificate and key as PEM.
func testCA(t *testing.T, key crypto.Signer, isCA bool, notBefore time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  isCA,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	switch k := key.(type) {
	case *rsa.PrivateKey:
		block = &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
	case *ecdsa.PrivateKey:
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		block = &pem.Block{Type: "PRIVATE KEY", Bytes: b}
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(block)
}

// TestNewKubeconfig: the kubeconfig names the endpoint, trusts the CA and
// carries a client certificate the CA signed for kubernetes-admin in
// system:masters, valid for a year, under Cluster API's entry names; an
// RSA and an EC CA both sign.
func TestNewKubeconfig(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caStart := now.Add(-time.Hour).Truncate(time.Second)
	for name, key := range map[string]crypto.Signer{"RSA": rsaKey, "EC": ecKey} {
		certPEM, keyPEM := testCA(t, key, true, caStart)
		data, err := remote.NewKubeconfig("c1", "c1.example.com", 6443, certPEM, keyPEM, now)
		if err != nil {
			t.Fatalf("%s CA: %v", name, err)
		}
		cfg, err := clientcmd.Load(data)
		if err != nil {
			t.Fatalf("%s CA: the kubeconfig does not load: %v", name, err)
		}
		if cfg.CurrentContext != "c1-admin@c1" {
			t.Errorf("%s CA: current context %q, want c1-admin@c1", name, cfg.CurrentContext)
		}
		ctx := cfg.Contexts["c1-admin@c1"]
		if ctx == nil || ctx.Cluster != "c1" || ctx.AuthInfo != "c1-admin" {
			t.Fatalf("%s CA: context %+v, want cluster c1 and user c1-admin", name, ctx)
		}
		cl := cfg.Clusters["c1"]
		if cl == nil || cl.Server != "https://c1.example.com:6443" {
			t.Fatalf("%s CA: cluster entry %+v, want server https://c1.example.com:6443", name, cl)
		}
		if string(cl.CertificateAuthorityData) != string(certPEM) {
			t.Errorf("%s CA: certificate-authority-data is not the CA's certificate", name)
		}
		user := cfg.AuthInfos["c1-admin"]
		if user == nil {
			t.Fatalf("%s CA: no user c1-admin", name)
		}
		block, _ := pem.Decode(user.ClientCertificateData)
		if block == nil {
			t.Fatalf("%s CA: no client certificate", name)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(certPEM)
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s CA: the client certificate does not verify as a client of the CA: %v", name, err)
		}
		if cert.Subject.CommonName != "kubernetes-admin" || strings.Join(cert.Subject.Organization, ",") != "system:masters" {
			t.Errorf("%s CA: subject %s, want CN=kubernetes-admin,O=system:masters", name, cert.Subject)
		}
		if !cert.NotAfter.Equal(now.Add(365*24*time.Hour)) || !cert.NotBefore.Equal(caStart) {
			t.Errorf("%s CA: valid %s to %s, want %s to a year from now", name, cert.NotBefore, cert.NotAfter, caStart)
		}
		if _, err := x509.ParsePKCS1PrivateKey(mustBlock(t, user.ClientKeyData)); err != nil {
			t.Errorf("%s CA: client key is not an RSA key: %v", name, err)
		}
	}
}

func mustBlock(t *testing.T, data []byte) []byte {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("no PEM block")
	}
	return block.Bytes
}

// TestNewKubeconfigRefuses: a CA Secret that cannot sign says which key is
// wrong.
func TestNewKubeconfigRefuses(t *testing.T) {
	now := time.Now()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, keyPEM := testCA(t, key, true, now)
	leafPEM, leafKeyPEM := testCA(t, key, false, now)
	_, otherKeyPEM := testCA(t, other, true, now)
	for _, tc := range []struct {
		name          string
		cert, key     []byte
		wantInMessage string
	}{
		{"no certificate", nil, keyPEM, "tls.crt: no PEM CERTIFICATE block"},
		{"no key", caPEM, []byte("not a key"), "tls.key: no PEM"},
		{"not a CA", leafPEM, leafKeyPEM, "is not a certificate authority"},
		{"key of another CA", caPEM, otherKeyPEM, "sign the client certificate with the CA"},
	} {
		_, err := remote.NewKubeconfig("c1", "h", 6443, tc.cert, tc.key, now)
		if err == nil || !strings.Contains(err.Error(), tc.wantInMessage) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.wantInMessage)
		}
	}
}

func TestClusterOfCASecret(t *testing.T) {
	for in, want := range map[string]string{"c1-ca": "c1", "a-b-ca": "a-b", "-ca": "", "c1-kubeconfig": "", "ca": ""} {
		got, ok := remote.ClusterOfCASecret(in)
		if ok != (want != "") || got != want && ok {
			t.Errorf("ClusterOfCASecret(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
