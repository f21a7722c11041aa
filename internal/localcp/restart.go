package localcp

import (
	"errors"
	"fmt"
)

// RestartAPIServer stops kube-apiserver and starts it again on the same
// address with the same serving certificates and client CA, so every
// client and kubeconfig keeps working; etcd keeps running, so no state is
// lost. Between the two, clients see connection refused, as on a real
// control-plane restart. down, when not nil, runs while the API server is
// down (e.g. to hold it down for a while).
func (cp *ControlPlane) RestartAPIServer(down func()) error {
	if cp == nil || cp.env == nil || cp.env.ControlPlane.APIServer == nil {
		return errors.New("localcp: the control plane is not running")
	}
	api := cp.env.ControlPlane.APIServer
	if err := api.Stop(); err != nil {
		return fmt.Errorf("localcp: stop kube-apiserver: %w", err)
	}
	if down != nil {
		down()
	}
	if err := api.Start(); err != nil {
		return fmt.Errorf("localcp: start kube-apiserver again (log in %s): %w", cp.Dir+"/logs", err)
	}
	return nil
}
