package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/localcp"
	"github.com/krtt-dev/krtt/internal/remote"
)

// workload is one Cluster of a -workload-clusters run: its own API server
// (a local control plane like the bench's) and a fast client to it.
type workload struct {
	cluster string
	cp      *localcp.ControlPlane
	client  client.WithWatch
}

// startWorkloads starts k local control planes next to the bench's, in
// parallel (each takes a while on a loaded machine), under dir/workload-I.
// stop stops the ones that started.
func startWorkloads(dir string, k int) (ws []*workload, stop func() error, err error) {
	ws = make([]*workload, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cp, err := localcp.Start(localcp.Options{Dir: filepath.Join(dir, fmt.Sprintf("workload-%d", i)), Fresh: true, Port: -1, Log: logWriter{}})
			if err != nil {
				errs[i] = fmt.Errorf("workload cluster %d: %w", i, err)
				return
			}
			fast := *cp.Config
			fast.QPS, fast.Burst = 2000, 4000
			c, err := client.NewWithWatch(&fast, client.Options{Scheme: cp.Scheme})
			ws[i] = &workload{cluster: fmt.Sprintf("wc-%d", i), cp: cp, client: c}
			errs[i] = err
		}()
	}
	wg.Wait()
	stop = func() error {
		var all []error
		for _, w := range ws {
			if w != nil {
				all = append(all, w.cp.Stop())
			}
		}
		return errors.Join(all...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	return ws, stop, nil
}

// hostOf is the host:port of an API server URL, as client-go's host label
// of rest_client_requests_total names it.
func hostOf(apiServer string) (string, error) {
	u, err := url.Parse(apiServer)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}

// workloadLifecycle is lifecycle with the Machines spread round-robin over
// the workload clusters' Clusters: each Cluster gets its kubeconfig Secret
// and a control-plane Machine first (its workers' Nodes are drained and
// deleted only with one), then N workers are created → Running, Pods go on
// every Node in its own workload cluster, every worker is deleted → gone.
func workloadLifecycle(ctx context.Context, b *bench, f flavour, ns string, proc *controllerProc, res *Result) (err error) {
	logf("creating %d Clusters, each with its kubeconfig Secret and a control-plane Machine", len(b.workloads))
	cps := make([]string, len(b.workloads))
	for i, w := range b.workloads {
		if err := b.client.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.cluster}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err := remote.WriteSecret(ctx, b.client, ns, w.cluster, w.cp.Config); err != nil {
			return err
		}
		if err := w.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		cps[i] = "cp-" + w.cluster
		if err := createClusterMachine(ctx, b, f, ns, cps[i], w.cluster, true); err != nil {
			return err
		}
	}
	cp := poll{gvk: f.machine, namespace: ns, what: "Running", done: phaseIs("Running"), describe: phaseOf,
		names: cps, timeout: 2*time.Minute + 30*time.Second*time.Duration(len(cps))}
	if _, err := cp.wait(ctx, b.client); err != nil {
		return fmt.Errorf("control-plane Machines: %w", err)
	}

	finish, err := sampleResources(proc, b, res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, finish()) }()

	names := make([]string, b.o.n)
	clusterOf := make([]*workload, b.o.n)
	for i := range names {
		names[i] = fmt.Sprintf("m-%04d", i)
		clusterOf[i] = b.workloads[i%len(b.workloads)]
	}

	logf("creating %d Machines over %d Clusters", b.o.n, len(b.workloads))
	created := make([]time.Time, b.o.n)
	t0 := time.Now()
	if err := parallel(b.o.workers, b.o.n, func(i int) error {
		created[i] = time.Now()
		return createClusterMachine(ctx, b, f, ns, names[i], clusterOf[i].cluster, false)
	}); err != nil {
		return err
	}
	running := poll{gvk: f.machine, namespace: ns, what: "Running", done: phaseIs("Running"), describe: phaseOf,
		names: names, timeout: b.o.timeout}
	at, err := running.wait(ctx, b.client)
	if err != nil {
		return err
	}
	res.CreateToRunning = newHalf(latest(at).Sub(t0), durations(names, created, at))
	logf("all %d Machines Running in %.1fs", b.o.n, res.CreateToRunning.WallSeconds)

	if err := bindPodsInWorkloads(ctx, b, f, ns, names, clusterOf); err != nil {
		return err
	}

	return deleteAll(ctx, b, f, ns, names, res)
}

// createClusterMachine is createMachine for a Machine of the named Cluster.
func createClusterMachine(ctx context.Context, b *bench, f flavour, ns, name, cluster string, controlPlane bool) error {
	of := f
	of.newMachine = func(ns, name string, controlPlane bool) *unstructured.Unstructured {
		m := f.newMachine(ns, name, controlPlane)
		_ = unstructured.SetNestedField(m.Object, cluster, "spec", "clusterName")
		return m
	}
	return createMachine(ctx, b.client, of, ns, name, controlPlane)
}

// bindPodsInWorkloads puts the Pods of each worker's Node in the workload
// cluster the Node joined, all clusters at once.
func bindPodsInWorkloads(ctx context.Context, b *bench, f flavour, ns string, machines []string, clusterOf []*workload) error {
	nodeOf, err := nodesOf(ctx, b, f, ns)
	if err != nil {
		return err
	}
	nodes := map[*workload][]string{}
	for i, name := range machines {
		if nodeOf[name] == "" {
			return fmt.Errorf("Machine %s/%s is Running without status.nodeRef", ns, name)
		}
		nodes[clusterOf[i]] = append(nodes[clusterOf[i]], nodeOf[name])
	}
	errs := make(chan error, len(nodes))
	for w, onIt := range nodes {
		go func() { errs <- runPods(ctx, b, w.client, ns, onIt) }()
	}
	var all []error
	for range nodes {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}
