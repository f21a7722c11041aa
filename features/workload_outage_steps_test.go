package features

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cucumber/godog"
	"k8s.io/utils/ptr"

	machineactions "github.com/krtt-dev/krtt/actions/machine"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Steps for waits interrupted by a workload cluster outage: the Cluster
// records when its workload cluster came back, and Node-side timeouts
// count from then.
func registerWorkloadOutageSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the Cluster "([^"]*)" records when its workload cluster came back$`, w.clusterRecordsReconnect)
	sc.Step(`^the Machine "([^"]*)" is in phase "([^"]*)"$`, w.isInPhase)
	sc.Step(`^the (health|drain|forced deletion) timeout of "([^"]*)" has passed since its workload cluster came back$`, w.timeoutPassedSinceReconnect)
}

// reconnectTime reads status.workloadClusterReconnectTime of a Cluster.
func (w *world) reconnectTime(ctx context.Context, cluster string) (time.Time, error) {
	c := &clusterv1.Cluster{}
	if err := w.h.Client.Get(ctx, w.key(cluster), c); err != nil {
		return time.Time{}, err
	}
	if c.Status.WorkloadClusterReconnectTime == nil {
		return time.Time{}, errors.New("status.workloadClusterReconnectTime is not set")
	}
	return c.Status.WorkloadClusterReconnectTime.Time, nil
}

func (w *world) clusterRecordsReconnect(ctx context.Context, cluster string) error {
	return w.eventually(ctx, "Cluster "+cluster+" records its reconnection", func(ctx context.Context) error {
		_, err := w.reconnectTime(ctx, cluster)
		return err
	})
}

// isInPhase reads the phase once: after a step that waited for the first
// decision since something changed, it says what that decision was.
func (w *world) isInPhase(ctx context.Context, name, phase string) error {
	m, err := w.machine(ctx, name)
	if err != nil {
		return err
	}
	if string(m.Status.Phase) != phase {
		return fmt.Errorf("Machine %s: %s, want phase %s", name, describe(m), phase)
	}
	return nil
}

// timeoutPassedSinceReconnect advances the operator's clock until the
// timeout (the forced deletion's: the 5 minutes of an unhealthy Node) has
// passed since the Machine's Cluster recorded that its workload cluster
// came back; the operator wakes the Machine at its wait's deadline, or
// when its row requeues (the forced deletion). The recorded time is
// truncated to the second, so one more second covers the connection's own.
func (w *world) timeoutPassedSinceReconnect(ctx context.Context, which, name string) error {
	m, err := w.machine(ctx, name)
	if err != nil {
		return err
	}
	back, err := w.reconnectTime(ctx, m.Spec.ClusterName)
	if err != nil {
		return err
	}
	seconds := m.Spec.Health.HealthTimeoutSeconds
	switch which {
	case "drain":
		seconds = m.Spec.Deletion.NodeDrainTimeoutSeconds
	case "forced deletion":
		seconds = ptr.To(int32(machineactions.NodeUnhealthyForce / time.Second))
	}
	if seconds == nil {
		return fmt.Errorf("Machine %s has no %s timeout", name, which)
	}
	if left := back.Add(time.Duration(*seconds) * time.Second).Sub(w.h.Clock.Now()); left >= 0 {
		w.h.Clock.Advance(left + 2*time.Second)
	}
	return nil
}
