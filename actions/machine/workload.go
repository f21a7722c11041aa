package machine

import (
	"context"
	"fmt"
	"time"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
)

// waitForWorkloadCluster says why the Node side cannot be used: which
// Secret and API server, since when, and the error. It changes nothing; the
// connection's health check wakes the Machine when the state changes.
func waitForWorkloadCluster(_ context.Context, s *Scope) engine.Outcome {
	last := "Remote connection not established yet"
	if t := s.Workload.LastProbeSuccess; !t.IsZero() {
		last = "Last successful probe at " + t.UTC().Format(time.RFC3339)
	}
	return engine.Wait("Waiting for %s", workloadClusterDetail(s)).With("lastProbeSuccess", last)
}

// describeWorkloadCluster reports the same, done: for the rows that hold a
// step with a timeout (their wait wakes the Machine at the deadline) and
// those that end one while the workload cluster cannot be used.
func describeWorkloadCluster(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s", workloadClusterDetail(s))
}

// workloadClusterDetail names the workload cluster, what is wrong with it,
// since when, and the error.
func workloadClusterDetail(s *Scope) string {
	w := s.Workload
	what := "cannot be used"
	switch w.State {
	case remote.Unreachable:
		what = "is unreachable"
	case remote.NoAccess:
		what = "refuses access"
		if w.SelfHostedDisabled {
			what = "has no Secret and is not served as self-hosted"
		}
	}
	since := ""
	if !w.Since.IsZero() {
		since = " since " + w.Since.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("the workload cluster of Cluster %s, which %s%s (%s): %s",
		s.Machine.Spec.ClusterName, what, since, w.State, w.Message)
}

// dark: the workload cluster cannot be used (Unreachable or NoAccess, the
// workloadCluster values the machine-workload-cluster rows hold on).
func dark(w remote.Connection) bool {
	return w.State == remote.Unreachable || w.State == remote.NoAccess
}

// WorkloadUnusableSince is the path a state's wait names in since for the
// time the workload cluster has not been usable (the connection's Since
// while it is Unreachable or NoAccess; unset otherwise). It is no field of
// the Machine: the Machine registry's wait reader answers it from the
// connection (workloadFields).
const WorkloadUnusableSince = "workloadCluster.unusableSince"

// workloadFields reads the Machine's fields, and WorkloadUnusableSince
// from the connection.
type workloadFields struct {
	engine.WaitFields
	w remote.Connection
}

func (f workloadFields) Time(path string) (time.Time, bool) {
	if path != WorkloadUnusableSince {
		return f.WaitFields.Time(path)
	}
	if !dark(f.w) || f.w.Since.IsZero() {
		return time.Time{}, false
	}
	return f.w.Since, true
}

// NodeSideSince is when a wait on the Node side that started at start
// counts from: the later of start and the last time the workload cluster
// came back after it could not be used, as this reconcile's connection saw
// it or as the Cluster's status recorded it (which survives a restart of
// the operator). A timeout that ran out while the cluster could not be seen
// so does not end the wait as soon as it is back: the wait gets its full
// timeout again, as the machine-controller-manager restarts its health
// timeouts when the target API server returns. While the workload cluster
// cannot be used (Unreachable or NoAccess in this reconcile) the wait
// counts from its own start, as Cluster API counts its drain, volume-detach
// and Node-deletion timeouts: an earlier outage's reconnection gives
// nothing back during the next one, and the deletion steps' timeouts end
// the step while the cluster is dark (machine-workload-cluster).
func NodeSideSince(s *Scope, start time.Time) time.Time {
	since := start
	if dark(s.Workload) {
		return since
	}
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
