package leakcheck

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/test/framework/poll"
)

// fakeT records failures and runs cleanups when end is called.
type fakeT struct {
	errs     []string
	cleanups []func()
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// controllerRunnable is a real controller-runtime controller (no API
// server needed: it has no sources), the machinery a leaked manager runs.
func controllerRunnable(t *testing.T) controller.Controller {
	t.Helper()
	c, err := controller.NewUnmanaged("leakcheck-"+t.Name(), controller.Options{SkipNameValidation: new(true),
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func shortSettle(t *testing.T) {
	old := settleFor
	settleFor = func() time.Duration { return 2 * time.Second }
	t.Cleanup(func() { settleFor = old })
}

func TestCheckNamesALeftoverController(t *testing.T) {
	shortSettle(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeT{}
	Check(f)
	go func() { _ = controllerRunnable(t).Start(ctx) }()
	// Running, not just about to: a goroutine not yet in Start is no leak.
	if err := poll.Until(ctx, time.Minute, func(context.Context) error {
		for _, g := range goroutines() {
			if g.matches(reconciling) {
				return nil
			}
		}
		return fmt.Errorf("the controller has not started")
	}); err != nil {
		t.Fatal(err)
	}
	f.end()
	if len(f.errs) != 1 || !strings.Contains(f.errs[0], "sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).") {
		t.Fatalf("a controller left running: failures %q, want one naming the controller's frames", f.errs)
	}
}

func TestGroupStopsWhatItRuns(t *testing.T) {
	shortSettle(t)
	f := &fakeT{}
	g := NewGroup(f)
	g.Go("controller", controllerRunnable(t))
	f.end()
	if len(f.errs) != 0 {
		t.Fatalf("failures %q for a controller the group stopped", f.errs)
	}
}

func TestParse(t *testing.T) {
	dump := `goroutine 7 [select]:
sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue[...]).handleAddBuffer(0x1455260)
	/mod/priorityqueue.go:1 +0x1
created by sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.New[...] in goroutine 52
	/mod/priorityqueue.go:2 +0x2

goroutine 9 [IO wait]:
net/http.(*persistConn).readLoop(0x1)
	/go/transport.go:1 +0x1
created by net/http.(*Transport).dialConn in goroutine 8
	/go/transport.go:2 +0x2
`
	gs := parse(dump)
	if len(gs) != 2 || gs[0].id != 7 || gs[0].state != "select" || gs[1].id != 9 {
		t.Fatalf("parsed %+v", gs)
	}
	if !gs[0].matches(reconciling) || gs[1].matches(reconciling) || gs[1].matches(caching) {
		t.Errorf("a work queue must count and an HTTP keep-alive must not: %+v", gs)
	}
	if want := "created by net/http.(*Transport).dialConn"; gs[1].funcs[1] != want {
		t.Errorf("creator %q, want %q", gs[1].funcs[1], want)
	}
}
