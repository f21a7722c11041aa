package harness

import (
	"sync"
	"time"

	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// workload is a second control plane, taken on first use
// (localcp.WorkloadForTest: the one make test shares, or one of its own),
// that plays the workload cluster of Clusters given a kubeconfig Secret for
// it.
type workload struct {
	once sync.Once
	cp   *localcp.ControlPlane
	err  error
}

// Workload returns the workload cluster's control plane, starting it on
// first use (tests without workload clusters never pay for it).
func (h *Harness) Workload() (*localcp.ControlPlane, error) {
	h.workload.once.Do(func() {
		h.workload.cp, h.workload.err = localcp.WorkloadForTest()
	})
	return h.workload.cp, h.workload.err
}

// stopWorkload stops the workload control plane, if it was started.
func (h *Harness) stopWorkload() error {
	if h.workload.cp == nil {
		return nil
	}
	return h.workload.cp.Stop()
}

// workloadOptions probe workload clusters often, so a stopped API server is
// Unreachable within a few seconds of a scenario stopping it.
var workloadOptions = remote.Options{HealthInterval: 500 * time.Millisecond, HealthTimeout: 2 * time.Second, FailureThreshold: 2}
