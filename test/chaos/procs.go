package chaos

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// binaries are the operator and the simulated provider, built once per
// test binary into a temporary directory.
type binaries struct {
	operator, sim string
}

func buildBinaries(root, dir string) (binaries, error) {
	b := binaries{operator: filepath.Join(dir, "krtt-operator"), sim: filepath.Join(dir, "krtt-sim")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return b, err
	}
	cmd := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./cmd/krtt-operator", "./cmd/krtt-sim")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return b, fmt.Errorf("build the operator and the sim: %w\n%s", err, out)
	}
	return b, nil
}

// proc is one operator or sim process.
type proc struct {
	name    string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	log     string
	metrics string
	probe   string
}

// startProc starts bin with args, its output appended to logPath. For the
// operator, metrics and probes are bound to free ports on 127.0.0.1.
func startProc(name, bin, logPath string, withPorts bool, args ...string) (*proc, error) {
	p := &proc{name: name, log: logPath, done: make(chan struct{})}
	if withPorts {
		mport, err1 := localcp.FreePort()
		pport, err2 := localcp.FreePort()
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		p.metrics, p.probe = fmt.Sprintf("127.0.0.1:%d", mport), fmt.Sprintf("127.0.0.1:%d", pport)
		// Plain HTTP on loopback: the suite scrapes without a token.
		args = append(args, "--metrics-bind-address", p.metrics, "--metrics-secure=false", "--health-probe-bind-address", p.probe)
	}
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	_, _ = fmt.Fprintf(lf, "=== %s start %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG=")
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	// Its own process group: a Ctrl-C of the test does not reach it
	// first, and a kill of it reaches nothing else.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		_ = lf.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL (no shutdown, no lease release) and waits for the end.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and waits, killing it after 20s.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

// ready reports whether the operator answers /readyz.
func (p *proc) ready() error {
	if p.exited() {
		return fmt.Errorf("%s exited: %v (log %s)", p.name, p.err, p.log)
	}
	resp, err := http.Get("http://" + p.probe + "/readyz")
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s /readyz: %s", p.name, resp.Status)
	}
	return nil
}

// leader reports whether the operator holds the leader Lease, by its
// leader_election_master_status metric.
func (p *proc) leader() bool {
	if p.exited() {
		return false
	}
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "leader_election_master_status{") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil && v == 1 {
			return true
		}
	}
	return false
}

// queueMetrics is the operator's work queue and request metrics, for a
// diagnosis when it stops making progress.
func (p *proc) queueMetrics() string {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, prefix := range []string{"workqueue_depth{", "workqueue_unfinished_work_seconds{", "workqueue_retries_total{", "workqueue_adds_total{", "rest_client_requests_total{"} {
			if strings.HasPrefix(line, prefix) && !strings.HasSuffix(line, " 0") {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "; ")
}
