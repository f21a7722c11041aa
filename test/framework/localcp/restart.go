package localcp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// RestartAPIServer kills kube-apiserver (SIGKILL, as a crash or an OOM kill
// would; a graceful stop waits for long-running requests for up to the
// stop timeout) and starts it again on the same address with the same
// serving certificates and client CA, so every client and kubeconfig keeps
// working; etcd keeps running, so no state is lost. Meanwhile clients see
// connection refused. down, when not nil, runs while the API server is down
// (e.g. to hold it down for a while).
func (cp *ControlPlane) RestartAPIServer(down func()) error {
	if err := cp.StopAPIServer(); err != nil {
		return err
	}
	if down != nil {
		down()
	}
	return cp.StartAPIServer()
}

// StopAPIServer kills kube-apiserver (SIGKILL, as RestartAPIServer does) and
// leaves it down, etcd running, until StartAPIServer. Behind a proxy (a
// shared control plane of WorkloadForTest) it cuts the proxy instead.
func (cp *ControlPlane) StopAPIServer() error {
	if cp != nil && cp.proxy != nil {
		return cp.proxy.Cut()
	}
	if cp == nil || cp.env == nil || cp.env.ControlPlane.APIServer == nil {
		return errors.New("localcp: the control plane is not running")
	}
	pids := processesWithArg("--cert-dir=" + cp.certDir)
	if len(pids) != 1 {
		return fmt.Errorf("localcp: want exactly one kube-apiserver with --cert-dir=%s, found %v", cp.certDir, pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		return fmt.Errorf("localcp: kill kube-apiserver %d: %w", pids[0], err)
	}
	// Stop notices the exit, and resets what Start sets up again.
	if err := cp.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("localcp: stop kube-apiserver: %w", err)
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same
// address with the same certificates, so every client keeps working.
func (cp *ControlPlane) StartAPIServer() error {
	if cp != nil && cp.proxy != nil {
		return cp.proxy.Restore()
	}
	if cp == nil || cp.env == nil || cp.env.ControlPlane.APIServer == nil {
		return errors.New("localcp: the control plane is not running")
	}
	if err := cp.env.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("localcp: start kube-apiserver again (log in %s): %w", filepath.Join(cp.Dir, "logs"), err)
	}
	return nil
}

// processesWithArg lists the processes with arg on their command line.
// Linux only; elsewhere it finds nothing.
func processesWithArg(arg string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(cmdline, []byte{0}) {
			if string(a) == arg {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
