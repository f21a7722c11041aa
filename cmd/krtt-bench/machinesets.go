package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// benchSet is the MachineSet of -machinesets.
const benchSet = "bench-set"

// machineSetLifecycle (-machinesets): after the control-plane Machine, a
// MachineSet of 0 is scaled to N (the scale subresource) and waited for
// until N Machines run, Pods go on their Nodes, then it is scaled to 0 and
// waited for until its Machines are gone. The halves start at the scale
// request; the requests count everything the operator sent for both
// controllers, divided by N.
func machineSetLifecycle(ctx context.Context, b *bench, f flavour, ns string, proc procs, res *Result) (err error) {
	if err := controlPlaneFirst(ctx, b, f, ns); err != nil {
		return err
	}
	ms, err := harness.MachineSetObjects(ctx, b.client, ns, clusterName, benchSet, 0, simv1.SimBehavior{})
	if err != nil {
		return err
	}
	finish, err := sampleResources(proc, b, res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, finish()) }()

	logf("scaling MachineSet %s from 0 to %d", benchSet, b.o.n)
	ph, err := record(ctx, b, proc, f.name, "create", "create → Running", res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ph.stop(ctx)) }()
	t0 := time.Now()
	if err := scaleSet(ctx, b.client, ms, b.o.n); err != nil {
		return err
	}
	at, err := setMachinesRunning(ctx, b, ms, b.o.n)
	if err != nil {
		return err
	}
	if err := ph.end(ctx); err != nil {
		return err
	}
	names := make([]string, 0, len(at))
	for name := range at {
		names = append(names, name)
	}
	sort.Strings(names)
	res.CreateToRunning = newHalf(latest(at).Sub(t0), sinceAll(names, t0, at))
	logf("all %d Machines of the set Running in %.1fs", b.o.n, res.CreateToRunning.WallSeconds)

	if err := bindPods(ctx, b, f, ns, names); err != nil {
		return err
	}

	logf("scaling MachineSet %s to 0", benchSet)
	del, err := record(ctx, b, proc, f.name, "delete", "delete → gone", res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, del.stop(ctx)) }()
	t1 := time.Now()
	if err := scaleSet(ctx, b.client, ms, 0); err != nil {
		return err
	}
	gone := poll{gvk: f.machine, namespace: ns, names: names, what: "gone", timeout: b.o.timeout, done: absent, describe: phaseOf}
	at, err = gone.wait(ctx, b.client)
	if err != nil {
		return err
	}
	if err := del.end(ctx); err != nil {
		return err
	}
	res.DeleteToGone = newHalf(latest(at).Sub(t1), sinceAll(names, t1, at))
	logf("all %d Machines of the set gone in %.1fs", b.o.n, res.DeleteToGone.WallSeconds)
	return nil
}

func scaleSet(ctx context.Context, c client.Client, ms *clusterv1.MachineSet, replicas int) error {
	body := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
		"metadata": map[string]any{"name": ms.Name, "namespace": ms.Namespace}, "spec": map[string]any{"replicas": int64(replicas)}}}
	return c.SubResource("scale").Update(ctx, ms, client.WithSubResourceBody(body))
}

// setMachinesRunning waits until the set controls n Running Machines and
// returns when each was first seen Running.
func setMachinesRunning(ctx context.Context, b *bench, ms *clusterv1.MachineSet, n int) (map[string]time.Time, error) {
	seen := map[string]time.Time{}
	deadline := time.Now().Add(b.o.timeout)
	lastLog := time.Now()
	for {
		machines, err := harness.MachinesOf(ctx, b.client, ms)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		phases := map[string]int{}
		for _, m := range machines {
			if _, ok := seen[m.Name]; !ok && m.Status.Phase == clusterv1.MachinePhaseRunning {
				seen[m.Name] = now
			}
			phases[string(m.Status.Phase)]++
		}
		if len(seen) >= n && len(machines) == n {
			return seen, nil
		}
		if now.After(deadline) {
			return seen, fmt.Errorf("the set has %d of %d Machines Running after %s (%d Machines: %s)", len(seen), n, b.o.timeout, len(machines), summary(phases))
		}
		if time.Since(lastLog) > 10*time.Second {
			logf("%d/%d Machines of the set Running (%d Machines: %s)", len(seen), n, len(machines), summary(phases))
			lastLog = time.Now()
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return seen, err
		}
	}
}

// sinceAll is durations with one start for every name.
func sinceAll(names []string, start time.Time, end map[string]time.Time) []time.Duration {
	starts := make([]time.Time, len(names))
	for i := range starts {
		starts[i] = start
	}
	return durations(names, starts, end)
}
