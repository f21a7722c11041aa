package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

// cpuChunk is how long each CPU profile the bench asks the operator for
// lasts. pprof's endpoint profiles for a number of seconds fixed up front,
// and a phase's length is not known until it ends, so a phase is profiled
// in chunks that are merged at its end; the last chunk runs past the end
// by less than this, while the bench waits before the next phase starts.
const cpuChunk = time.Second

// phaseProfile profiles the krtt operator during one phase (create,
// delete): CPU for the whole phase, the heap at its start and its end (the
// start one is the base that shows what the phase allocated:
// go tool pprof -sample_index=alloc_space -base START END).
type phaseProfile struct {
	base, dir, phase string
	res              *Result
	stop             chan struct{}
	done             chan cpuResult
	once             sync.Once
	err              error
}

type cpuResult struct {
	profiles []*profile.Profile
	err      error
}

// startPhaseProfile starts profiling the phase when -profile is set and
// the controller is one krtt operator with its pprof endpoint; nil
// otherwise (end of nil does nothing).
func startPhaseProfile(ctx context.Context, b *bench, ps procs, phase string, res *Result) (*phaseProfile, error) {
	if b.profileDir == "" || len(ps) != 1 || ps[0].pprof == "" {
		return nil, nil
	}
	p := &phaseProfile{base: ps[0].pprof, dir: b.profileDir, phase: phase, res: res,
		stop: make(chan struct{}), done: make(chan cpuResult, 1)}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	if err := p.heap(ctx, "start"); err != nil {
		return nil, err
	}
	go func() {
		var out cpuResult
		for stopped := false; !stopped; {
			prof, err := fetchProfile(ctx, fmt.Sprintf("%s/profile?seconds=%d", p.base, int(cpuChunk/time.Second)))
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
		p.done <- out
	}()
	return p, nil
}

// end stops the CPU chunks, merges them and writes the phase's profiles.
func (p *phaseProfile) end(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.once.Do(func() {
		close(p.stop)
		cpu := <-p.done
		var errs []error
		if cpu.err != nil {
			errs = append(errs, fmt.Errorf("CPU profile of the %s phase: %w", p.phase, cpu.err))
		}
		if len(cpu.profiles) > 0 {
			merged, err := profile.Merge(cpu.profiles)
			if err == nil {
				err = p.write("cpu-"+p.phase, merged)
			}
			errs = append(errs, err)
		}
		errs = append(errs, p.heap(ctx, "end"))
		p.err = errors.Join(errs...)
	})
	return p.err
}

// heap writes the operator's heap profile, after a GC so in-use figures
// are live objects only.
func (p *phaseProfile) heap(ctx context.Context, when string) error {
	prof, err := fetchProfile(ctx, p.base+"/heap?gc=1")
	if err != nil {
		return fmt.Errorf("heap profile at the %s of the %s phase: %w", when, p.phase, err)
	}
	return p.write("heap-"+p.phase+"-"+when, prof)
}

func (p *phaseProfile) write(name string, prof *profile.Profile) error {
	var buf bytes.Buffer
	if err := prof.Write(&buf); err != nil {
		return err
	}
	path := filepath.Join(p.dir, "krtt-"+name+".pb.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	p.res.Profiles = append(p.res.Profiles, path)
	return nil
}

func fetchProfile(ctx context.Context, url string) (*profile.Profile, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
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
