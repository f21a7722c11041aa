package machine

import (
	"context"
	"time"

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
