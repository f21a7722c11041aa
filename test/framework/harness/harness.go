// Package harness runs the krtt operator in-process against a real
// kube-apiserver and etcd (envtest), for integration tests and the Gherkin
// specs. Tests play the providers by writing the contract fields.
package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/actions/controller"
	machineactions "github.com/krtt-dev/krtt/actions/machine"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/leakcheck"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// Harness is a control plane plus a restartable operator.
type Harness struct {
	Env *localcp.ControlPlane
	// Client labels the krtt objects it creates with Filter (see labelling).
	Client client.Client
	// Set is the Machine table set; Sets every set the operator runs,
	// for row coverage.
	Set  *engine.TableSet
	Sets actions.TableSets
	// Clock is the operator's clock; scenarios advance it past timeouts.
	Clock *Clock
	// Audit checks the operator's writes from inside actions against the
	// actions' markers, across restarts.
	Audit *WriteAudit
	// Errors keeps what the operator logged as errors.
	Errors *ErrorLog
	// NoSelfHosted starts the operator without self-hosted Clusters
	// (controller.Options.SelfHostedClusters off) at its next start; most
	// scenarios' Clusters have no Secret, their Nodes in Env, so it is on
	// unless a scenario turns it off.
	NoSelfHosted bool
	// NodeSync is controller.Options.NodeSync at the operator's next start.
	NodeSync controller.NodeSync

	mu       sync.Mutex
	cancel   context.CancelFunc
	done     chan error
	traces   []engine.Trace
	subs     []func(engine.Trace)
	workload workload
}

// Start brings up the control plane (localcp.ForTest: the one make test
// shares, or one of its own) and the operator, which manages only the
// objects labelled Filter (the fixtures here label theirs).
func Start() (*Harness, error) { return start(localcp.ForTest) }

// StartAlone is Start on a control plane of its own (localcp.OwnForTest),
// for the Gherkin suite: some of its scenarios stop serving the SimMachine
// CRD for a while, which other packages' tests on a shared control plane
// would meet as "the server could not find the requested resource".
func StartAlone() (*Harness, error) { return start(localcp.OwnForTest) }

func start(controlPlane func() (*localcp.ControlPlane, error)) (*Harness, error) {
	errs := &ErrorLog{}
	ctrl.SetLogger(errs.Recording(zap.New(zap.UseDevMode(false), zap.Level(zapLevel()))))
	env, err := controlPlane()
	if err != nil {
		return nil, err
	}
	sets, err := actions.LoadSets("")
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	plural := map[string]string{}
	for _, c := range actions.Controllers {
		gvk, err := apiutil.GVKForObject(c.Object, actions.Scheme())
		if err != nil {
			_ = env.Stop()
			return nil, err
		}
		resource, _ := meta.UnsafeGuessKindToResource(gvk)
		plural[c.Name] = resource.Resource
	}
	h := &Harness{Env: env, Client: labelling{env.Client}, Set: sets[machineactions.Name], Sets: sets, Clock: &Clock{},
		Audit: NewWriteAudit(plural), Errors: errs}
	if err := h.StartOperator(); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return h, nil
}

// StartOperator starts a fresh manager with every controller.
func (h *Harness) StartOperator() error {
	o, err := OperatorOptions(Filter)
	if err != nil {
		return err
	}
	cfg := rest.CopyConfig(h.Env.Config)
	cfg.Wrap(h.Audit.Wrap)
	mgr, err := actions.NewManager(cfg, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The connections stamp their state changes (since when a workload
	// cluster is unreachable, when it came back) with the operator's clock.
	workload := workloadOptions
	workload.Now = h.Clock.Now
	err = actions.Setup(ctx, mgr, h.Sets, controller.Options{Concurrency: 4, Workload: workload, Traces: h.record, Now: h.Clock.Now, ClockJumps: h.Clock.OnJump,
		SelfHostedClusters: !h.NoSelfHosted, NodeSync: h.NodeSync})
	if err != nil {
		cancel()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	h.mu.Lock()
	h.cancel, h.done = cancel, done
	h.mu.Unlock()
	return nil
}

// StopOperator stops the manager and waits until it has stopped.
func (h *Harness) StopOperator() error {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.cancel, h.done = nil, nil
	h.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		return fmt.Errorf("operator did not stop within 60s")
	}
}

// RestartOperator stops and starts the operator (a crash and restart).
func (h *Harness) RestartOperator() error {
	if err := h.StopOperator(); err != nil {
		return err
	}
	return h.StartOperator()
}

// Stop tears everything down, and reports the controllers or informers
// still running then (leakcheck.AfterAll): the harness's operator is the
// last of its process's.
func (h *Harness) Stop() error {
	err := errors.Join(h.StopOperator(), leakcheck.AfterAll())
	if e := h.stopWorkload(); err == nil {
		err = e
	}
	if e := h.Env.Stop(); err == nil {
		err = e
	}
	return err
}

func (h *Harness) record(tr engine.Trace) {
	h.mu.Lock()
	h.traces = append(h.traces, tr)
	subs := append([]func(engine.Trace){}, h.subs...)
	h.mu.Unlock()
	for _, fn := range subs {
		fn(tr)
	}
}

// Subscribe receives every trace from now on, across operator restarts.
func (h *Harness) Subscribe(fn func(engine.Trace)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs = append(h.subs, fn)
}

// Traces returns the traces recorded so far for one Machine (all when key is empty).
func (h *Harness) Traces(key types.NamespacedName) []engine.Trace {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []engine.Trace
	for _, tr := range h.traces {
		if key.Name == "" || tr.Object == key.String() {
			out = append(out, tr)
		}
	}
	return out
}

// Fired reports whether a row fired for the Machine.
func (h *Harness) Fired(key types.NamespacedName, table, row string) bool {
	for _, tr := range h.Traces(key) {
		if tr.Table == table && tr.Row == row {
			return true
		}
	}
	return false
}
