package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/harness"
)

// Steps for workload clusters: the harness's second control plane holds
// the Nodes and Pods of a Cluster given a <cluster>-kubeconfig Secret.
func registerWorkloadSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a Cluster "([^"]*)" whose Nodes live in the workload cluster$`, w.aRemoteCluster)
	sc.Step(`^a Cluster "([^"]*)" whose kubeconfig Secret has credentials the workload cluster refuses$`, w.aClusterWithRefusedCredentials)
	sc.Step(`^a Cluster "([^"]*)" whose kubeconfig Secret names an API server that does not answer$`, w.aClusterWithDeadServer)
	sc.Step(`^the kubeconfig Secret of Cluster "([^"]*)" is (?:created|fixed) for the workload cluster$`, w.kubeconfigSecretFor)
	sc.Step(`^the kubeconfig Secret of Cluster "([^"]*)" names an API server that does not answer$`, w.deadServerSecretFor)
	sc.Step(`^a Node joins for "([^"]*)" in the workload cluster$`, w.nodeJoinsInWorkload)
	sc.Step(`^the Node of "([^"]*)" is not in the management cluster$`, w.nodeNotInManagement)
	sc.Step(`^the workload cluster's API server stops$`, w.workloadAPIServerStops)
	sc.Step(`^the workload cluster's API server starts again$`, w.workloadAPIServerStarts)
	sc.Step(`^the Cluster "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)" and message containing "([^"]*)"$`, w.clusterHasCondition)
	sc.Step(`^the Cluster "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)" and message "([^"]*)"$`, w.clusterHasConditionSaying)
	sc.Step(`^the Cluster "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)"$`, func(ctx context.Context, name, ctype, status, reason string) error {
		return w.clusterHasCondition(ctx, name, ctype, status, reason, "")
	})
	sc.Step(`^the Cluster "([^"]*)" counts (\d+) Machines?, (\d+) Ready$`, w.clusterCounts)
	sc.Step(`^the Cluster "([^"]*)" is deleted$`, w.deleteCluster)
	sc.After(func(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
		// A scenario that failed while the API server was down must not
		// leave it down for the next ones.
		if w.workloadDown {
			if e := w.workloadAPIServerStarts(ctx); e != nil {
				return ctx, e
			}
		}
		return ctx, nil
	})
}

// workloadClient is an admin client of the workload cluster, with the
// scenario's namespace created there too (Pods and budgets live in it).
func (w *world) workloadClient(ctx context.Context) (client.Client, *rest.Config, error) {
	cp, err := w.h.Workload()
	if err != nil {
		return nil, nil, fmt.Errorf("start the workload cluster: %w", err)
	}
	err = cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, nil, err
	}
	return cp.Client, cp.Config, nil
}

func (w *world) aRemoteCluster(ctx context.Context, name string) error {
	if err := w.aCluster(ctx, name); err != nil {
		return err
	}
	return w.kubeconfigSecretFor(ctx, name)
}

// kubeconfigSecretFor writes the Secret that makes the workload control
// plane the Cluster's workload cluster; the scenario's Nodes and Pods move
// there.
func (w *world) kubeconfigSecretFor(ctx context.Context, cluster string) error {
	c, cfg, err := w.workloadClient(ctx)
	if err != nil {
		return err
	}
	w.nodes = c
	return remote.WriteSecret(ctx, w.h.Client, w.ns, cluster, cfg)
}

func (w *world) aClusterWithRefusedCredentials(ctx context.Context, name string) error {
	return w.aClusterWithSecret(ctx, name, func(cfg *rest.Config) {
		cfg.CertData, cfg.KeyData, cfg.BearerToken = nil, nil, "a-token-the-api-server-does-not-know"
	})
}

// aClusterWithDeadServer names port 1 of the loopback address, where
// nothing listens: every connection attempt is refused at once.
func (w *world) aClusterWithDeadServer(ctx context.Context, name string) error {
	return w.aClusterWithSecret(ctx, name, deadServer)
}

// deadServerSecretFor gives an existing Cluster such a Secret.
func (w *world) deadServerSecretFor(ctx context.Context, name string) error {
	return w.spoiledSecretFor(ctx, name, deadServer)
}

func deadServer(cfg *rest.Config) { cfg.Host = "https://127.0.0.1:1" }

// aClusterWithSecret gives a new Cluster a kubeconfig Secret for the
// workload cluster, changed by spoil; its Nodes are the workload cluster's.
// The Secret comes once the Cluster is set up (self-hosted until then), as
// a control plane provider's does: the reconcile it wakes opens the
// connection and decides on its first attempt, so a scenario sees what a
// Cluster shows while its connection is being established, however long
// the Cluster's own setup took.
func (w *world) aClusterWithSecret(ctx context.Context, name string, spoil func(*rest.Config)) error {
	if err := w.aCluster(ctx, name); err != nil {
		return err
	}
	if err := w.clusterHasCondition(ctx, name, "WorkloadClusterReachable", "True", "SelfHosted", ""); err != nil {
		return err
	}
	return w.spoiledSecretFor(ctx, name, spoil)
}

// spoiledSecretFor writes the Cluster's kubeconfig Secret for the workload
// cluster, changed by spoil; its Nodes are the workload cluster's.
func (w *world) spoiledSecretFor(ctx context.Context, name string, spoil func(*rest.Config)) error {
	c, cfg, err := w.workloadClient(ctx)
	if err != nil {
		return err
	}
	w.nodes = c
	cfg = rest.CopyConfig(cfg)
	spoil(cfg)
	return remote.WriteSecret(ctx, w.h.Client, w.ns, name, cfg)
}

func (w *world) nodeJoinsInWorkload(ctx context.Context, name string) error {
	c, _, err := w.workloadClient(ctx)
	if err != nil {
		return err
	}
	_, err = harness.JoinNode(ctx, c, w.nodeName(name), harness.ProviderID(w.ns, name))
	return err
}

func (w *world) nodeNotInManagement(ctx context.Context, name string) error {
	err := w.h.Client.Get(ctx, client.ObjectKey{Name: w.nodeName(name)}, &corev1.Node{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("the management cluster has the Node %s", w.nodeName(name))
	}
	return err
}

// workloadAPIServerStops kills the workload cluster's kube-apiserver (etcd
// keeps its state). The scenario's kubelets pause with it: they could not
// reach it either.
func (w *world) workloadAPIServerStops(context.Context) error {
	cp, err := w.h.Workload()
	if err != nil {
		return err
	}
	w.pausedKubelets, w.kubelets = w.kubelets, map[string]bool{}
	w.workloadDown = true
	return cp.StopAPIServer()
}

func (w *world) workloadAPIServerStarts(context.Context) error {
	cp, err := w.h.Workload()
	if err != nil {
		return err
	}
	if err := cp.StartAPIServer(); err != nil {
		return err
	}
	w.workloadDown = false
	for n := range w.pausedKubelets {
		w.kubelets[n] = true
	}
	return nil
}

// clusterHasCondition reads \n in msg as a line break, as the tables write
// one (a Gherkin string has no escapes of its own).
func (w *world) clusterHasCondition(ctx context.Context, name, ctype, status, reason, msg string) error {
	msg = strings.ReplaceAll(msg, `\n`, "\n")
	return w.clusterConditionMatching(ctx, name, ctype, status, reason, func(m string) bool { return strings.Contains(m, msg) })
}

// clusterHasConditionSaying matches the whole message.
func (w *world) clusterHasConditionSaying(ctx context.Context, name, ctype, status, reason, msg string) error {
	msg = strings.ReplaceAll(msg, `\n`, "\n")
	return w.clusterConditionMatching(ctx, name, ctype, status, reason, func(m string) bool { return m == msg })
}

func (w *world) clusterConditionMatching(ctx context.Context, name, ctype, status, reason string, matches func(string) bool) error {
	return w.eventually(ctx, fmt.Sprintf("Cluster condition %s reason %s", ctype, reason), func(ctx context.Context) error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, ctype)
		if cond == nil || string(cond.Status) != status || cond.Reason != reason || !matches(cond.Message) {
			return fmt.Errorf("%s = %+v", ctype, cond)
		}
		return nil
	})
}

func (w *world) clusterCounts(ctx context.Context, name string, total, ready int) error {
	return w.eventually(ctx, "Cluster machine counts", func(ctx context.Context) error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		if got := c.Status.Machines; int(got.Total) != total || int(got.Ready) != ready {
			return fmt.Errorf("status.machines %+v, want total %d ready %d", got, total, ready)
		}
		return nil
	})
}

func (w *world) deleteCluster(ctx context.Context, name string) error {
	return w.h.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}
