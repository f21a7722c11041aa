// Package leakcheck fails a test that leaves controllers running after it
// ended. Test packages share control planes (make test), so a manager a
// test forgot to stop keeps reconciling — against the next test's objects,
// or against a control plane that is gone, retrying for minutes — and makes
// failures that show up in some other test. Check compares the goroutines
// alive when a test ends with those alive when it began; AfterAll, at the
// end of a package, looks for any left.
//
// Only goroutines of reconciling machinery count (controller-runtime's
// controllers, work queues, managers and event sources, krtt's workload
// cluster connections; informers too in AfterAll): the shared control
// planes' clients legitimately keep HTTP connections and their goroutines
// for the whole run.
package leakcheck

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/krtt-dev/krtt/test/framework/poll"
)

// T is what Check needs of a testing.TB; an interface, so binaries that
// import localcp do not link the testing package.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Settle is how long (Scaled) stopped machinery gets to wind down before
// what remains is a leak: a controller finishes the reconciles in flight
// first, which against an unreachable API server take their timeouts.
const Settle = 45 * time.Second

// reconciling are the function prefixes that make a goroutine part of a
// controller's machinery.
var reconciling = []string{
	"sigs.k8s.io/controller-runtime/pkg/internal/controller.",
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.",
	"sigs.k8s.io/controller-runtime/pkg/manager.",
	"sigs.k8s.io/controller-runtime/pkg/internal/source.",
	"github.com/krtt-dev/krtt/internal/remote.(*Cache)",
}

// caching are the prefixes of informers, which AfterAll counts too. Check
// does not: a manager the package keeps for all its tests starts an
// informer during whichever test first reads a kind, and it rightly stays.
var caching = []string{
	"k8s.io/client-go/tools/cache.",
	"sigs.k8s.io/controller-runtime/pkg/cache.",
}

// Check makes t fail when, at its end (after every cleanup registered after
// Check, so call it before starting anything), a goroutine of reconciling
// machinery that t started is still alive. The failure names each one by
// its top frames.
func Check(t T) {
	t.Helper()
	before := map[int64]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	t.Cleanup(func() {
		t.Helper()
		left := settle(func(g goroutine) bool { return !before[g.id] && g.matches(reconciling) })
		if len(left) > 0 {
			t.Errorf("leakcheck: %d goroutine(s) this test started still reconcile after it ended (stop every manager and controller it starts: leakcheck.Group):\n%s",
				len(left), describe(left))
		}
	})
}

// AfterAll reports the reconciling machinery or informers still alive
// (after Settle), for a TestMain once its tests ran and its managers were
// stopped.
func AfterAll() error {
	both := slices.Concat(reconciling, caching)
	left := settle(func(g goroutine) bool { return g.matches(both) })
	if len(left) == 0 {
		return nil
	}
	return fmt.Errorf("leakcheck: %d goroutine(s) still reconcile or watch after the tests ended (a manager, controller or cache was not stopped):\n%s",
		len(left), describe(left))
}

// settleFor is poll.Scaled(Settle); a variable so this package's tests
// need not wait that long for the leak they make on purpose.
var settleFor = func() time.Duration { return poll.Scaled(Settle) }

// settle waits (polling, up to Settle Scaled) until no goroutine is leaked,
// and returns those that still are.
func settle(leaked func(goroutine) bool) []goroutine {
	var left []goroutine
	_ = poll.Until(context.Background(), settleFor(), func(context.Context) error {
		left = left[:0]
		for _, g := range goroutines() {
			if leaked(g) {
				left = append(left, g)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("%d left", len(left))
		}
		return nil
	})
	return left
}

// goroutine is one goroutine of a runtime.Stack dump.
type goroutine struct {
	id    int64
	state string
	// funcs are the functions of its frames, innermost first, then the
	// one that created it.
	funcs []string
}

func (g goroutine) matches(prefixes []string) bool {
	for _, f := range g.funcs {
		f = strings.TrimPrefix(f, "created by ")
		for _, p := range prefixes {
			if strings.HasPrefix(f, p) {
				return true
			}
		}
	}
	return false
}

// topFrames is how many frames a failure shows per goroutine.
const topFrames = 6

func describe(gs []goroutine) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "  goroutine %d [%s]:\n", g.id, g.state)
		for i, f := range g.funcs {
			if i == topFrames && i < len(g.funcs)-1 {
				fmt.Fprintf(&b, "    ...\n")
				f = g.funcs[len(g.funcs)-1]
			} else if i > topFrames {
				continue
			}
			fmt.Fprintf(&b, "    %s\n", f)
		}
	}
	return b.String()
}

func goroutines() []goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return parse(string(buf[:n]))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parse reads a runtime.Stack(all) dump: blocks separated by blank lines,
// each "goroutine N [state]:" then a function line and a file line per
// frame, and "created by F in goroutine M" last.
func parse(dump string) []goroutine {
	var out []goroutine
	for _, block := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		lines := strings.Split(block, "\n")
		head, ok := strings.CutPrefix(lines[0], "goroutine ")
		if !ok {
			continue
		}
		idText, state, _ := strings.Cut(head, " ")
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			continue
		}
		g := goroutine{id: id, state: strings.TrimSuffix(strings.TrimPrefix(state, "["), "]:")}
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "\t") || l == "" {
				continue // a file:line, or nothing
			}
			if created, ok := strings.CutPrefix(l, "created by "); ok {
				fn, _, _ := strings.Cut(created, " in goroutine ")
				g.funcs = append(g.funcs, "created by "+fn)
				continue
			}
			g.funcs = append(g.funcs, funcName(l))
		}
		out = append(out, g)
	}
	return out
}

// funcName strips the arguments of a frame line: "pkg.(*T).M(0x1, ...)".
func funcName(line string) string {
	if i := strings.LastIndex(line, "("); i > 0 && strings.HasSuffix(line, ")") {
		return line[:i]
	}
	return line
}

// Started waits until mgr, a manager the package keeps for all its tests,
// has started every controller's workers, so that Check does not take the
// rest of its start for a test's leak. Elected closes once every
// controller's Start runs; a controller still in startEventSourcesAndQueue
// is waiting for its caches and has workers to launch.
func Started(ctx context.Context, mgr interface{ Elected() <-chan struct{} }) error {
	select {
	case <-mgr.Elected():
	case <-ctx.Done():
		return ctx.Err()
	}
	return poll.Until(ctx, poll.Scaled(Settle), func(context.Context) error {
		for _, g := range goroutines() {
			if g.runs("sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).startEventSourcesAndQueueLocked") &&
				g.runs("sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).Start") {
				return fmt.Errorf("a controller still waits for its caches:\n%s", describe([]goroutine{g}))
			}
		}
		return nil
	})
}

// runs reports whether fn is one of g's frames (not its creator).
func (g goroutine) runs(fn string) bool {
	return slices.Contains(g.funcs, fn)
}
