package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// pool is the demo's MachineSet.
const pool = "pool"

// machineSetStory: a MachineSet scales up, replaces a Machine whose VM is
// lost, and scales down deleting the Machine marked for deletion first.
func (d *demo) machineSetStory(ctx context.Context) error {
	d.step("Creating MachineSet %q of 2 Machines, cloned from a SimMachineTemplate and a SimBootstrapConfigTemplate", pool)
	ms, err := harness.MachineSetObjects(ctx, d.c, ns, clusterName, pool, 2, simv1.SimBehavior{ProvisionDelaySeconds: 1})
	if err != nil {
		return err
	}
	if err := d.waitRunning(ctx, ms, 2, nil, 60*time.Second); err != nil {
		return err
	}

	d.step("kubectl scale kms/%s --replicas=4 (the scale subresource)", pool)
	if err := d.scaleSet(ctx, ms, 4); err != nil {
		return err
	}
	if err := d.waitRunning(ctx, ms, 4, nil, 60*time.Second); err != nil {
		return err
	}

	machines, err := harness.MachinesOf(ctx, d.c, ms)
	if err != nil {
		return err
	}
	lost := machines[0].Name
	d.step("The VM of %s is lost (sim vmGone): its Machine fails, the set deletes and replaces it", lost)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sm := &simv1.SimMachine{}
		if err := d.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: lost}, sm); err != nil {
			return err
		}
		sm.Spec.Sim.VMGone = true
		return d.c.Update(ctx, sm)
	}); err != nil {
		return err
	}
	if err := d.waitRunning(ctx, ms, 4, []string{lost}, 90*time.Second); err != nil {
		return err
	}

	machines, err = harness.MachinesOf(ctx, d.c, ms)
	if err != nil {
		return err
	}
	marked := machines[len(machines)-1].Name
	d.step("Marking %s with %s, then kubectl scale kms/%s --replicas=2", marked, clusterv1.DeleteMachineAnnotation, pool)
	if err := d.patchMachine(ctx, marked, func(m *clusterv1.Machine) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[clusterv1.DeleteMachineAnnotation] = "demo"
	}); err != nil {
		return err
	}
	if err := d.scaleSet(ctx, ms, 2); err != nil {
		return err
	}
	if err := d.waitRunning(ctx, ms, 2, []string{marked}, 90*time.Second); err != nil {
		return err
	}
	d.note("%s went first, as its annotation asked; %d Machines of %s remain", marked, 2, pool)
	return nil
}

func (d *demo) scaleSet(ctx context.Context, ms *clusterv1.MachineSet, replicas int64) error {
	body := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
		"metadata": map[string]any{"name": ms.Name, "namespace": ms.Namespace}, "spec": map[string]any{"replicas": replicas}}}
	return d.c.SubResource("scale").Update(ctx, ms, client.WithSubResourceBody(body))
}

// waitRunning waits until the set controls exactly n Machines, all Running,
// none of them named in gone, and reports n ready replicas.
func (d *demo) waitRunning(ctx context.Context, ms *clusterv1.MachineSet, n int, gone []string, timeout time.Duration) error {
	what := fmt.Sprintf("MachineSet %s: %d Machines Running", ms.Name, n)
	if len(gone) > 0 {
		what += ", " + strings.Join(gone, ", ") + " gone"
	}
	return d.waitFor(ctx, what, timeout, func() (bool, string, error) {
		machines, err := harness.MachinesOf(ctx, d.c, ms)
		if err != nil {
			return false, "", err
		}
		var states []string
		running := 0
		for _, m := range machines {
			for _, g := range gone {
				if m.Name == g {
					return false, g + " is " + phaseOf(&m), nil
				}
			}
			if m.Status.Phase == clusterv1.MachinePhaseRunning && m.DeletionTimestamp.IsZero() {
				running++
			}
			states = append(states, m.Name+" "+phaseOf(&m))
		}
		cur := &clusterv1.MachineSet{}
		if err := d.c.Get(ctx, client.ObjectKeyFromObject(ms), cur); err != nil {
			return false, "", err
		}
		if running != n || len(machines) != n || int(cur.Status.ReadyReplicas) != n {
			return false, fmt.Sprintf("%s (ready %d, row %s)", strings.Join(states, ", "), cur.Status.ReadyReplicas, lastRow(cur)), nil
		}
		return true, "", nil
	})
}

func lastRow(ms *clusterv1.MachineSet) string {
	if lt := ms.Status.LastTransition; lt != nil {
		return lt.Table + "/" + lt.Row
	}
	return "-"
}
