package chaos

import (
	"context"
	"errors"
	"fmt"
	"github.com/krtt-dev/krtt/actions"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/chaos/faultproxy"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/timeline"
)

// world is what every run shares: one control plane, the sim provider
// (its own process, talking to the API server directly) and the binaries.
type world struct {
	cp    *localcp.ControlPlane
	c     client.Client
	bins  binaries
	dir   string
	sim   *proc
	rules timeline.Rules
	seq   atomic.Int32
	// root is the checkout, simArgs the shared sim's arguments, wl the
	// workload cluster of the workload runs (started on first use).
	root    string
	simArgs []string
	wl      *localcp.ControlPlane
}

// spec describes one run.
type spec struct {
	name     string
	machines int
	// minKills > 0 SIGKILLs the operator, again and again, at a random
	// moment (faultDelay) after each new operator made progress, and fails
	// the run when fewer kills landed while Machines were left.
	minKills int
	// restart kube-apiserver this many times mid-deletion (each once the
	// operator made progress since the last, after faultDelay), each held
	// down for restartDown; fewer fails the run.
	restarts    int
	restartDown time.Duration
	faultDelay  [2]time.Duration
	// wave > 0 deletes the Machines that many at a time, each wave once the
	// ones before are gone (0: all at once). A fast operator deletes 60
	// Machines between a handful of kills; in waves, kills land all along
	// the deletion of every Machine.
	wave int
	// proxy puts the fault-injecting proxy between operator and API server.
	proxy bool
	// failover runs two replicas with leader election and kills the leader
	// mid-drain.
	failover bool
	// workload puts the Nodes, Pods, budgets and volumes of the Machines in
	// a second control plane, their Cluster's workload cluster, and takes
	// its kube-apiserver down for dark once every Machine drains, then
	// restarts it once more (restartDown) mid-drain: see runWorkload.
	workload bool
	dark     time.Duration
	// tables, when set, is a --tables directory for the operator (a
	// mutation test's edited tables).
	tables  string
	timeout time.Duration
	seed    uint64
}

// result is what a run measured.
type result struct {
	spec
	kills, restarts, unexpectedExits int
	requests, injected, watchesCut   int64
	converge, takeover               time.Duration
	// takeoverAfterExpiry is how long after the killed leader's Lease ran
	// out (its last renewTime + the lease duration, the replicas' own
	// clocks) the other replica's acquireTime lies; leaseTransitions counts
	// the holder changes from the kill to the takeover (1: no flapping).
	takeoverAfterExpiry time.Duration
	leaseTransitions    int32
	takeoverErr         error
	report              *timeline.Report
	// blindViolations counts the violations inside a window the
	// recorder's informers were blind in.
	blindViolations int
	events          int
	// record is the checked timeline, a line per event (formatTimeline).
	record string
	ns     string
	// leftovers is what the API server still holds of the run's Machines
	// (Nodes rows kept by design aside).
	leftovers []string
	// awaitingGC is what only the garbage collectors of
	// kube-controller-manager would remove, which these control planes do
	// not run: bootstrap Secrets whose owner is gone, Pods left on a Node
	// that is gone.
	awaitingGC   []string
	leftoversErr error
	err          error
	// wlRows counts, in a workload run, the Machines each
	// machine-workload-cluster row of wlRows fired for; plan is what the
	// run set up and did not happen (see nodeSideReport).
	wlRows map[string]int
	plan   []string
}

const (
	hookName     = "chaos"
	groupLabel   = "chaos.krtt.dev/group"
	leaseSeconds = 4
)

// run creates spec.machines Machines with a workload, deletes them under
// the faults of the spec, waits until they are gone and checks the
// recorded timeline.
func (w *world) run(ctx context.Context, s spec, logf func(string, ...any)) (res *result) {
	var ns string
	res = &result{spec: s}
	defer func() { res.ns = ns }()
	rnd := rand.New(rand.NewPCG(s.seed, s.seed+1))
	var rndMu sync.Mutex
	between := func(a, b time.Duration) time.Duration {
		rndMu.Lock()
		defer rndMu.Unlock()
		return a + time.Duration(rnd.Float64()*float64(b-a))
	}
	ns = fmt.Sprintf("chaos-%s-%d", s.name, w.seq.Add(1))
	logDir := filepath.Join(w.dir, ns)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		res.err = err
		return res
	}
	c := w.c
	if err := errors.Join(
		c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}),
		func() error { _, err := harness.ClusterObjects(ctx, c, ns, "c", true); return err }(),
	); err != nil {
		res.err = err
		return res
	}

	// The operator(s).
	kubeconfig := w.cp.Kubeconfig
	var px *faultproxy.Proxy
	if s.proxy {
		var err error
		if px, err = faultproxy.Start(w.cp.Config, faultproxy.DefaultFaults, s.seed); err != nil {
			res.err = err
			return res
		}
		defer px.Stop()
		kubeconfig = filepath.Join(logDir, "proxy.kubeconfig")
		if err := os.WriteFile(kubeconfig, []byte(px.Kubeconfig()), 0o600); err != nil {
			res.err = err
			return res
		}
	}
	// The chaos Clusters are self-hosted: the simulated kubelet's Nodes
	// are in the same control plane.
	args := []string{"--kubeconfig", kubeconfig, "--machine-concurrency", "4", "--zap-log-level", "info", "--self-hosted-clusters"}
	if s.tables != "" {
		args = append(args, "--tables", s.tables)
	}
	if s.failover {
		args = append(args, "--leader-elect", "--leader-election-namespace", ns,
			"--leader-election-lease-duration", fmt.Sprintf("%ds", leaseSeconds),
			"--leader-election-renew-deadline", fmt.Sprintf("%ds", leaseSeconds-1),
			"--leader-election-retry-period", "500ms")
	}
	ops := &operators{bin: w.bins.operator, args: args, logDir: logDir}
	defer ops.stopAll()
	replicas := 1
	if s.failover {
		replicas = 2
	}
	for range replicas {
		if _, err := ops.start(); err != nil {
			res.err = err
			return res
		}
	}
	if err := poll.Until(ctx, 60*time.Second, func(context.Context) error {
		if s.failover {
			if ops.leader() == nil {
				return errors.New("no leader elected")
			}
			return nil
		}
		return ops.current().ready()
	}); err != nil {
		res.err = fmt.Errorf("operator not ready: %w", err)
		return res
	}

	// The faults start with the workload, so the operator's watches are
	// cut and its requests fail from the first Machine on.
	if px != nil {
		px.On.Store(true)
	}

	// The workload.
	if px != nil {
		defer func() {
			res.requests, res.injected, res.watchesCut = px.N.Requests.Load(), px.Injected(), px.N.WatchesCut.Load()
		}()
	}
	defer w.startAttacher(ctx, ns, w.c, between)()
	names, err := w.createWorkload(ctx, ns, s.machines)
	if err != nil {
		res.err = fmt.Errorf("create the workload: %w; the operator's work queue then: %s", err, ops.current().queueMetrics())
		return res
	}
	logf("%s: %d Machines Running with Pods, PDBs, volumes and hooks", ns, len(names))

	rec, err := timeline.Record(ctx, w.cp.Config, w.cp.Scheme, ns)
	if err != nil {
		res.err = err
		return res
	}
	defer rec.Stop()

	drivers := startDrivers(ctx)
	defer drivers.end()
	runCtx, goDriver := drivers.ctx, drivers.run
	goDriver(func() { w.hookOwner(runCtx, ns, between) })
	goDriver(func() { w.replicaKeeper(runCtx, ns) })
	goDriver(func() { ops.supervise(runCtx, rec, &res.unexpectedExits) })

	if px != nil {
		rec.Mark("fault proxy on since the workload was created")
	}
	t0 := time.Now()
	wave := s.wave
	if wave <= 0 {
		wave = len(names)
	}
	rec.Mark("deleting %d Machines, %d at a time", len(names), wave)
	if err := deleteMachines(ctx, c, ns, names[:min(wave, len(names))]); err != nil {
		res.err = err
		return res
	}
	var waveErr error
	if wave < len(names) {
		goDriver(func() {
			for i := wave; i < len(names); i += wave {
				// The Machines of the earlier waves are gone.
				if err := poll.Until(runCtx, s.timeout, func(context.Context) error {
					if left := rec.Machines(); left > len(names)-i {
						return fmt.Errorf("%d Machines left", left)
					}
					return nil
				}); err != nil {
					return
				}
				next := names[i:min(i+wave, len(names))]
				rec.Mark("deleting Machines %d to %d", i+1, i+len(next))
				if err := deleteMachines(runCtx, c, ns, next); err != nil {
					waveErr = err
					return
				}
			}
		})
	}

	var kills, restarts atomic.Int32
	var outagesMu sync.Mutex
	var outages []timeline.Outage
	if s.minKills > 0 {
		goDriver(func() {
			for w.afterProgress(runCtx, rec, s, between) {
				ops.killCurrent()
				kills.Add(1)
				rec.Mark("SIGKILL operator (kill %d, %d Machines left)", kills.Load(), rec.Machines())
				if _, err := ops.start(); err != nil {
					logf("restart operator: %v", err)
				}
			}
		})
	}
	if s.restarts > 0 {
		goDriver(func() {
			for i := 0; i < s.restarts && w.afterProgress(runCtx, rec, s, between); i++ {
				rec.Mark("kube-apiserver stopping (restart %d, %d Machines left)", i+1, rec.Machines())
				rec.BlindFrom()
				down := time.Now()
				err := w.cp.RestartAPIServer(func() {
					select {
					case <-runCtx.Done():
					case <-time.After(s.restartDown):
					}
				})
				if err != nil {
					logf("restart kube-apiserver: %v", err)
					continue
				}
				outagesMu.Lock()
				outages = append(outages, timeline.Outage{Down: down, Up: time.Now()})
				outagesMu.Unlock()
				restarts.Add(1)
				rec.Mark("kube-apiserver started again (restart %d)", i+1)
				// A write after the restart: once every recorder informer has
				// synced past it, the recorder sees everything again.
				var after uint64
				_ = poll.Until(runCtx, s.timeout, func(context.Context) error {
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("chaos-resync-%d", i+1)}}
					if err := w.c.Create(runCtx, cm); err != nil {
						return err
					}
					after = timeline.ParseRV(cm.ResourceVersion)
					return nil
				})
				if err := rec.Resynced(runCtx, after, 10*time.Second); err != nil {
					logf("%v", err)
				}
				rec.Mark("recorder resynced after restart %d", i+1)
			}
		})
	}
	if s.failover {
		goDriver(func() {
			// Kill the leader while a Machine is draining.
			if err := poll.Until(runCtx, s.timeout, func(context.Context) error { return w.someDraining(runCtx, ns) }); err != nil {
				logf("failover: %v", err)
				return
			}
			leader := ops.leader()
			if leader == nil {
				logf("failover: no leader to kill")
				return
			}
			leader.kill()
			tKill := time.Now()
			kills.Add(1)
			rec.Mark("SIGKILL leader %s mid-drain", leader.name)
			// The dead leader renews no more: the Lease now holds its last renewal.
			before, leaseErr := w.lease(runCtx, ns)
			if err := poll.Until(runCtx, 3*leaseSeconds*time.Second+10*time.Second, func(context.Context) error {
				if l := ops.leader(); l == nil || l == leader {
					return errors.New("no new leader")
				}
				return nil
			}); err != nil {
				logf("failover: %v", err)
				return
			}
			res.takeover = time.Since(tKill)
			rec.Mark("new leader after %s", res.takeover.Round(time.Millisecond))
			after, err := w.lease(runCtx, ns)
			if err = errors.Join(leaseErr, err); err != nil {
				res.takeoverErr = err
				return
			}
			res.takeoverAfterExpiry, res.leaseTransitions, res.takeoverErr = takeoverOf(before, after)
		})
	}

	err = allMachinesGone(ctx, c, ns, s.timeout)
	res.converge = time.Since(t0)
	rec.Mark("all Machines gone (or deadline)")
	drivers.end()
	if px != nil {
		px.On.Store(false)
	}
	res.kills, res.restarts = int(kills.Load()), int(restarts.Load())
	if err != nil {
		res.err = fmt.Errorf("not converged: %w", err)
	}
	if waveErr != nil {
		res.err = errors.Join(res.err, fmt.Errorf("delete a wave of Machines: %w", waveErr))
	}

	// What the Machines owned goes asynchronously (the sim detaches
	// volumes once the Node is gone): wait for the record to show it. The
	// record is the audit log: every write, also those made while the
	// recorder's informers re-listed; the informers' timeline only
	// cross-checks it.
	var rep *timeline.Report
	var tl *timeline.Timeline
	var missing, lost []string
	var lostErr error
	earlier := newGoneEarlier(ctx, w.c)
	auditErr := poll.Until(ctx, 30*time.Second, func(context.Context) error {
		var err error
		if tl, err = timeline.ReadAuditLog(w.cp.AuditLog, ns, func(name string) bool { return strings.Contains(name, ns+"-") }); err != nil {
			return err
		}
		missing = timeline.Complete(tl, rec.Timeline(), outages)
		lost, lostErr = timeline.LostRemovals(tl, outages, earlier.gone)
		earlier.next()
		rep = timeline.Check(tl, w.rules, true)
		if len(rep.Leaked) > 0 {
			return errors.New(strings.Join(rep.Leaked, ", "))
		}
		return nil
	})
	if tl == nil {
		res.err = errors.Join(res.err, fmt.Errorf("read the audit log: %w", auditErr))
		return res
	}
	if len(missing) > 0 {
		rep.Violations = append(rep.Violations, timeline.Violation{Invariant: timeline.CompleteRecord, Object: "audit log",
			Message: fmt.Sprintf("%d versions the informers saw are not in the audit log: %s", len(missing), strings.Join(missing[:min(len(missing), 10)], ", "))})
	}
	for _, l := range lost {
		logf("lost by the audit log at an outage: %s", l)
	}
	if lostErr != nil {
		res.err = errors.Join(res.err, fmt.Errorf("ask the API server about removals the audit log may have lost: %w", lostErr))
	}
	res.report = rep
	res.events = len(tl.Events)
	informers := rec.Timeline()
	for _, v := range rep.Violations {
		for _, b := range informers.Blind {
			if v.RV > b.From && v.RV <= b.To {
				res.blindViolations++
				break
			}
		}
	}
	res.record = formatTimeline(tl)
	if err := os.WriteFile(filepath.Join(logDir, "timeline.txt"), []byte(res.record), 0o644); err != nil {
		logf("write timeline: %v", err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "informers.txt"), []byte(formatTimeline(rec.Timeline())), 0o644); err != nil {
		logf("write timeline: %v", err)
	}
	var kept []string
	if rep != nil {
		kept = rep.KeptNodes
	}
	// The second opinion on leaks, before cleanup removes the kept Nodes.
	res.leftovers, res.awaitingGC, res.leftoversErr = w.leftovers(ctx, ns, kept, tl, nodeSide{c: w.c})
	w.cleanup(ctx, ns, kept)
	return res
}

func formatTimeline(t *timeline.Timeline) string {
	var b strings.Builder
	for _, w := range t.Blind {
		fmt.Fprintf(&b, "blind window: rv %d..%d (changes in it may be seen only as end states)\n", w.From, w.To)
	}
	for i := range t.Events {
		b.WriteString(t.Format(&t.Events[i]))
		b.WriteByte('\n')
	}
	return b.String()
}

func describeMachines(ms []clusterv1.Machine) string {
	var parts []string
	for i, m := range ms {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		var conds []string
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue || c.Type == clusterv1.DeletingCondition {
				conds = append(conds, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
			}
		}
		row := ""
		if lt := m.Status.LastTransition; lt != nil {
			row = fmt.Sprintf(" row %s/%s %s at %s: %s", lt.Table, lt.Row, lt.Outcome, lt.Time.Format(time.TimeOnly), lt.Message)
		}
		parts = append(parts, fmt.Sprintf("%s[state %s%s; %s]", m.Name, m.Status.State, row, strings.Join(conds, "; ")))
	}
	return strings.Join(parts, "; ")
}

// operators is the set of operator processes of a run.
type operators struct {
	bin    string
	args   []string
	logDir string

	mu    sync.Mutex
	procs []*proc
	n     int
}

func (o *operators) start() (*proc, error) {
	o.mu.Lock()
	o.n++
	name := fmt.Sprintf("operator-%d", o.n)
	o.mu.Unlock()
	p, err := startProc(name, o.bin, filepath.Join(o.logDir, "operator.log"), true, o.args...)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.procs = append(o.procs, p)
	o.mu.Unlock()
	return p, nil
}

// current is the newest operator.
func (o *operators) current() *proc {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.procs[len(o.procs)-1]
}

func (o *operators) killCurrent() { o.current().kill() }

// leader is the live replica that reports holding the Lease.
func (o *operators) leader() *proc {
	o.mu.Lock()
	ps := append([]*proc(nil), o.procs...)
	o.mu.Unlock()
	for _, p := range ps {
		if p.leader() {
			return p
		}
	}
	return nil
}

// supervise counts operators that exit without being killed and starts a
// new one, so one crash does not end the run (and is reported).
func (o *operators) supervise(ctx context.Context, rec *timeline.Recorder, exits *int) {
	seen := map[*proc]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		o.mu.Lock()
		ps := append([]*proc(nil), o.procs...)
		o.mu.Unlock()
		for _, p := range ps {
			if seen[p] || !p.exited() {
				continue
			}
			seen[p] = true
			if p.err != nil && strings.Contains(p.err.Error(), "killed") {
				continue
			}
			*exits++
			rec.Mark("%s exited by itself: %v", p.name, p.err)
			if p == o.current() {
				_, _ = o.start()
			}
		}
	}
}

func (o *operators) stopAll() {
	o.mu.Lock()
	ps := append([]*proc(nil), o.procs...)
	o.mu.Unlock()
	for _, p := range ps {
		p.stop()
	}
}

// createWorkload creates the Machines (half with a pre-drain hook, a third
// with a pre-terminate hook) and, once they run, three or four Pods on each
// Node: a plain one, one of a pair behind a PodDisruptionBudget
// (minAvailable 1), one the drain skips, and on every other Node one with a
// volume. A spare sim machine (no Machine) takes replacement Pods.
func (w *world) createWorkload(ctx context.Context, ns string, n int) ([]string, error) {
	c := w.c
	if err := c.Create(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spare"}}); err != nil {
		return nil, err
	}
	names := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("m-%03d", i)
		names[i] = name
		// Half the Machines keep the default Node deletion timeout (10 s,
		// counted from the deletionTimestamp as in Cluster API): one failed
		// Node deletion (a fault the proxy injects, a restart) then leaves
		// the Node behind by design (row E08), which the checker accepts
		// only when the Machine's last Event names such a row or, that
		// Event lost (written after the finalizer went), the record shows
		// the timeout passed after an attempt. The other
		// half never give up on the Node, so it must go however many
		// deletions fail.
		deletion := clusterv1.MachineDeletionSpec{}
		if i%2 == 0 {
			deletion.NodeDeletionTimeoutSeconds = ptr.To(int32(0))
		}
		if err := createMachine(ctx, c, ns, name, i, deletion); err != nil {
			return nil, err
		}
	}
	nodes := map[string]string{}
	if err := poll.Until(ctx, 90*time.Second, func(context.Context) error {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		running := 0
		for _, m := range list.Items {
			if m.Status.Phase == clusterv1.MachinePhaseRunning && m.Status.NodeRef != nil {
				running++
				nodes[m.Name] = m.Status.NodeRef.Name
			}
		}
		if running < n {
			var waiting []clusterv1.Machine
			for _, m := range list.Items {
				if nodes[m.Name] == "" {
					waiting = append(waiting, m)
				}
			}
			return fmt.Errorf("%d of %d Machines Running; not yet: %s", running, n, describeMachines(waiting))
		}
		return c.Get(ctx, client.ObjectKey{Name: sim.NodeName(ns, "spare")}, &corev1.Node{})
	}); err != nil {
		return nil, err
	}

	min1 := intstr.FromInt32(1)
	pod := func(name, node string, labels map[string]string, vols ...corev1.Volume) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, Volumes: vols, TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}
	}
	var objs []client.Object
	for i, name := range names {
		node := nodes[name]
		group := fmt.Sprintf("db-%d", i/2)
		if i%2 == 0 {
			objs = append(objs, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: group},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min1, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": group}}}})
		}
		objs = append(objs,
			pod("web-"+name, node, map[string]string{"app": "web"}),
			pod("db-"+name, node, map[string]string{"app": group, groupLabel: group}),
			pod("skip-"+name, node, map[string]string{clusterv1.PodDrainLabel: clusterv1.PodDrainLabelValueSkip}),
		)
		if i == 0 {
			objs = append(objs,
				&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: soloGroup},
					Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min1, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": soloGroup}}}},
				pod(soloGroup+"-"+name, node, map[string]string{"app": soloGroup}))
		}
		if i%2 == 0 {
			objs = append(objs,
				&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-" + name},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
				pod("store-"+name, node, map[string]string{"app": "store"}, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}))
		}
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return nil, err
		}
	}
	return names, poll.Until(ctx, 60*time.Second, func(context.Context) error {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("Pod %s %q", p.Name, p.Status.Phase)
			}
		}
		return nil
	})
}

// hookOwner plays the owners of the hooks: once a Machine has waited on
// its hook for a moment, the hook is removed.
func (w *world) hookOwner(ctx context.Context, ns string, between func(a, b time.Duration) time.Duration) {
	type wait struct {
		since time.Time
		hold  time.Duration
	}
	waiting := map[string]wait{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		list := &clusterv1.MachineList{}
		if err := w.c.List(ctx, list, client.InNamespace(ns)); err != nil {
			continue
		}
		for i := range list.Items {
			m := &list.Items[i]
			cond := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition)
			if cond == nil {
				continue
			}
			var hook string
			switch cond.Reason {
			case clusterv1.DeletingWaitingForPreDrainHookReason:
				hook = clusterv1.PreDrainDeleteHookAnnotationPrefix + hookName
			case clusterv1.DeletingWaitingForPreTerminateHookReason:
				hook = clusterv1.PreTerminateDeleteHookAnnotationPrefix + hookName
			default:
				continue
			}
			if _, ok := m.Annotations[hook]; !ok {
				continue
			}
			k := m.Name + "/" + hook
			wt, ok := waiting[k]
			if !ok {
				waiting[k] = wait{since: time.Now(), hold: between(300*time.Millisecond, 1500*time.Millisecond)}
				continue
			}
			if time.Since(wt.since) < wt.hold {
				continue
			}
			before := m.DeepCopy()
			delete(m.Annotations, hook)
			_ = w.c.Patch(ctx, m, client.MergeFrom(before))
		}
	}
}

// detachFinalizer is the attacher's hold on a VolumeAttachment.
const detachFinalizer = "chaos.krtt.dev/detach"

// attacher plays a slow CSI external-attacher, which holds a
// VolumeAttachment by a finalizer until the volume is detached: it holds
// every VolumeAttachment of the run's Nodes and, once one is being
// deleted, lets go only after its Machine has waited for it a moment, or
// once the Machine's infrastructure is being deleted or the Machine is
// gone (a volume whose VM is deleted is detached with it). The sim
// detaches at once; held like this, a Machine really waits for its
// volumes, and one that goes on without waiting (a mutated table) always
// has its infrastructure deleted with the volume still attached, however
// fast the steps between come. nodes is the cluster the Nodes and their
// VolumeAttachments live in (a workload cluster's, or the management one).
func (w *world) attacher(ctx context.Context, ns string, nodes client.Client, between func(a, b time.Duration) time.Duration) {
	waiting := map[string]time.Time{} // VolumeAttachment: when to let go
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		vas := &storagev1.VolumeAttachmentList{}
		machines := &clusterv1.MachineList{}
		infra := &simv1.SimMachineList{}
		if err := errors.Join(nodes.List(ctx, vas), w.c.List(ctx, machines, client.InNamespace(ns)),
			w.c.List(ctx, infra, client.InNamespace(ns))); err != nil {
			continue
		}
		state := map[string]string{} // by Node
		for _, m := range machines.Items {
			state[sim.NodeName(ns, m.Name)] = m.Status.State
		}
		infraLive := map[string]bool{} // by Node
		for _, sm := range infra.Items {
			infraLive[sim.NodeName(ns, sm.Name)] = sm.DeletionTimestamp == nil
		}
		for i := range vas.Items {
			va := &vas.Items[i]
			if !strings.HasPrefix(va.Spec.NodeName, ns+"-m-") {
				continue
			}
			held := slices.Contains(va.Finalizers, detachFinalizer)
			switch {
			case va.DeletionTimestamp == nil && !held:
				before := va.DeepCopy()
				va.Finalizers = append(va.Finalizers, detachFinalizer)
				_ = nodes.Patch(ctx, va, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
			case va.DeletionTimestamp != nil && held:
				st, found := state[va.Spec.NodeName]
				switch st {
				case "WaitingForVolumeDetach":
					until, ok := waiting[va.Name]
					if !ok {
						waiting[va.Name] = time.Now().Add(between(300*time.Millisecond, 1500*time.Millisecond))
						continue
					}
					if time.Now().Before(until) {
						continue
					}
				default:
					if found && infraLive[va.Spec.NodeName] {
						continue // not waiting for it yet, or went on without waiting
					}
				}
				// Detached first, as the external-attacher reports it: that
				// write's answer carries a revision committed after what
				// let it go (a Machine that waited, or its infrastructure's
				// deletion, which this loop has seen), while the removal
				// that follows is answered without one. Under load the
				// answer to the infrastructure's DELETE can come after a
				// removal the audit log then places before it.
				if va.Status.Attached {
					before := va.DeepCopy()
					va.Status.Attached = false
					if err := nodes.Status().Patch(ctx, va, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
						continue
					}
				}
				before := va.DeepCopy()
				va.Finalizers = slices.DeleteFunc(va.Finalizers, func(f string) bool { return f == detachFinalizer })
				_ = nodes.Patch(ctx, va, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
			}
		}
	}
}

// soloGroup is a workload of one Pod, on the first Machine's Node, behind
// a budget of minAvailable 1: its eviction is refused (429) until a
// replacement runs, which replicaKeeper starts only once the Machine says
// the API server refused it (its Deleting condition quotes the refusal) and
// has been draining for soloHold. A time alone would not do: when the proxy
// faults the first eviction, the next one may come after the replacement,
// and the run would meet no refusal. soloHold keeps the Machine draining
// long enough for the failover run to see it and kill the leader then;
// soloFallback lets a run whose every attempt the proxy faulted go on.
const (
	soloGroup    = "solo"
	soloHold     = time.Second
	soloFallback = time.Minute
)

// soloRefused: the first Machine's Deleting condition quotes the API
// server's refusal of the solo Pod's eviction (a 429 the proxy injects says
// otherwise, and is not in the audit log).
func soloRefused(m *clusterv1.Machine) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition)
	return c != nil && strings.Contains(c.Message, soloGroup+"-"+m.Name) && strings.Contains(c.Message, "violate the pod's disruption budget")
}

// replicaKeeper plays a ReplicaSet for the PodDisruptionBudget pairs: a
// group with fewer than two Pods not being deleted gets a new one on the
// spare Node, so a blocked eviction is unblocked the way a real workload
// unblocks it. The solo workload gets its second Pod once the first
// Machine's drain was refused (soloRefused) and soloHold has passed.
func (w *world) replicaKeeper(ctx context.Context, ns string) {
	spare := sim.NodeName(ns, "spare")
	n := 0
	var drainingSince time.Time
	soloDone, refused := false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		if !soloDone {
			m := &clusterv1.Machine{}
			if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m-000"}, m); err == nil {
				if m.Status.State == "DrainingNode" && drainingSince.IsZero() {
					drainingSince = time.Now()
				}
				refused = refused || soloRefused(m)
			}
			if draining := time.Since(drainingSince); !drainingSince.IsZero() && (refused && draining > soloHold || draining > soloFallback) {
				err := w.c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: soloGroup + "-r", Labels: map[string]string{"app": soloGroup}},
					Spec: corev1.PodSpec{NodeName: spare, TerminationGracePeriodSeconds: ptr.To[int64](1),
						Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}})
				soloDone = err == nil || apierrors.IsAlreadyExists(err)
			}
		}
		pods := &corev1.PodList{}
		if err := w.c.List(ctx, pods, client.InNamespace(ns), client.HasLabels{groupLabel}); err != nil {
			continue
		}
		live := map[string]int{}
		for _, p := range pods.Items {
			g := p.Labels[groupLabel]
			if _, ok := live[g]; !ok {
				live[g] = 0 // a group whose Pods are all going still counts
			}
			if p.DeletionTimestamp == nil {
				live[g]++
			}
		}
		for group, count := range live {
			for ; count < 2; count++ {
				n++
				_ = w.c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-r%d", group, n),
					Labels: map[string]string{"app": group, groupLabel: group}},
					Spec: corev1.PodSpec{NodeName: spare, TerminationGracePeriodSeconds: ptr.To[int64](1),
						Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}})
			}
		}
	}
}

// deleteMachines deletes the named Machines of ns.
func deleteMachines(ctx context.Context, c client.Client, ns string, names []string) error {
	for _, n := range names {
		if err := c.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}); err != nil {
			return err
		}
	}
	return nil
}

// afterProgress waits until the operator made progress (a Machine entered
// a deletion step) since the call, then a random faultDelay, and reports
// whether Machines are still left to delete: a fault the drivers then
// inject lands mid-deletion, at a random point of the operator's work,
// however fast the deletion runs; and since each fault waits for progress
// first, no schedule of faults can starve the deletion. False when the run
// ends or no Machine is left.
func (w *world) afterProgress(ctx context.Context, rec *timeline.Recorder, s spec, between func(a, b time.Duration) time.Duration) bool {
	seen := rec.Steps()
	if poll.Until(ctx, s.timeout, func(context.Context) error {
		if rec.Steps() == seen {
			return errors.New("no progress yet")
		}
		return nil
	}) != nil {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(between(s.faultDelay[0], s.faultDelay[1])):
	}
	return rec.Machines() > 0
}

// someDraining succeeds once a Machine reports a drain in progress.
func (w *world) someDraining(ctx context.Context, ns string) error {
	list := &clusterv1.MachineList{}
	if err := w.c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, m := range list.Items {
		if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition); c != nil && c.Reason == clusterv1.DeletingDrainingNodeReason {
			return nil
		}
	}
	return errors.New("no Machine draining yet")
}

// cleanup removes what the run's driver created outside the Machines (the
// spare sim machine and its Node) and the Nodes rows left by design.
func (w *world) cleanup(ctx context.Context, ns string, kept []string) {
	_ = w.c.Delete(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spare"}})
	for _, n := range append([]string{sim.NodeName(ns, "spare")}, kept...) {
		_ = w.c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
}

// nodeSide is where leftovers looks for what the run's Nodes held: c is
// the cluster the Nodes live in; drainSkipped are Nodes whose Machine a row
// let skip the drain (their evictable Pods await the Pod garbage collector
// once the Node is gone, as the drain left them on purpose); secret is a
// Secret of the namespace the run itself wrote (a Cluster's kubeconfig),
// which no Machine owns.
type nodeSide struct {
	c            client.Client
	drainSkipped map[string]bool
	secret       string
}

// leftovers lists, straight from the API servers, what the run's Machines
// could have left (a second opinion next to the timeline's), but for the
// Nodes the checker found kept by a row; and what awaits a garbage
// collector. Secrets are judged by timeline.SecretLeaks. A Pod bound to a
// Node that is gone awaits the Pod garbage collector when the drain skips
// it (or a row skipped the drain), and is left over when the drain should
// have evicted it; a Pod on a Node still there is left over. A
// VolumeAttachment on a run's Node is left over.
func (w *world) leftovers(ctx context.Context, ns string, kept []string, tl *timeline.Timeline, where nodeSide) ([]string, []string, error) {
	var out, gc []string
	secrets := &corev1.SecretList{}
	configs := &simv1.SimBootstrapConfigList{}
	if err := errors.Join(w.c.List(ctx, secrets, client.InNamespace(ns)), w.c.List(ctx, configs, client.InNamespace(ns))); err != nil {
		return nil, nil, err
	}
	live := map[string]types.UID{}
	for _, c := range configs.Items {
		live[c.Name] = c.UID
	}
	secrets.Items = slices.DeleteFunc(secrets.Items, func(s corev1.Secret) bool { return where.secret != "" && s.Name == where.secret })
	if tl != nil {
		out, gc = timeline.SecretLeaks(tl, secrets.Items, live)
	}
	pods := &corev1.PodList{}
	if err := where.c.List(ctx, pods, client.InNamespace(ns)); err != nil {
		return nil, nil, err
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Spec.NodeName, ns+"-m-") || slices.Contains(kept, p.Spec.NodeName) {
			continue
		}
		err := where.c.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &corev1.Node{})
		skipped := p.Labels[clusterv1.PodDrainLabel] == clusterv1.PodDrainLabelValueSkip || where.drainSkipped[p.Spec.NodeName]
		if apierrors.IsNotFound(err) && skipped {
			gc = append(gc, "Pod "+p.Name)
		} else if apierrors.IsNotFound(err) {
			out = append(out, "Pod "+p.Name+" (evictable) on deleted Node "+p.Spec.NodeName)
		} else {
			out = append(out, "Pod "+p.Name+" on Node "+p.Spec.NodeName)
		}
	}
	vas := &storagev1.VolumeAttachmentList{}
	if err := where.c.List(ctx, vas); err != nil {
		return nil, nil, err
	}
	for _, va := range vas.Items {
		if strings.HasPrefix(va.Spec.NodeName, ns+"-m-") && !slices.Contains(kept, va.Spec.NodeName) {
			out = append(out, "VolumeAttachment "+va.Name)
		}
	}
	for _, l := range []client.ObjectList{&clusterv1.MachineList{}, &simv1.SimMachineList{}, &simv1.SimBootstrapConfigList{}} {
		if err := w.c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, nil, err
		}
		for _, it := range items {
			o := it.(client.Object)
			if o.GetName() == "spare" {
				continue
			}
			out = append(out, fmt.Sprintf("%T %s", o, o.GetName()))
		}
	}
	nodes := &corev1.NodeList{}
	if err := where.c.List(ctx, nodes); err != nil {
		return nil, nil, err
	}
	for _, n := range nodes.Items {
		if strings.HasPrefix(n.Name, ns+"-m-") && !slices.Contains(kept, n.Name) {
			out = append(out, "Node "+n.Name)
		}
	}
	if where.c != w.c {
		// The Nodes belong in the workload cluster: one here, kept or not,
		// was registered in the wrong cluster.
		if err := w.c.List(ctx, nodes); err != nil {
			return nil, nil, err
		}
		for _, n := range nodes.Items {
			if strings.HasPrefix(n.Name, ns+"-") {
				out = append(out, "Node "+n.Name+" in the management cluster")
			}
		}
	}
	sort.Strings(out)
	sort.Strings(gc)
	return out, gc, nil
}

// lease reads the leader Lease of the run's replicas.
func (w *world) lease(ctx context.Context, ns string) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: actions.LeaderElectionID}, l)
	return l, err
}

// takeoverOf compares the Lease as the killed leader left it with the Lease
// after another replica took it: how long after the old lease ran out the new
// holder acquired it, and how many holder changes lie between.
func takeoverOf(before, after *coordinationv1.Lease) (time.Duration, int32, error) {
	b, a := before.Spec, after.Spec
	if b.HolderIdentity == nil || b.RenewTime == nil || b.LeaseDurationSeconds == nil {
		return 0, 0, fmt.Errorf("lease %s: the killed leader left no holder, renewal or duration", before.Name)
	}
	if a.HolderIdentity == nil || a.AcquireTime == nil || *a.HolderIdentity == *b.HolderIdentity {
		return 0, 0, fmt.Errorf("lease %s: still held by %s", after.Name, ptr.Deref(a.HolderIdentity, "nobody"))
	}
	expiry := b.RenewTime.Add(time.Duration(*b.LeaseDurationSeconds) * time.Second)
	return a.AcquireTime.Sub(expiry), ptr.Deref(a.LeaseTransitions, 0) - ptr.Deref(b.LeaseTransitions, 0), nil
}

// goneEarlier answers LostRemovals for a read of an audit log from what
// the API server said at the read before it: a removal applied by then is
// logged by now unless kube-apiserver was killed first, whereas one that
// is newer than the read could be taken for lost. Call next after each
// read.
type goneEarlier struct {
	ctx        context.Context
	c          client.Reader
	prev, seen map[string]bool
}

func newGoneEarlier(ctx context.Context, c client.Reader) *goneEarlier {
	return &goneEarlier{ctx: ctx, c: c, prev: map[string]bool{}, seen: map[string]bool{}}
}

func (g *goneEarlier) gone(e *timeline.Event) (bool, error) {
	id := fmt.Sprintf("%s %s %s", e.Kind, e.Key(), e.Obj.GetUID())
	obj := e.Obj.DeepCopyObject().(client.Object)
	err := g.c.Get(g.ctx, client.ObjectKeyFromObject(e.Obj), obj)
	switch {
	case apierrors.IsNotFound(err):
		g.seen[id] = true
	case err != nil:
		return false, err
	default:
		g.seen[id] = e.Obj.GetUID() != "" && obj.GetUID() != e.Obj.GetUID()
	}
	return g.prev[id], nil
}

func (g *goneEarlier) next() { g.prev, g.seen = g.seen, map[string]bool{} }
