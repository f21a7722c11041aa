package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// benchDeployment is the MachineDeployment of -mode rollout; its first
// templates bear its name, the ones it is rolled out to newTemplates.
const (
	benchDeployment = "bench-md"
	newTemplates    = benchDeployment + "-v2"
)

// rolloutLifecycle (-mode rollout): after the control-plane Machine, a
// MachineDeployment of N Machines comes up and Pods go on every Node; then
// its template is pointed at new templates and the rollout is timed until
// every Machine is of the new MachineSet, the deployment reports N
// replicas, N updated and N available, and the old Machines are gone. The
// requests cover the rollout only, divided by the N Machines replaced.
// Every watch event of the deployment's Machines during the rollout is
// held to the strategy: at most N + maxSurge Machines, at least
// N - maxUnavailable available.
func rolloutLifecycle(ctx context.Context, b *bench, f flavour, ns string, proc procs, res *Result) (err error) {
	n := b.o.n
	ro := &Rollout{MaxSurge: b.o.maxSurge, MaxUnavailable: b.o.maxUnavailable,
		MostMachines: n + b.o.maxSurge, FewestAvailable: n - b.o.maxUnavailable}
	res.Rollout = ro
	if err := controlPlaneFirst(ctx, b, f, ns); err != nil {
		return err
	}
	w, err := harness.WatchDeployment(ctx, b.client, ns, benchDeployment)
	if err != nil {
		return err
	}
	defer w.Stop()

	logf("creating MachineDeployment %s of %d Machines (RollingUpdate, maxSurge %d, maxUnavailable %d)", benchDeployment, n, b.o.maxSurge, b.o.maxUnavailable)
	t0 := time.Now()
	md, err := harness.MachineDeploymentObjects(ctx, b.client, ns, clusterName, benchDeployment, n, b.o.maxSurge, b.o.maxUnavailable, simv1.SimBehavior{})
	if err != nil {
		return err
	}
	if _, err := untilRolledOut(ctx, b, w, md, benchDeployment); err != nil {
		return err
	}
	ro.CreateSeconds = round3(time.Since(t0).Seconds())
	logf("all %d Machines of the deployment available in %.1fs", n, ro.CreateSeconds)
	var names []string
	w.Read(func(t *harness.RolloutTracker) {
		for _, m := range t.Machines() {
			names = append(names, m.Name)
		}
	})
	if err := bindPods(ctx, b, f, ns, names); err != nil {
		return err
	}

	// The new templates exist before the clock starts: creating them is
	// the user's preparation, not the rollout.
	if err := harness.SimTemplates(ctx, b.client, ns, newTemplates, simv1.SimBehavior{}); err != nil {
		return err
	}
	w.Arm()
	finish, err := sampleResources(proc, b, res)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, finish()) }()

	logf("pointing MachineDeployment %s at the templates %s", benchDeployment, newTemplates)
	cpu, err := measurePhase(ctx, b, proc, f.name, "rollout", res)
	if err != nil {
		return err
	}
	t1 := time.Now()
	if err := harness.PointAtTemplates(ctx, b.client, md, newTemplates); err != nil {
		return err
	}
	end, err := untilRolledOut(ctx, b, w, md, newTemplates)
	w.Read(func(t *harness.RolloutTracker) {
		ro.PeakMachines, ro.MinAvailable, ro.WatchEvents = t.PeakMachines, t.MinAvailable, t.Events
		ro.peakAt, ro.minAt = t.PeakAt, t.MinAt
	})
	ro.WatchRelists = w.RelistsSinceArm()
	if err = errors.Join(err, cpu()); err != nil {
		return err
	}
	ro.WallSeconds, ro.Replaced = round3(end.Sub(t1).Seconds()), n
	logf("rolled out in %.1fs; at most %d Machines, at least %d available", ro.WallSeconds, ro.PeakMachines, ro.MinAvailable)
	return ro.check()
}

// check holds the extremes to the strategy's limits.
func (ro *Rollout) check() error {
	var errs []error
	if ro.PeakMachines > ro.MostMachines {
		errs = append(errs, fmt.Errorf("%d Machines at once, more than %d (N + maxSurge): %s", ro.PeakMachines, ro.MostMachines, ro.peakAt))
	}
	if ro.MinAvailable < ro.FewestAvailable {
		errs = append(errs, fmt.Errorf("only %d available at once, fewer than %d (N - maxUnavailable): %s", ro.MinAvailable, ro.FewestAvailable, ro.minAt))
	}
	return errors.Join(errs...)
}

// untilRolledOut polls the deployment and its MachineSets, with the watched
// Machines, until it has rolled out the templates tpl, and returns when it
// was first seen so.
func untilRolledOut(ctx context.Context, b *bench, w *harness.DeploymentWatch, md *clusterv1.MachineDeployment, tpl string) (time.Time, error) {
	deadline := time.Now().Add(b.o.timeout)
	lastLog := time.Now()
	for {
		cur := &clusterv1.MachineDeployment{}
		if err := b.client.Get(ctx, client.ObjectKeyFromObject(md), cur); err != nil {
			return time.Time{}, err
		}
		sets, err := harness.DeploymentSets(ctx, b.client, cur)
		if err != nil {
			return time.Time{}, err
		}
		var machines []clusterv1.Machine
		w.Read(func(t *harness.RolloutTracker) { machines = t.Machines() })
		now := time.Now()
		done, where := harness.RolledOut(cur, sets, machines, tpl, b.o.n)
		if done {
			return now, nil
		}
		if now.After(deadline) {
			return time.Time{}, fmt.Errorf("%s not rolled out to %s within %s: %s", md.Name, tpl, b.o.timeout, where)
		}
		if time.Since(lastLog) > 10*time.Second {
			logf("rolling out %s: %s", tpl, where)
			lastLog = time.Now()
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return time.Time{}, err
		}
	}
}
