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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// measure runs the whole lifecycle for one controller in its own
// namespace. A failure ends it early: the Result keeps what was measured
// until then and says why.
func measure(ctx context.Context, b *bench, f flavour) (res Result) {
	res = Result{Controller: f.name, Version: f.version}
	ns := "bench-" + f.name
	logf("== %s (%s), namespace %s", f.name, f.version, ns)
	if err := b.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		res.Error = err.Error()
		return res
	}
	load0 := loadAverage()
	proc, err := f.start(ctx, b, ns)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer func() { res.LoadAverage = &LoadAverage{Start: load0, End: loadAverage()} }()
	switch {
	case b.o.mode == modeMachineSets:
		err = machineSetLifecycle(ctx, b, f, ns, proc, &res)
	case b.o.mode == modeRollout:
		err = rolloutLifecycle(ctx, b, f, ns, proc, &res)
	case len(b.clusters) > 0:
		err = spreadLifecycle(ctx, b, f, ns, proc, &res)
	default:
		err = lifecycle(ctx, b, f, ns, proc, &res)
	}
	if err != nil {
		res.Error = err.Error()
	} else {
		res.Complete = true
	}
	if err := proc.stop(); err != nil && res.Error == "" {
		res.Error, res.Complete = err.Error(), false
	}
	return res
}

// lifecycle: a control-plane Machine first (Cluster API drains and deletes
// worker Nodes only when the Cluster has one), then N workers created →
// Running, Pods on every Node, every worker deleted → gone.
func lifecycle(ctx context.Context, b *bench, f flavour, ns string, proc procs, res *Result) (err error) {
	running := poll{gvk: f.machine, namespace: ns, what: "Running", done: phaseIs("Running"), describe: phaseOf}
	if err := controlPlaneFirst(ctx, b, f, ns); err != nil {
		return err
	}
	finish, err := sampleResources(proc, b, res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, finish()) }()

	names := make([]string, b.o.n)
	for i := range names {
		names[i] = fmt.Sprintf("m-%04d", i)
	}

	// Half 1: create → Running.
	logf("creating %d Machines (with their SimBootstrapConfigs and SimMachines)", b.o.n)
	created := make([]time.Time, b.o.n)
	ph, err := record(ctx, b, proc, f.name, "create", "create → Running", res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ph.stop(ctx)) }()
	t0 := time.Now()
	if err := parallel(b.o.workers, b.o.n, func(i int) error {
		created[i] = time.Now()
		return createMachine(ctx, b.client, f, ns, names[i], false)
	}); err != nil {
		return err
	}
	workers := running
	workers.names, workers.timeout = names, b.o.timeout
	at, err := workers.wait(ctx, b.client)
	if err != nil {
		return err
	}
	if err := ph.end(ctx); err != nil {
		return err
	}
	res.CreateToRunning = newHalf(latest(at).Sub(t0), durations(names, created, at))
	logf("all %d Machines Running in %.1fs", b.o.n, res.CreateToRunning.WallSeconds)

	if err := bindPods(ctx, b, f, ns, names); err != nil {
		return err
	}

	// Half 2: delete → gone.
	return deleteAll(ctx, b, f, ns, proc, names, res)
}

// deleteAll deletes the workers and measures delete → gone.
func deleteAll(ctx context.Context, b *bench, f flavour, ns string, proc procs, names []string, res *Result) (err error) {
	logf("deleting %d Machines", b.o.n)
	deleted := make([]time.Time, b.o.n)
	ph, err := record(ctx, b, proc, f.name, "delete", "delete → gone", res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ph.stop(ctx)) }()
	t1 := time.Now()
	if err := parallel(b.o.workers, b.o.n, func(i int) error {
		deleted[i] = time.Now()
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(f.machine)
		m.SetNamespace(ns)
		m.SetName(names[i])
		return b.client.Delete(ctx, m)
	}); err != nil {
		return err
	}
	gone := poll{gvk: f.machine, namespace: ns, names: names, what: "gone", timeout: b.o.timeout, done: absent, describe: phaseOf}
	at, err := gone.wait(ctx, b.client)
	if err != nil {
		return err
	}
	if err := ph.end(ctx); err != nil {
		return err
	}
	res.DeleteToGone = newHalf(latest(at).Sub(t1), durations(names, deleted, at))
	logf("all %d Machines gone in %.1fs", b.o.n, res.DeleteToGone.WallSeconds)
	return nil
}

// controlPlaneFirst creates the control-plane Machine and waits until it
// runs: Cluster API drains and deletes worker Nodes only when the Cluster
// has one.
func controlPlaneFirst(ctx context.Context, b *bench, f flavour, ns string) error {
	logf("creating the control-plane Machine")
	if err := createMachine(ctx, b.client, f, ns, "cp-0", true); err != nil {
		return err
	}
	cp := poll{gvk: f.machine, namespace: ns, what: "Running", done: phaseIs("Running"), describe: phaseOf,
		names: []string{"cp-0"}, timeout: 2 * time.Minute}
	if _, err := cp.wait(ctx, b.client); err != nil {
		return fmt.Errorf("control-plane Machine: %w", err)
	}
	return nil
}

// sampleResources samples the controller's requests and CPU now; finish
// samples again and writes the differences (per worker Machine) and the
// peak RSS into res. With several instances res adds them up (peak RSS:
// the sum of each process's peak) and keeps each one's figures, its
// requests divided by its own Machines.
func sampleResources(ps procs, b *bench, res *Result) (finish func() error, err error) {
	before, err := ps.sample()
	if err != nil {
		return nil, err
	}
	return func() error {
		after, serr := ps.sample()
		hwm := make([]int64, len(ps))
		var herrs []error
		for i, p := range ps {
			var herr error
			hwm[i], herr = peakRSSKiB(p.pid())
			herrs = append(herrs, herr)
		}
		if e := errors.Join(serr, errors.Join(herrs...)); e != nil {
			return e
		}
		var peak int64
		for _, h := range hwm {
			peak += h
		}
		writeResources(res, b, sum(before), sum(after), peak)
		if len(ps) > 1 {
			res.Instances = make([]Instance, len(ps))
			for i, p := range ps {
				in := Instance{WatchFilter: p.filter, Machines: b.workersOf(p.filter)}
				in.RequestsPerMachine, in.RequestsPerMachineTotal = perMachine(before[i].requests, after[i].requests, in.Machines)
				in.CPUSeconds, in.CPUSecondsInclStart = round1(after[i].cpu-before[i].cpu), round1(after[i].cpu)
				in.PeakRSSMiB = round1(float64(hwm[i]) / 1024)
				res.Instances[i] = in
			}
		}
		return nil
	}, nil
}

// writeResources writes into res what the controller sent and used between
// two samples, per worker Machine, and its peak RSS (KiB).
func writeResources(res *Result, b *bench, before, after sample, peakKiB int64) {
	res.RequestsPerMachine, res.RequestsPerMachineTotal = perMachine(before.requests, after.requests, b.o.n)
	if len(b.workloads) > 0 {
		// What did not go to the management cluster went to a workload cluster.
		res.WorkloadRequestsPerMachine, res.WorkloadRequestsPerMachineTotal = perMachine(
			before.byHost.except(b.managementHost), after.byHost.except(b.managementHost), b.o.n)
	}
	res.RequestsPerMachineByKind, _ = perMachine(before.kinds, after.kinds, b.o.n)
	res.RowsPerMachine, _ = perMachine(before.rows, after.rows, b.o.n)
	res.ReconcilesPerMachine, _ = perMachine(before.reconciles, after.reconciles, b.o.n)
	res.CPUSeconds = round1(after.cpu - before.cpu)
	res.CPUSecondsInclStart = round1(after.cpu)
	res.PeakRSSMiB = round1(float64(peakKiB) / 1024)
}

func createMachine(ctx context.Context, c client.Client, f flavour, ns, name string, controlPlane bool) error {
	if err := c.Create(ctx, &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		return err
	}
	if err := c.Create(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		return err
	}
	return c.Create(ctx, f.newMachine(ns, name, controlPlane))
}

// bindPods puts podsPerNode Pods on the Node of every worker Machine and
// waits until the sim kubelet runs them all.
func bindPods(ctx context.Context, b *bench, f flavour, ns string, machines []string) error {
	nodeOf, err := nodesOf(ctx, b, f, ns)
	if err != nil {
		return err
	}
	nodes := make([]string, 0, len(machines))
	for _, name := range machines {
		if nodeOf[name] == "" {
			return fmt.Errorf("Machine %s/%s is Running without status.nodeRef", ns, name)
		}
		nodes = append(nodes, nodeOf[name])
	}
	return runPods(ctx, b, b.client, ns, nodes)
}

// runPods puts podsPerNode Pods on each of the nodes, through c (the
// cluster the Nodes are in), and waits until the sim kubelet runs them all.
func runPods(ctx context.Context, b *bench, c client.WithWatch, ns string, nodes []string) error {
	per := b.o.podsPerNode
	pods := make([]string, 0, len(nodes)*per)
	for _, node := range nodes {
		for j := range per {
			pods = append(pods, fmt.Sprintf("%s-p%d", node, j))
		}
	}
	logf("binding %d Pods (%d per Node)", len(pods), per)
	start := time.Now()
	if err := parallel(b.o.workers, len(pods), func(i int) error {
		return c.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pods[i]},
			Spec: corev1.PodSpec{NodeName: nodes[i/per], TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
		})
	}); err != nil {
		return err
	}
	wait := poll{gvk: corev1.SchemeGroupVersion.WithKind("Pod"), namespace: ns, names: pods, what: "Running",
		timeout: b.o.timeout, done: phaseIs(string(corev1.PodRunning)), describe: phaseOf}
	if _, err := wait.wait(ctx, c); err != nil {
		return err
	}
	logf("all Pods Running in %s", time.Since(start).Round(time.Millisecond))
	return nil
}

// latest is the last of the times.
func latest(at map[string]time.Time) time.Time {
	var t time.Time
	for _, v := range at {
		if v.After(t) {
			t = v
		}
	}
	return t
}

// nodesOf maps each Machine of the namespace to its Node's name.
func nodesOf(ctx context.Context, b *bench, f flavour, ns string) (map[string]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(f.machine.GroupVersion().WithKind(f.machine.Kind + "List"))
	if err := b.client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	nodeOf := map[string]string{}
	for _, m := range list.Items {
		node, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		nodeOf[m.GetName()] = node
	}
	return nodeOf, nil
}
