package leakcheck

import (
	"context"
	"sync"
	"time"

	"github.com/krtt-dev/krtt/test/framework/poll"
)

// Group runs the managers (and other runnables: caches, controllers) of one
// test and stops them when it ends: its context is cancelled and every
// Start must return, then Check looks for anything left running.
type Group struct {
	t      T
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	runs   map[string]bool
}

// StopTimeout is how long (Scaled) a stopped manager gets to return from
// Start; controller-runtime's own graceful shutdown default is 30 s.
const StopTimeout = 60 * time.Second

// NewGroup returns t's Group; Check(t) is part of it.
func NewGroup(t T) *Group {
	t.Helper()
	Check(t)
	ctx, cancel := context.WithCancel(context.Background())
	g := &Group{t: t, ctx: ctx, cancel: cancel, runs: map[string]bool{}}
	t.Cleanup(g.Stop)
	return g
}

// Context is the context the group's runnables run in (and their setup,
// e.g. the field indexes of a manager, should be given).
func (g *Group) Context() context.Context { return g.ctx }

// Go starts r in the group; an error from its Start fails the test.
func (g *Group) Go(name string, r interface{ Start(context.Context) error }) {
	g.mu.Lock()
	g.runs[name] = true
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := r.Start(g.ctx)
		g.mu.Lock()
		delete(g.runs, name)
		g.mu.Unlock()
		if err != nil {
			g.t.Errorf("%s: %v", name, err)
		}
	}()
}

// Stop cancels the group's context and waits for every runnable to return
// (the test's cleanup does it; a test may stop earlier, e.g. to restart).
func (g *Group) Stop() {
	g.cancel()
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(poll.Scaled(StopTimeout)):
		g.mu.Lock()
		defer g.mu.Unlock()
		g.t.Errorf("leakcheck: still running %s after it was stopped: %v", poll.Scaled(StopTimeout), g.runs)
	}
}
