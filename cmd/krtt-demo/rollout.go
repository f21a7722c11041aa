package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/machinedeployment"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

const (
	// rollout is the MachineDeployment of the rollout scene; its first
	// templates bear its name, the ones it rolls out to rolloutV2.
	rollout   = "fleet"
	rolloutV2 = rollout + "-v2"

	rolloutReplicas       = 3
	rolloutMaxSurge       = 1
	rolloutMaxUnavailable = 0
)

// rolloutScene: a MachineDeployment of 3 Machines is pointed at new
// templates and rolls them out one at a time (maxSurge 1, maxUnavailable
// 0). Each row the deployment fires is printed with what it left: the
// replicas each MachineSet asks for, the Machines of each revision and how
// many are available. Every watch event of the Machines is held to the
// strategy; the scene fails if there were ever more than 4 Machines or
// fewer than 3 available.
func (d *demo) rolloutScene(ctx context.Context) error {
	c := d.c
	d.step("Creating namespace %q, Cluster %q and MachineDeployment %q of %d Machines (RollingUpdate, maxSurge %d, maxUnavailable %d)",
		ns, clusterName, rollout, rolloutReplicas, rolloutMaxSurge, rolloutMaxUnavailable)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	if _, err := harness.ClusterObjects(ctx, c, ns, clusterName, true); err != nil {
		return err
	}
	w, err := harness.WatchDeployment(ctx, c, ns, rollout)
	if err != nil {
		return err
	}
	defer w.Stop()
	md, err := harness.MachineDeploymentObjects(ctx, c, ns, clusterName, rollout, rolloutReplicas, rolloutMaxSurge, rolloutMaxUnavailable,
		simv1.SimBehavior{ProvisionDelaySeconds: 1})
	if err != nil {
		return err
	}
	if err := d.waitRolledOut(ctx, w, md, rollout, 60*time.Second); err != nil {
		return err
	}

	d.step("Pointing %s at new templates %s: revision 2 rolls out, one Machine more at a time, an old one going only once a new one is available", rollout, rolloutV2)
	d.note("a line per row of the deployment as it fires: the row's table/ID, the replicas each MachineSet asks for, the Machines of each revision, the available Machines")
	if err := harness.SimTemplates(ctx, c, ns, rolloutV2, simv1.SimBehavior{ProvisionDelaySeconds: 1}); err != nil {
		return err
	}
	stop := d.printRows(ctx, md)
	w.Arm()
	if err := harness.PointAtTemplates(ctx, c, md, rolloutV2); err != nil {
		stop()
		return err
	}
	err = d.waitRolledOut(ctx, w, md, rolloutV2, 90*time.Second)
	stop()
	if err != nil {
		return err
	}

	var peak, minAvail, events int
	var peakAt, minAt string
	w.Read(func(t *harness.RolloutTracker) {
		peak, minAvail, events, peakAt, minAt = t.PeakMachines, t.MinAvailable, t.Events, t.PeakAt, t.MinAt
	})
	d.note("over %d watch events of the rollout: at most %d Machines (limit %d = replicas + maxSurge), never fewer than %d available (limit %d = replicas - maxUnavailable)",
		events, peak, rolloutReplicas+rolloutMaxSurge, minAvail, rolloutReplicas-rolloutMaxUnavailable)
	if peak > rolloutReplicas+rolloutMaxSurge {
		return fmt.Errorf("%d Machines at once, more than maxSurge allows: %s", peak, peakAt)
	}
	if minAvail < rolloutReplicas-rolloutMaxUnavailable {
		return fmt.Errorf("only %d available at once, fewer than maxUnavailable allows: %s", minAvail, minAt)
	}
	return nil
}

// waitRolledOut waits until the deployment has rolled out the templates
// tpl (harness.RolledOut).
func (d *demo) waitRolledOut(ctx context.Context, w *harness.DeploymentWatch, md *clusterv1.MachineDeployment, tpl string, timeout time.Duration) error {
	what := fmt.Sprintf("MachineDeployment %s: %d Machines of the templates %s available, no other left", md.Name, rolloutReplicas, tpl)
	return d.waitFor(ctx, what, timeout, func() (bool, string, error) {
		cur, sets, machines, err := d.rolloutView(ctx, w, md)
		if err != nil {
			return false, "", err
		}
		ok, where := harness.RolledOut(cur, sets, machines, tpl, rolloutReplicas)
		return ok, where, nil
	})
}

// rolloutView reads the deployment and its MachineSets, and the Machines
// as the watch has them.
func (d *demo) rolloutView(ctx context.Context, w *harness.DeploymentWatch, md *clusterv1.MachineDeployment) (*clusterv1.MachineDeployment, []clusterv1.MachineSet, []clusterv1.Machine, error) {
	cur := &clusterv1.MachineDeployment{}
	if err := d.c.Get(ctx, client.ObjectKeyFromObject(md), cur); err != nil {
		return nil, nil, nil, err
	}
	sets, err := harness.DeploymentSets(ctx, d.c, cur)
	if err != nil {
		return nil, nil, nil, err
	}
	var machines []clusterv1.Machine
	w.Read(func(t *harness.RolloutTracker) { machines = t.Machines() })
	return cur, sets, machines, nil
}

// printRows prints a line for every row the deployment fires from now on
// until stop, with the MachineSets and Machines as the API server has them
// just after the row (a row's trace comes once its patch is written); a
// line the same as the one before (a row looking again) is left out. The
// reads are made in the reconcile that fired the row, which holds the
// deployment's next reconcile for their while: read later, a line would
// show what later rows did.
func (d *demo) printRows(ctx context.Context, md *clusterv1.MachineDeployment) (stop func()) {
	key := md.Namespace + "/" + md.Name
	var mu sync.Mutex
	last := ""
	d.trMu.Lock()
	d.onTrace = func(tr engine.Trace) {
		if tr.Set != machinedeployment.Name || tr.Object != key {
			return
		}
		cur := &clusterv1.MachineDeployment{}
		if err := d.c.Get(ctx, client.ObjectKeyFromObject(md), cur); err != nil {
			return
		}
		sets, err := harness.DeploymentSets(ctx, d.c, cur)
		if err != nil {
			return
		}
		list := &clusterv1.MachineList{}
		if err := d.c.List(ctx, list, client.InNamespace(md.Namespace), client.MatchingLabels{"pool": md.Name}); err != nil {
			return
		}
		avail := 0
		for i := range list.Items {
			if harness.MachineAvailable(&list.Items[i]) {
				avail++
			}
		}
		line := fmt.Sprintf("%s/%s %s → %s %s | MachineSets: %s | Machines: %s | available: %d",
			tr.Table, tr.Row, orDash(tr.From), orDash(tr.To), orDash(string(tr.Outcome)),
			harness.SetReplicas(sets), harness.MachinesPerRevision(sets, list.Items), avail)
		mu.Lock()
		defer mu.Unlock()
		if line == last {
			return
		}
		last = line
		d.say("[%5.1fs]    %s", tr.Time.Sub(d.start).Seconds(), line)
	}
	d.trMu.Unlock()
	return func() {
		d.trMu.Lock()
		d.onTrace = nil
		d.trMu.Unlock()
	}
}
