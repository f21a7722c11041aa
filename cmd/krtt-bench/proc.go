package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// controllerProc is a controller under measurement, run as its own
// process so its CPU time and memory can be read from /proc.
type controllerProc struct {
	name    string
	cmd     *exec.Cmd
	metrics string // URL of the Prometheus endpoint
	ready   string // URL answering 200 once the manager is up
	done    chan error
	log     *os.File
	// filter is the --watch-filter value of an operator instance of
	// -instances; empty for a controller of the whole fleet.
	filter string
	// pprof is the base URL of its /debug/pprof endpoint, when -profile
	// asked for one.
	pprof string
}

// procs are the processes of the controller under measurement: one, or
// one per operator instance with -instances.
type procs []*controllerProc

// stop stops every process.
func (ps procs) stop() error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.stop())
	}
	return errors.Join(errs...)
}

// sample reads every process at (nearly) one instant.
func (ps procs) sample() ([]sample, error) {
	out := make([]sample, len(ps))
	var errs []error
	for i, p := range ps {
		s, err := p.sample()
		out[i] = s
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

func startProc(name, bin string, args []string, metricsURL, readyURL, logPath string) (*controllerProc, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &controllerProc{name: name, metrics: metricsURL, ready: readyURL, done: make(chan error, 1), log: lf}
	p.cmd = exec.Command(bin, args...)
	// Only --kubeconfig decides where it connects.
	p.cmd.Env = append(os.Environ(), "KUBECONFIG=")
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches the bench, which stops it
	if err := p.cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	logf("%s pid %d, metrics %s, log %s", name, p.cmd.Process.Pid, metricsURL, logPath)
	go func() { p.done <- p.cmd.Wait() }()
	return p, nil
}

func (p *controllerProc) pid() int { return p.cmd.Process.Pid }

func (p *controllerProc) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited early (%v); see %s", p.name, err, p.log.Name())
		default:
		}
		resp, err := http.Get(p.ready)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if _, err := p.scrape(); err == nil {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s; see %s", p.name, timeout, p.log.Name())
		}
		time.Sleep(pollEvery)
	}
}

func (p *controllerProc) stop() error {
	defer func() { _ = p.log.Close() }()
	select {
	case err := <-p.done:
		return fmt.Errorf("%s exited before the end: %v; see %s", p.name, err, p.log.Name())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within 30s of SIGTERM; killed", p.name)
	}
}

// scrape returns the process's client-go requests so far, by API server
// and method, and by verb and resource when it counts them
// (krtt_api_requests_total).
func (p *controllerProc) scrape() (s sample, err error) {
	resp, err := http.Get(p.metrics)
	if err != nil {
		return s, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%s metrics: %s", p.name, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return s, err
	}
	if s.byHost, err = parseRequestsByHost(bytes.NewReader(body)); err != nil {
		return s, err
	}
	s.requests = s.byHost.total()
	if s.kinds, err = parseKinds(bytes.NewReader(body)); err != nil {
		return s, err
	}
	if s.rows, err = parseRows(bytes.NewReader(body)); err != nil {
		return s, err
	}
	s.reconciles, err = parseReconciles(bytes.NewReader(body))
	return s, err
}

// sample is what is read from a controller at one instant.
type sample struct {
	requests, kinds requestCounts
	// rows is krtt_transitions_total by controller, table, row and outcome.
	rows requestCounts
	// reconciles is controller_runtime_reconcile_total by controller and
	// result.
	reconciles requestCounts
	// byHost splits requests by the API server they went to.
	byHost hostRequests
	cpu    float64
}

// sum adds samples of several processes up.
func sum(ss []sample) sample {
	out := sample{requests: requestCounts{}, kinds: requestCounts{}, rows: requestCounts{}, reconciles: requestCounts{}, byHost: hostRequests{}}
	for _, s := range ss {
		out.cpu += s.cpu
		for k, v := range s.requests {
			out.requests[k] += v
		}
		for k, v := range s.kinds {
			out.kinds[k] += v
		}
		for k, v := range s.rows {
			out.rows[k] += v
		}
		for k, v := range s.reconciles {
			out.reconciles[k] += v
		}
		for h, counts := range s.byHost {
			if out.byHost[h] == nil {
				out.byHost[h] = requestCounts{}
			}
			for k, v := range counts {
				out.byHost[h][k] += v
			}
		}
	}
	return out
}

func (p *controllerProc) sample() (sample, error) {
	s, err1 := p.scrape()
	cpu, err2 := cpuSeconds(p.pid())
	s.cpu = cpu
	return s, errors.Join(err1, err2)
}
