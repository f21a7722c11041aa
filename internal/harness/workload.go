package harness

import (
	"context"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/internal/localcp"
	"github.com/krtt-dev/krtt/internal/remote"
)

// workload is a second control plane, started on first use, that plays the
// workload cluster of Clusters given a kubeconfig Secret for it.
type workload struct {
	once sync.Once
	cp   *localcp.ControlPlane
	dir  string
	err  error
}

// Workload returns the workload cluster's control plane, starting it on
// first use (tests without workload clusters never pay for it).
func (h *Harness) Workload() (*localcp.ControlPlane, error) {
	h.workload.once.Do(func() {
		dir, err := os.MkdirTemp("", "krtt-workload-")
		if err != nil {
			h.workload.err = err
			return
		}
		h.workload.dir = dir
		h.workload.cp, h.workload.err = localcp.Start(localcp.Options{Dir: dir, Port: -1})
	})
	return h.workload.cp, h.workload.err
}

// stopWorkload stops the workload control plane, if it was started.
func (h *Harness) stopWorkload() error {
	if h.workload.cp == nil {
		return nil
	}
	err := h.workload.cp.Stop()
	_ = os.RemoveAll(h.workload.dir)
	return err
}

// KubeconfigSecret creates (or replaces the data of) the Secret that makes
// cfg's API server the workload cluster of Cluster ns/cluster.
func KubeconfigSecret(ctx context.Context, c client.Client, ns, cluster string, cfg *rest.Config) error {
	data, err := remote.Kubeconfig(cfg, cluster)
	if err != nil {
		return err
	}
	return SetKubeconfigSecret(ctx, c, ns, cluster, data)
}

// SetKubeconfigSecret writes data as the kubeconfig of Cluster ns/cluster.
func SetKubeconfigSecret(ctx context.Context, c client.Client, ns, cluster string, data []byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: remote.SecretName(cluster)},
		Data: map[string][]byte{remote.SecretKey: data}}
	err := c.Create(ctx, s)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), cur); err != nil {
		return err
	}
	cur.Data = s.Data
	return c.Update(ctx, cur)
}

// workloadOptions probe workload clusters often, so a stopped API server is
// Unreachable within a few seconds of a scenario stopping it.
var workloadOptions = remote.Options{HealthInterval: 500 * time.Millisecond, HealthTimeout: 2 * time.Second, FailureThreshold: 2}
