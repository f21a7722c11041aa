package main

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// workload is one Cluster of a -workload-clusters run: its own API server
// (a local control plane like the bench's) and a fast client to it.
type workload struct {
	cluster string
	cp      *localcp.ControlPlane
	client  client.WithWatch
}

// startWorkloads starts k local control planes next to the bench's, in
// parallel (each takes a while on a loaded machine), under dir/workload-I.
// stop stops the ones that started.
func startWorkloads(dir string, k int) (ws []*workload, stop func() error, err error) {
	ws = make([]*workload, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cp, err := localcp.Start(localcp.Options{Dir: filepath.Join(dir, fmt.Sprintf("workload-%d", i)), Fresh: true, Port: -1, Log: logWriter{}})
			if err != nil {
				errs[i] = fmt.Errorf("workload cluster %d: %w", i, err)
				return
			}
			fast := *cp.Config
			fast.QPS, fast.Burst = 2000, 4000
			c, err := client.NewWithWatch(&fast, client.Options{Scheme: cp.Scheme})
			ws[i] = &workload{cluster: fmt.Sprintf("wc-%d", i), cp: cp, client: c}
			errs[i] = err
		}()
	}
	wg.Wait()
	stop = func() error {
		var all []error
		for _, w := range ws {
			if w != nil {
				all = append(all, w.cp.Stop())
			}
		}
		return errors.Join(all...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	return ws, stop, nil
}

// hostOf is the host:port of an API server URL, as client-go's host label
// of rest_client_requests_total names it.
func hostOf(apiServer string) (string, error) {
	u, err := url.Parse(apiServer)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}
