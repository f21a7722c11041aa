package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/rest"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// cpuChunk is how long each CPU profile the bench asks a process for
// lasts. pprof's endpoint profiles for a number of seconds fixed up front,
// and a phase's length is not known until it ends, so a phase is profiled
// in chunks that are merged at its end; the last chunk runs past the end
// by less than this, while the bench waits before the next phase starts.
const cpuChunk = time.Second

// pprofTarget is a process the bench profiles: the controller under
// measurement (krtt or Cluster API, on its loopback pprof endpoint),
// kube-apiserver (its /debug/pprof, through the bench's admin client), etcd
// (its client address) and the bench itself (serveOwnPprof).
type pprofTarget struct {
	// name prefixes the files: krtt or capi, then for the other processes
	// that name and -kube-apiserver, -etcd or -bench.
	name string
	base string
	http *http.Client
	// heap: the phase's heap at its start and end is written too.
	heap bool
}

// phaseProfile profiles the processes of one phase (create, delete): CPU
// for the whole phase, and the controller's heap at its start and its end
// (the start one is the base that shows what the phase allocated:
// go tool pprof -sample_index=alloc_space -base START END).
type phaseProfile struct {
	targets []pprofTarget
	dir     string
	phase   string
	res     *Result
	stop    chan struct{}
	done    []chan cpuResult
	once    sync.Once
	err     error
}

type cpuResult struct {
	profiles []*profile.Profile
	err      error
}

// profileTargets are the processes -profile profiles: the controller when
// it is one process serving pprof, and kube-apiserver, etcd and the bench,
// which together use what the machine's cores give a phase: the profile of
// each tells what the time the controller does not spend goes to.
func profileTargets(b *bench, ps procs) ([]pprofTarget, error) {
	if b.profileDir == "" || len(ps) != 1 || ps[0].pprof == "" {
		return nil, nil
	}
	ctl := controllerLabel(ps[0].name)
	targets := []pprofTarget{{name: ctl, base: ps[0].pprof, http: http.DefaultClient, heap: true}}
	if b.cp != nil && b.cp.Config != nil {
		hc, err := rest.HTTPClientFor(b.cp.Config)
		if err != nil {
			return nil, fmt.Errorf("client for kube-apiserver's pprof: %w", err)
		}
		// Named after the controller too: both controllers of a -peer run
		// share one kube-apiserver and one directory.
		targets = append(targets, pprofTarget{name: ctl + "-kube-apiserver", base: strings.TrimSuffix(b.cp.Config.Host, "/") + "/debug/pprof", http: hc})
	}
	for _, t := range []struct{ suffix, base string }{{"-etcd", b.etcdPprof}, {"-bench", b.ownPprof}} {
		if t.base != "" {
			targets = append(targets, pprofTarget{name: ctl + t.suffix, base: t.base, http: http.DefaultClient})
		}
	}
	return targets, nil
}

// serveOwnPprof serves this process's CPU profile on a free loopback port,
// so that a phase profiles the bench (the simulated provider, the kubelets
// and the clients) the way it profiles the other processes; stop closes it.
func serveOwnPprof() (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen for the bench's own pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/debug/pprof", func() { _ = srv.Close() }, nil
}

// withProfiler adds --profiler-address on a free loopback port to a
// controller's arguments when the run is profiled (krtt's operator and
// Cluster API's manager both take the flag), and returns the base URL of
// its pprof endpoint; empty when the run is not profiled.
func withProfiler(b *bench, args []string) ([]string, string, error) {
	if b.profileDir == "" {
		return args, "", nil
	}
	port, err := localcp.FreePort()
	if err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	return append(args, "--profiler-address", addr), "http://" + addr + "/debug/pprof", nil
}

// controllerLabel names a controller process in profile files.
func controllerLabel(proc string) string {
	if proc == capiProcName {
		return "capi"
	}
	return "krtt"
}

// startPhaseProfile starts profiling the phase when -profile is set and
// the controller is one process with its pprof endpoint; nil otherwise
// (end of nil does nothing).
func startPhaseProfile(ctx context.Context, b *bench, ps procs, phase string, res *Result) (*phaseProfile, error) {
	targets, err := profileTargets(b, ps)
	if err != nil || len(targets) == 0 {
		return nil, err
	}
	p := &phaseProfile{targets: targets, dir: b.profileDir, phase: phase, res: res, stop: make(chan struct{})}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	for _, t := range targets {
		if t.heap {
			if err := p.writeHeap(ctx, t, "start"); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range targets {
		done := make(chan cpuResult, 1)
		p.done = append(p.done, done)
		go func() {
			var out cpuResult
			for stopped := false; !stopped; {
				prof, err := fetchProfile(ctx, t.http, fmt.Sprintf("%s/profile?seconds=%d", t.base, int(cpuChunk/time.Second)))
				if err != nil {
					out.err = err
					break
				}
				out.profiles = append(out.profiles, prof)
				select {
				case <-p.stop:
					stopped = true
				default:
				}
			}
			done <- out
		}()
	}
	return p, nil
}

// end stops the CPU chunks, merges each process's and writes the phase's
// profiles.
func (p *phaseProfile) end(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.once.Do(func() {
		close(p.stop)
		var errs []error
		for i, t := range p.targets {
			cpu := <-p.done[i]
			if cpu.err != nil {
				errs = append(errs, fmt.Errorf("CPU profile of %s in the %s phase: %w", t.name, p.phase, cpu.err))
			}
			if len(cpu.profiles) > 0 {
				merged, err := profile.Merge(cpu.profiles)
				if err == nil {
					err = p.write(t.name+"-cpu-"+p.phase, merged)
				}
				errs = append(errs, err)
			}
			if t.heap {
				errs = append(errs, p.writeHeap(ctx, t, "end"))
			}
		}
		p.err = errors.Join(errs...)
	})
	return p.err
}

// writeHeap writes a process's heap profile, after a GC so in-use figures
// are live objects only.
func (p *phaseProfile) writeHeap(ctx context.Context, t pprofTarget, when string) error {
	prof, err := fetchProfile(ctx, t.http, t.base+"/heap?gc=1")
	if err != nil {
		return fmt.Errorf("heap profile of %s at the %s of the %s phase: %w", t.name, when, p.phase, err)
	}
	return p.write(t.name+"-heap-"+p.phase+"-"+when, prof)
}

func (p *phaseProfile) write(name string, prof *profile.Profile) error {
	var buf bytes.Buffer
	if err := prof.Write(&buf); err != nil {
		return err
	}
	path := filepath.Join(p.dir, name+".pb.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	p.res.Profiles = append(p.res.Profiles, path)
	return nil
}

func fetchProfile(ctx context.Context, hc *http.Client, url string) (*profile.Profile, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return profile.ParseData(body)
}
