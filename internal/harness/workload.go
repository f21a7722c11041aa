package harness

import (
	"os"
	"sync"
	"time"

	"github.com/krtt-dev/krtt/internal/localcp"
	"github.com/krtt-dev/krtt/internal/remote"
)

// workload is a second control plane, started on first use, that plays the
// workload cluster of Clusters given a kubeconfig Secret for it.
type workload struct {
	once sync.Once
	cp   *localcp.ControlPlane
	dir  string
	err  error
}

// Workload returns the workload cluster's control plane, starting it on
// first use (tests without workload clusters never pay for it).
func (h *Harness) Workload() (*localcp.ControlPlane, error) {
	h.workload.once.Do(func() {
		dir, err := os.MkdirTemp("", "krtt-workload-")
		if err != nil {
			h.workload.err = err
			return
		}
		h.workload.dir = dir
		h.workload.cp, h.workload.err = localcp.Start(localcp.Options{Dir: dir, Port: -1})
	})
	return h.workload.cp, h.workload.err
}

// stopWorkload stops the workload control plane, if it was started.
func (h *Harness) stopWorkload() error {
	if h.workload.cp == nil {
		return nil
	}
	err := h.workload.cp.Stop()
	_ = os.RemoveAll(h.workload.dir)
	return err
}

// workloadOptions probe workload clusters often, so a stopped API server is
// Unreachable within a few seconds of a scenario stopping it.
var workloadOptions = remote.Options{HealthInterval: 500 * time.Millisecond, HealthTimeout: 2 * time.Second, FailureThreshold: 2}
