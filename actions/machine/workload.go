package machine

import (
	"context"
	"time"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
)

// waitForWorkloadCluster says why the Node side cannot be used: which
// Secret and API server, since when, and the error. It changes nothing; the
// connection's health check wakes the Machine when the state changes.
func waitForWorkloadCluster(_ context.Context, s *Scope) engine.Outcome {
	w := s.Workload
	what := "cannot be used"
	switch w.State {
	case remote.Unreachable:
		what = "is unreachable"
	case remote.NoAccess:
		what = "refuses access"
	}
	since := ""
	if !w.Since.IsZero() {
		since = " since " + w.Since.UTC().Format(time.RFC3339)
	}
	return engine.Wait("Waiting for the workload cluster of Cluster %s, which %s%s (%s): %s",
		s.Machine.Spec.ClusterName, what, since, w.State, w.Message)
}

// NodeSideSince is when a wait on the Node side that started at start
// counts from: the later of start and the last time the workload cluster
// came back after it could not be used, as this reconcile's connection saw
// it or as the Cluster's status recorded it (which survives a restart of
// the operator). A timeout that ran out while the cluster could not be seen
// so does not end the wait as soon as it is back: the wait gets its full
// timeout again, as the machine-controller-manager restarts its health
// timeouts when the target API server returns.
func NodeSideSince(s *Scope, start time.Time) time.Time {
	since := start
	if back := s.Workload.ReachableAgain; back.After(since) {
		since = back
	}
	if back := reconnectTime(s.Cluster); back.After(since) {
		since = back
	}
	return since
}

func reconnectTime(c *clusterv1.Cluster) time.Time {
	if c == nil || c.Status.WorkloadClusterReconnectTime == nil {
		return time.Time{}
	}
	return c.Status.WorkloadClusterReconnectTime.Time
}
