package cluster

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// secretReader serves Secrets by name.
type secretReader map[string]*corev1.Secret

func (r secretReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s, ok := r[key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	s.DeepCopyInto(obj.(*corev1.Secret))
	return nil
}

func (secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("secretReader lists nothing")
}

// TestGenerateKubeconfigFails: a CA Secret that is gone or cannot sign
// fails the row with the Secret and the key named, before anything is
// written (the Scope has no client to write with).
func TestGenerateKubeconfigFails(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
		Spec: clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "h", Port: 6443}}}
	for _, tc := range []struct {
		name    string
		secrets secretReader
		want    string
	}{
		{"gone", secretReader{}, `read the CA Secret c1-ca: secrets "c1-ca" not found`},
		{"no certificate", secretReader{"c1-ca": {Data: map[string][]byte{"tls.key": []byte("x")}}},
			"Secret c1-ca cannot sign a kubeconfig: tls.crt: no PEM CERTIFICATE block"},
	} {
		out := generateKubeconfig(context.Background(), &Scope{Found: true, Cluster: c, Secrets: tc.secrets})
		if out.Status != engine.Failed || out.Message != tc.want {
			t.Errorf("%s: outcome %+v, want Failed %q", tc.name, out, tc.want)
		}
	}
}
