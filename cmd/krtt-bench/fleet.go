package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
)

// fleetCluster is one Cluster of a run that spreads the Machines over
// several (-workload-clusters, -instances): its name, the watch-filter
// value of the operator instance that manages it (empty with one
// instance), and its workload API server (nil: self-hosted, the Node side
// is the management cluster).
type fleetCluster struct {
	name, filter string
	workload     *workload
}

// instanceFilter is the --watch-filter value of instance i of -instances.
func instanceFilter(i int) string { return fmt.Sprintf("instance-%d", i) }

// layFleet lays out the Clusters of a run: one per workload cluster, else
// one per instance when there are several, none for a plain run (the
// flavour's one Cluster). Cluster i is managed by instance i mod instances,
// and labelled for it, as a user splits a fleet.
func layFleet(workloads []*workload, instances int) []fleetCluster {
	n := len(workloads)
	if n == 0 && instances > 1 {
		n = instances
	}
	out := make([]fleetCluster, n)
	for i := range out {
		c := fleetCluster{name: fmt.Sprintf("bench-%d", i)}
		if len(workloads) > 0 {
			c.name, c.workload = workloads[i].cluster, workloads[i]
		}
		if instances > 1 {
			c.filter = instanceFilter(i % instances)
		}
		out[i] = c
	}
	return out
}

// clusterOf is the Cluster of worker Machine i: round-robin.
func (b *bench) clusterOf(i int) fleetCluster { return b.clusters[i%len(b.clusters)] }

// workersOf counts the worker Machines the instance with this watch-filter
// value manages (all N for an unfiltered controller).
func (b *bench) workersOf(filter string) int {
	if filter == "" || len(b.clusters) == 0 {
		return b.o.n
	}
	n := 0
	for i := range b.o.n {
		if b.clusterOf(i).filter == filter {
			n++
		}
	}
	return n
}

// spreadLifecycle is lifecycle with the Machines spread round-robin over
// the fleet's Clusters: each Cluster (labelled for its instance, with its
// kubeconfig Secret when it has a workload cluster) gets a control-plane
// Machine first (its workers' Nodes are drained and deleted only with
// one), then N workers are created → Running, Pods go on every Node in the
// cluster it joined, every worker is deleted → gone.
func spreadLifecycle(ctx context.Context, b *bench, f flavour, ns string, proc procs, res *Result) (err error) {
	logf("creating %d Clusters, each with a control-plane Machine", len(b.clusters))
	cps := make([]string, len(b.clusters))
	for i, cl := range b.clusters {
		if err := createFleetCluster(ctx, b, ns, cl); err != nil {
			return err
		}
		cps[i] = "cp-" + cl.name
		if err := createClusterMachine(ctx, b, f, ns, cps[i], cl, true); err != nil {
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
	clusterOf := make([]fleetCluster, b.o.n)
	for i := range names {
		names[i] = fmt.Sprintf("m-%04d", i)
		clusterOf[i] = b.clusterOf(i)
	}

	logf("creating %d Machines over %d Clusters", b.o.n, len(b.clusters))
	created := make([]time.Time, b.o.n)
	ph, err := record(ctx, b, proc, f.name, "create", "create → Running", res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ph.stop(ctx)) }()
	t0 := time.Now()
	if err := parallel(b.o.workers, b.o.n, func(i int) error {
		created[i] = time.Now()
		return createClusterMachine(ctx, b, f, ns, names[i], clusterOf[i], false)
	}); err != nil {
		return err
	}
	running := poll{gvk: f.machine, namespace: ns, what: "Running", done: phaseIs("Running"), describe: phaseOf,
		names: names, timeout: b.o.timeout}
	at, err := running.wait(ctx, b.client)
	if err != nil {
		return err
	}
	if err := ph.end(ctx); err != nil {
		return err
	}
	res.CreateToRunning = newHalf(latest(at).Sub(t0), durations(names, created, at))
	logf("all %d Machines Running in %.1fs", b.o.n, res.CreateToRunning.WallSeconds)

	if err := bindPodsInClusters(ctx, b, f, ns, names, clusterOf); err != nil {
		return err
	}

	return deleteAll(ctx, b, f, ns, proc, names, res)
}

// createFleetCluster creates the Cluster, labelled for its instance, and,
// when it has a workload cluster, its kubeconfig Secret and the namespace
// its Pods go to there.
func createFleetCluster(ctx context.Context, b *bench, ns string, cl fleetCluster) error {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cl.name}}
	if cl.filter != "" {
		c.Labels = map[string]string{clusterv1.WatchFilterLabel: cl.filter}
	}
	if err := b.client.Create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if cl.workload == nil {
		return nil
	}
	if err := remote.WriteSecret(ctx, b.client, ns, cl.name, cl.workload.cp.Config); err != nil {
		return err
	}
	if err := cl.workload.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// createClusterMachine is createMachine for a Machine of the Cluster,
// labelled as its Cluster for the instance that manages both.
func createClusterMachine(ctx context.Context, b *bench, f flavour, ns, name string, cl fleetCluster, controlPlane bool) error {
	of := f
	of.newMachine = func(ns, name string, controlPlane bool) *unstructured.Unstructured {
		m := f.newMachine(ns, name, controlPlane)
		_ = unstructured.SetNestedField(m.Object, cl.name, "spec", "clusterName")
		if cl.filter != "" {
			labels := m.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[clusterv1.WatchFilterLabel] = cl.filter
			m.SetLabels(labels)
		}
		return m
	}
	return createMachine(ctx, b.client, of, ns, name, controlPlane)
}

// bindPodsInClusters puts the Pods of each worker's Node in the cluster the
// Node joined (its workload cluster, or the management cluster), all
// clusters at once.
func bindPodsInClusters(ctx context.Context, b *bench, f flavour, ns string, machines []string, clusterOf []fleetCluster) error {
	nodeOf, err := nodesOf(ctx, b, f, ns)
	if err != nil {
		return err
	}
	// By workload cluster; nil: the management cluster.
	nodes := map[*workload][]string{}
	for i, name := range machines {
		if nodeOf[name] == "" {
			return fmt.Errorf("Machine %s/%s is Running without status.nodeRef", ns, name)
		}
		nodes[clusterOf[i].workload] = append(nodes[clusterOf[i].workload], nodeOf[name])
	}
	errs := make(chan error, len(nodes))
	for w, onIt := range nodes {
		c := b.client
		if w != nil {
			c = w.client
		}
		go func() { errs <- runPods(ctx, b, c, ns, onIt) }()
	}
	var all []error
	for range nodes {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}
