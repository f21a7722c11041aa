package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/timeline"
)

// The Node-side timeouts of the Machines of a workload run that have them
// (the others have none: they wait however long the workload cluster is
// dark). The operator counts a workload cluster Unreachable only after
// three failed probes 10s apart (internal/remote's defaults, which
// krtt-operator uses), up to about 30s after its API server went down; the
// drain timeout runs out well after that, so what ends the drain is a
// workload-cluster row (W06, W07), not the plain timeout of a cluster
// still thought connected (E06, E13). The volume and Node deletion
// timeouts then run out while it is still dark.
const (
	wlDrainTimeout        = 50
	wlVolumeTimeout       = 10
	wlNodeDeletionTimeout = 10
)

// wlRows are the rows of machine-workload-cluster a workload run must see
// fire: the holds of the Node steps (W10-W12) and the timeouts that end
// them while the workload cluster is dark (W06-W09).
var wlRows = []string{"W06", "W07", "W08", "W09", "W10", "W11", "W12"}

// The invariants only a workload run checks (the others are timeline's,
// checked on each cluster's audit log, and across both where a Machine's
// infrastructure meets its Node).
const (
	// NoSkipWithoutTimeouts: a Machine with no Node-side timeout leaves
	// its drain and volume wait only through the rows that complete them,
	// and never leaves its Node behind.
	NoSkipWithoutTimeouts = "a Machine without Node-side timeouts skips no Node step"
	// DarkNamed: a workload-cluster row fires only once the workload
	// cluster went down, and says so, naming its API server and a time
	// inside the outage.
	DarkNamed = "a workload-cluster row fires only in an outage and names it"
	// NothingDecidedInTheDark: a Machine without timeouts ends no Node
	// step while the workload cluster is dark, unless the step's Pods or
	// volumes were gone before it went dark.
	NothingDecidedInTheDark = "no Node step of a Machine without timeouts ends while the workload cluster is dark"
)

// workloadCluster is the second control plane, started on the first
// workload run (a run without one never pays for it) with its own audit
// log.
func (w *world) workloadCluster() (*localcp.ControlPlane, error) {
	if w.wl != nil {
		return w.wl, nil
	}
	cp, err := localcp.Start(localcp.Options{Dir: filepath.Join(w.dir, "workload-cp"), Fresh: true, Port: -1, Root: w.root, Audit: true})
	if err != nil {
		return nil, fmt.Errorf("start the workload cluster: %w", err)
	}
	w.wl = cp
	return cp, nil
}

// useSim replaces the running sim by one started with extra arguments, and
// returns how to put the shared one back.
func (w *world) useSim(logDir string, extra ...string) (restore func() error, err error) {
	w.sim.stop()
	own, err := startProc("sim-workload", w.bins.sim, filepath.Join(logDir, "sim.log"), false, append(slices.Clone(w.simArgs), extra...)...)
	restore = func() error {
		if own != nil {
			own.stop()
		}
		p, err := startProc("sim", w.bins.sim, filepath.Join(w.dir, "sim.log"), false, w.simArgs...)
		if err != nil {
			return err
		}
		w.sim = p
		return nil
	}
	if err != nil {
		return restore, err
	}
	return restore, nil
}

// runWorkload is the workload-cluster run: the Machines' Cluster has a
// kubeconfig Secret naming a second control plane, where the sim registers
// their Nodes and plays kubelets, CSI driver and disruption controller, and
// where the run puts their Pods, budgets and volumes. Every Machine's drain
// is held by a Pod of its own behind a budget (a gate) until the workload
// cluster's kube-apiserver has been down for spec.dark, taken down once all
// Machines drain; then the gates of the Machines without timeouts open (a
// replacement Pod runs elsewhere), and the API server is restarted once
// more mid-drain. The Machines with timeouts never get theirs: their drain,
// volume wait and Node deletion must end by their timeouts, in the dark,
// through the workload-cluster rows. Each cluster's audit log is checked
// with the timeline invariants; what joins them (a Machine's infrastructure
// in one, its Pods and volumes in the other) is checked by checkNodeSide,
// ordered by the two API servers' clocks, which are this machine's.
//
// It can fail: run once on tables whose W10 goes on to the volume wait
// instead of holding the drain in the dark (mutateTables, spec.tables),
// it named NoSkipWithoutTimeouts and NothingDecidedInTheDark for each of
// the 4 Machines without timeouts, and its plan failed for the other 4
// (their drain ended by W10; W06 and W07 never fired). That run is not
// kept as a test: it takes the long run's three minutes, which make test
// does not spend.
func (w *world) runWorkload(ctx context.Context, s spec, logf func(string, ...any)) (res *result) {
	res = &result{spec: s}
	between := randBetween(s.seed)
	ns := fmt.Sprintf("chaos-%s-%d", s.name, w.seq.Add(1))
	res.ns = ns
	logDir := filepath.Join(w.dir, ns)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		res.err = err
		return res
	}
	for _, id := range wlRows {
		if !rowExists(w.rules, id) {
			res.err = fmt.Errorf("row %s is not in the tables any more: the workload run's expectations need updating", id)
			return res
		}
	}
	wcp, err := w.workloadCluster()
	if err != nil {
		res.err = err
		return res
	}
	wc := wcp.Client
	server, err := url.Parse(wcp.URL)
	if err != nil {
		res.err = err
		return res
	}
	c := w.c
	if err := errors.Join(
		c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}),
		wc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}),
		func() error { _, err := harness.ClusterObjects(ctx, c, ns, "c", true); return err }(),
		remote.WriteSecret(ctx, c, ns, "c", wcp.Config),
	); err != nil {
		res.err = err
		return res
	}
	restoreSim, err := w.useSim(logDir, "--workload-clusters")
	defer func() {
		if err := restoreSim(); err != nil {
			res.err = errors.Join(res.err, fmt.Errorf("start the shared sim again: %w", err))
		}
	}()
	if err != nil {
		res.err = err
		return res
	}

	ops := &operators{bin: w.bins.operator, args: []string{"--kubeconfig", w.cp.Kubeconfig, "--machine-concurrency", "4", "--zap-log-level", "info"}, logDir: logDir}
	if s.tables != "" {
		ops.args = append(ops.args, "--tables", s.tables)
	}
	defer ops.stopAll()
	if _, err := ops.start(); err != nil {
		res.err = err
		return res
	}
	if err := poll.Until(ctx, 60*time.Second, func(context.Context) error { return ops.current().ready() }); err != nil {
		res.err = fmt.Errorf("operator not ready: %w", err)
		return res
	}

	defer w.startAttacher(ctx, ns, wc, between)()
	names, timed, err := w.createRemoteWorkload(ctx, ns, s.machines, wc)
	if err != nil {
		res.err = fmt.Errorf("create the workload: %w; the operator's work queue then: %s", err, ops.current().queueMetrics())
		return res
	}
	logf("%s: %d Machines Running, their Nodes, Pods, PDBs and volumes in the workload cluster %s", ns, len(names), wcp.URL)

	rec, err := timeline.Record(ctx, w.cp.Config, w.cp.Scheme, ns)
	if err != nil {
		res.err = err
		return res
	}
	defer rec.Stop()
	wrec, err := timeline.Record(ctx, wcp.Config, wcp.Scheme, ns)
	if err != nil {
		res.err = err
		return res
	}
	defer wrec.Stop()

	drivers := startDrivers(ctx)
	defer drivers.end()
	runCtx, goDriver := drivers.ctx, drivers.run
	var gatesOpen atomic.Bool
	goDriver(func() { w.hookOwner(runCtx, ns, between) })
	goDriver(func() { w.gateKeeper(runCtx, ns, wc, names, timed, &gatesOpen) })
	goDriver(func() { ops.supervise(runCtx, rec, &res.unexpectedExits) })

	t0 := time.Now()
	rec.Mark("deleting %d Machines", len(names))
	if err := deleteMachines(ctx, c, ns, names); err != nil {
		res.err = err
		return res
	}

	var restarts atomic.Int32
	var outagesMu sync.Mutex
	var outages []timeline.Outage
	// down takes the workload cluster's kube-apiserver down for d, then
	// waits until the recorder of the workload cluster sees again.
	down := func(i int, d time.Duration, why string) bool {
		rec.Mark("workload kube-apiserver stopping for %s (%s)", d, why)
		wrec.BlindFrom()
		// The outage starts once the server is dead, not when stopping it
		// began: what it served meanwhile (a volume detached, and the
		// operator seeing it) happened before the dark.
		var from time.Time
		if err := wcp.RestartAPIServer(func() {
			from = time.Now()
			select {
			case <-runCtx.Done():
			case <-time.After(d):
			}
		}); err != nil {
			logf("restart the workload kube-apiserver: %v", err)
			return false
		}
		outagesMu.Lock()
		outages = append(outages, timeline.Outage{Down: from, Up: time.Now()})
		outagesMu.Unlock()
		restarts.Add(1)
		rec.Mark("workload kube-apiserver started again")
		var after uint64
		_ = poll.Until(runCtx, s.timeout, func(context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("chaos-resync-%d", i)}}
			if err := wc.Create(runCtx, cm); err != nil {
				return err
			}
			after = timeline.ParseRV(cm.ResourceVersion)
			return nil
		})
		if err := wrec.Resynced(runCtx, after, 10*time.Second); err != nil {
			logf("%v", err)
		}
		return true
	}
	goDriver(func() {
		// Every Machine drains (held by its gate): the outage lands
		// mid-drain for all of them.
		if err := poll.Until(runCtx, s.timeout, func(context.Context) error { return w.allDraining(runCtx, ns) }); err != nil {
			logf("workload outage: %v", err)
			return
		}
		if !down(1, s.dark, "every Machine is draining") {
			return
		}
		gatesOpen.Store(true)
		rec.Mark("the gates of the Machines without timeouts open")
		if s.restartDown > 0 && w.afterProgress(runCtx, rec, s, between) {
			down(2, s.restartDown, "Machines without timeouts drain again")
		}
	})

	err = allMachinesGone(ctx, c, ns, s.timeout)
	res.converge = time.Since(t0)
	rec.Mark("all Machines gone (or deadline)")
	drivers.end()
	res.restarts = int(restarts.Load())
	if err != nil {
		res.err = fmt.Errorf("not converged: %w", err)
	}

	// Both audit logs, each cross-checked against its cluster's
	// informers; read again until the workload cluster's record shows
	// nothing of the Machines left (the sim detaches volumes, the attacher
	// lets go, asynchronously).
	keep := func(name string) bool { return strings.Contains(name, ns+"-") }
	var mtl, wtl *timeline.Timeline
	var mrep, wrep *timeline.Report
	var side *nodeSideReport
	var missing, lost []string
	var lostErr error
	earlier := newGoneEarlier(ctx, wc)
	auditErr := poll.Until(ctx, 30*time.Second, func(context.Context) error {
		var err error
		if mtl, err = timeline.ReadAuditLog(w.cp.AuditLog, ns, keep); err != nil {
			return err
		}
		if wtl, err = timeline.ReadAuditLog(wcp.AuditLog, ns, keep); err != nil {
			return err
		}
		watched := wrec.Timeline()
		missing = append(timeline.Complete(mtl, rec.Timeline(), nil), timeline.Complete(wtl, watched, outages)...)
		lost, lostErr = timeline.LostRemovals(wtl, outages, earlier.gone)
		earlier.next()
		mrep = timeline.Check(mtl, w.rules, true)
		wrep = timeline.Check(wtl, w.rules, true)
		side = checkNodeSide(mtl, wtl, watched, w.rules, timed, outages, server.Host)
		if left := append(slices.Clone(mrep.Leaked), side.leaked...); len(left) > 0 {
			return errors.New(strings.Join(left, ", "))
		}
		return nil
	})
	if mtl == nil || wtl == nil || side == nil {
		res.err = errors.Join(res.err, fmt.Errorf("read the audit logs: %w", auditErr))
		return res
	}
	rep := mergeReports(mrep, wrep, side)
	if len(missing) > 0 {
		rep.Violations = append(rep.Violations, timeline.Violation{Invariant: timeline.CompleteRecord, Object: "audit logs",
			Message: fmt.Sprintf("%d versions the informers saw are not in the audit logs: %s", len(missing), strings.Join(missing[:min(len(missing), 10)], ", "))})
	}
	for _, l := range lost {
		logf("lost by the workload audit log at an outage: %s", l)
	}
	if lostErr != nil {
		res.err = errors.Join(res.err, fmt.Errorf("ask the workload API server about removals its audit log may have lost: %w", lostErr))
	}
	res.report = rep
	res.events = len(mtl.Events) + len(wtl.Events)
	res.wlRows, res.plan = side.rows, side.plan
	for name, t := range map[string]*timeline.Timeline{"timeline.txt": mtl, "workload-timeline.txt": wtl} {
		if err := os.WriteFile(filepath.Join(logDir, name), []byte(formatTimeline(t)), 0o644); err != nil {
			logf("write timeline: %v", err)
		}
	}
	res.leftovers, res.awaitingGC, res.leftoversErr = w.leftovers(ctx, ns, side.kept, mtl,
		nodeSide{c: wc, drainSkipped: side.drainSkipped, secret: remote.SecretName("c")})
	for _, n := range append([]string{sim.NodeName(ns, "spare")}, side.kept...) {
		_ = wc.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return res
}

// randBetween is a run's source of random durations.
func randBetween(seed uint64) func(a, b time.Duration) time.Duration {
	rnd := rand.New(rand.NewPCG(seed, seed+1))
	var mu sync.Mutex
	return func(a, b time.Duration) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return a + time.Duration(rnd.Float64()*float64(b-a))
	}
}

func rowExists(r timeline.Rules, id string) bool {
	for row := range r.Moves {
		if strings.HasSuffix(row, "/"+id) {
			return true
		}
	}
	return false
}

// allDraining succeeds once every Machine of ns is being deleted and
// draining.
func (w *world) allDraining(ctx context.Context, ns string) error {
	list := &clusterv1.MachineList{}
	if err := w.c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	var not []string
	for _, m := range list.Items {
		if m.DeletionTimestamp == nil || m.Status.State != "DrainingNode" {
			not = append(not, m.Name+" "+m.Status.State)
		}
	}
	if len(not) > 0 || len(list.Items) == 0 {
		return fmt.Errorf("not draining: %v", not)
	}
	return nil
}

// createRemoteWorkload creates the Machines in the management cluster and,
// once their Nodes joined the workload cluster wc, on each Node: a plain
// Pod, a Pod the drain skips, a Pod with a volume, and a gate, a Pod
// behind a budget of minAvailable 1 that only a replacement (gateKeeper)
// lets go. Odd Machines have Node-side timeouts (the first of them forces
// its deletion on the drain timeout); even ones have none. Half have a
// pre-drain hook, a third a pre-terminate hook. A spare Node, no Machine's,
// takes the replacements.
func (w *world) createRemoteWorkload(ctx context.Context, ns string, n int, wc client.Client) ([]string, map[string]bool, error) {
	c := w.c
	names := make([]string, n)
	timed := map[string]bool{}
	for i := range n {
		name := fmt.Sprintf("m-%03d", i)
		names[i] = name
		deletion := clusterv1.MachineDeletionSpec{NodeDeletionTimeoutSeconds: ptr.To(int32(0))}
		if i%2 == 1 {
			timed[ns+"/"+name] = true
			deletion = clusterv1.MachineDeletionSpec{
				NodeDrainTimeoutSeconds:        ptr.To(int32(wlDrainTimeout)),
				NodeVolumeDetachTimeoutSeconds: ptr.To(int32(wlVolumeTimeout)),
				NodeDeletionTimeoutSeconds:     ptr.To(int32(wlNodeDeletionTimeout)),
			}
			if i == 1 {
				deletion.OnDrainTimeout = clusterv1.DrainTimeoutForce
			}
		}
		if err := createMachine(ctx, c, ns, name, i, deletion); err != nil {
			return nil, nil, err
		}
	}
	nodes := map[string]string{}
	if err := poll.Until(ctx, 90*time.Second, func(context.Context) error {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		var waiting []clusterv1.Machine
		for _, m := range list.Items {
			if m.Status.Phase == clusterv1.MachinePhaseRunning && m.Status.NodeRef != nil {
				nodes[m.Name] = m.Status.NodeRef.Name
			} else {
				waiting = append(waiting, m)
			}
		}
		if len(waiting) > 0 || len(list.Items) < n {
			return fmt.Errorf("%d of %d Machines Running; not yet: %s", len(nodes), n, describeMachines(waiting))
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	spare := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: sim.NodeName(ns, "spare"), Labels: map[string]string{sim.NodeLabel: "true"}}}
	if err := wc.Create(ctx, spare); err != nil {
		return nil, nil, err
	}

	min1 := intstr.FromInt32(1)
	pod := func(name, node string, labels map[string]string, vols ...corev1.Volume) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, Volumes: vols, TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}
	}
	var objs []client.Object
	for _, name := range names {
		node := nodes[name]
		gate := "gate-" + name
		objs = append(objs,
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gate},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min1, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": gate}}}},
			pod(gate, node, map[string]string{"app": gate}),
			pod("web-"+name, node, map[string]string{"app": "web"}),
			pod("skip-"+name, node, map[string]string{clusterv1.PodDrainLabel: clusterv1.PodDrainLabelValueSkip}),
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-" + name},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
			pod("store-"+name, node, map[string]string{"app": "store"}, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}),
		)
	}
	for _, o := range objs {
		if err := wc.Create(ctx, o); err != nil {
			return nil, nil, err
		}
	}
	return names, timed, poll.Until(ctx, 60*time.Second, func(context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Name: spare.Name}, &corev1.Node{}); err == nil {
			return fmt.Errorf("the spare Node %s is in the management cluster", spare.Name)
		}
		pods := &corev1.PodList{}
		if err := wc.List(ctx, pods, client.InNamespace(ns)); err != nil {
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

// gateKeeper plays the owners of the gates: once open, every gate of a
// Machine without timeouts gets a replacement Pod on the spare Node, and
// its eviction is allowed. The gates of the Machines with timeouts never
// do.
func (w *world) gateKeeper(ctx context.Context, ns string, wc client.Client, names []string, timed map[string]bool, open *atomic.Bool) {
	done := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		if !open.Load() {
			continue
		}
		for _, name := range names {
			gate := "gate-" + name
			if timed[ns+"/"+name] || done[gate] {
				continue
			}
			err := wc.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gate + "-r", Labels: map[string]string{"app": gate}},
				Spec: corev1.PodSpec{NodeName: sim.NodeName(ns, "spare"), TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}})
			done[gate] = err == nil || apierrors.IsAlreadyExists(err)
		}
	}
}

// mergeReports joins the timeline checks of both clusters and
// checkNodeSide's into the one report a run has: the Node side's counts
// (cordons, evictions, refusals) from the workload cluster, the Machine
// side's (hooks, infrastructure, finalizers) from the management cluster.
func mergeReports(m, wl *timeline.Report, side *nodeSideReport) *timeline.Report {
	r := &timeline.Report{
		Violations:        slices.Concat(m.Violations, wl.Violations, side.violations),
		Notes:             slices.Concat(m.Notes, wl.Notes, side.notes),
		Leaked:            slices.Concat(m.Leaked, wl.Leaked, side.leaked),
		KeptNodes:         side.kept,
		AwaitingGC:        slices.Concat(m.AwaitingGC, wl.AwaitingGC),
		Evictions:         wl.Evictions,
		Refusals:          wl.Refusals,
		Cordons:           wl.Cordons,
		InfraDeletions:    m.InfraDeletions,
		FinalizerRemovals: m.FinalizerRemovals,
		MachinesDeleted:   m.MachinesDeleted,
		HookHolds:         m.HookHolds,
		VolumeWaits:       side.volumeWaits,
		Unverifiable:      m.Unverifiable + wl.Unverifiable + side.unverifiable,
	}
	if len(side.leaked) > 0 {
		r.Violations = append(r.Violations, timeline.Violation{Invariant: timeline.NothingLeaks, Object: "workload cluster",
			Message: strings.Join(side.leaked, ", ")})
	}
	return r
}

// nodeSideReport is what checkNodeSide found.
type nodeSideReport struct {
	violations   []timeline.Violation
	notes        []string
	unverifiable int
	// plan: what the run set up did not happen (a Machine with timeouts
	// whose drain was not ended by a workload-cluster row, a row of wlRows
	// that never fired); the run fails, but no invariant broke.
	plan []string
	// rows counts the Machines each row of wlRows fired for.
	rows map[string]int
	// kept are Nodes a row left on purpose (W09, E08), leaked the
	// workload cluster's objects the Machines left otherwise.
	kept, leaked []string
	// drainSkipped are the Nodes whose drain a row skipped.
	drainSkipped map[string]bool
	volumeWaits  int
}

// fire is one row firing for a Machine, as its lastTransition (or a row of
// its via) or a kit Event told it, with the audit times of that write.
type fire struct {
	row      string // table/id, or id alone from an Event
	id       string
	from, to string
	msg      string
	recv     time.Time
	stage    time.Time
	// event: told by an Event (from and to unknown for all but the path).
	event bool
}

// wlMachine is what the management cluster's record says of one Machine.
type wlMachine struct {
	key, node, infraName string
	fires                []fire
	seen                 map[string]bool
	infra                *timeline.Event
	volEnter             *timeline.Event
	gone                 bool
}

// wlObject is what the workload cluster's record says of one Pod, Node or
// VolumeAttachment: its last state, its first write, and its removal.
type wlObject struct {
	obj              client.Object
	first, removedAt *timeline.Event
}

// removalKey names one object's removal: its kind, key and UID.
func removalKey(kind timeline.Kind, o client.Object) string {
	return string(kind) + "/" + (&timeline.Event{Obj: o}).Key() + "/" + string(o.GetUID())
}

// nodeOf is the Node a Pod or VolumeAttachment is on, or the Node itself.
func nodeOf(o client.Object) string {
	switch x := o.(type) {
	case *corev1.Pod:
		return x.Spec.NodeName
	case *storagev1.VolumeAttachment:
		return x.Spec.NodeName
	}
	return o.GetName()
}

// kitEvent reads an Event of the kit about a Machine: its action is the
// row it tells, its note "<from> → <to> (rows <id>, …): <words>" lists
// the rows of the path, and the words are the action row's.
func kitEvent(o client.Object) (machine, action string, rows []string, words string, ok bool) {
	ev, isEvent := o.(*eventsv1.Event)
	if !isEvent || ev.Regarding.Kind != "Machine" || ev.Action == "" {
		return "", "", nil, "", false
	}
	_, list, found := strings.Cut(ev.Note, " (row")
	if !found {
		return "", "", nil, "", false
	}
	list = strings.TrimPrefix(strings.TrimPrefix(list, "s"), " ")
	if list, words, found = strings.Cut(list, "): "); !found {
		list, _, _ = strings.Cut(list, ")")
	}
	rows = strings.Split(list, ", ")
	if !slices.Contains(rows, ev.Action) {
		return "", "", nil, "", false
	}
	return ev.Regarding.Namespace + "/" + ev.Regarding.Name, ev.Action, rows, words, true
}

// sinceOf reads the time a workload-cluster row says the cluster has been
// unusable since ("… which is unreachable since <RFC 3339> (…").
func sinceOf(msg string) (time.Time, bool) {
	_, rest, ok := strings.Cut(msg, " since ")
	if !ok {
		return time.Time{}, false
	}
	ts, _, _ := strings.Cut(rest, " ")
	t, err := time.Parse(time.RFC3339, ts)
	return t, err == nil
}

// checkNodeSide checks what neither audit log shows alone: a Machine's
// steps (management cluster, mgmt) against its Node's Pods and volumes
// (workload cluster, wl). Two etcds give two unrelated resourceVersion
// orders, so these checks order requests by the times the two API servers
// logged (both run on this machine, one clock): a write answered (stage)
// before another was received (recv) came first; two requests that
// overlap are of unknown order, and a check that depends on it is
// unverifiable. watched is what the workload cluster's informers received:
// a removal one of them saw at a time was made before it, which orders it
// when its request's answer was logged late (the watch event goes out when
// the removal is committed, the answer after). timed are the Machines with
// Node-side timeouts (ns/name), outages the workload cluster's, server its
// API server's host:port.
func checkNodeSide(mgmt, wl, watched *timeline.Timeline, rules timeline.Rules, timed map[string]bool, outages []timeline.Outage, server string) *nodeSideReport {
	rep := &nodeSideReport{rows: map[string]int{}, drainSkipped: map[string]bool{}}
	seenGone := map[string]time.Time{}
	for i := range watched.Events {
		e := &watched.Events[i]
		if e.Op != timeline.Deleted || e.Obj == nil {
			continue
		}
		k := removalKey(e.Kind, e.Obj)
		if t, ok := seenGone[k]; !ok || e.At.Before(t) {
			seenGone[k] = e.At
		}
	}
	machines := map[string]*wlMachine{}
	byInfra := map[string]*wlMachine{}
	get := func(k string) *wlMachine {
		m := machines[k]
		if m == nil {
			m = &wlMachine{key: k, seen: map[string]bool{}}
			machines[k] = m
		}
		return m
	}
	add := func(m *wlMachine, f fire) {
		k := strings.Join([]string{f.row, f.from, f.to, f.msg, fmt.Sprint(f.event)}, "|")
		if m.seen[k] {
			return
		}
		m.seen[k] = true
		m.fires = append(m.fires, f)
	}
	var infraEvents []*timeline.Event
	for i := range mgmt.Events {
		e := &mgmt.Events[i]
		switch o := e.Obj.(type) {
		case *clusterv1.Machine:
			m := get(e.Key())
			if o.Status.NodeRef != nil {
				m.node = o.Status.NodeRef.Name
			}
			m.infraName = o.Spec.InfrastructureRef.Name
			byInfra[o.Namespace+"/"+m.infraName] = m
			if e.Op == timeline.Deleted {
				m.gone = true
			}
			if rules.VolumeStates[o.Status.State] && o.DeletionTimestamp != nil && m.volEnter == nil && !e.Recv.IsZero() {
				m.volEnter = e
			}
			lt := o.Status.LastTransition
			if lt == nil || e.Recv.IsZero() {
				continue
			}
			for _, v := range lt.Via {
				add(m, fire{row: v.Table + "/" + v.Row, id: v.Row, from: v.From, to: v.To, msg: v.Message, recv: e.Recv, stage: e.Stage})
			}
			add(m, fire{row: lt.Table + "/" + lt.Row, id: lt.Row, from: lt.From, to: lt.To, msg: lt.Message, recv: e.Recv, stage: e.Stage})
		case *simv1.SimMachine:
			if e.Op == timeline.Deleted || o.DeletionTimestamp != nil {
				infraEvents = append(infraEvents, e)
			}
		default:
			if e.Kind != timeline.MachineEvent || e.Recv.IsZero() {
				continue
			}
			mk, action, ids, words, ok := kitEvent(e.Obj)
			if !ok {
				continue
			}
			for _, id := range ids {
				f := fire{row: id, id: id, recv: e.Recv, stage: e.Stage, event: true}
				if id == action {
					f.msg = words
				}
				add(get(mk), f)
			}
		}
	}
	for _, e := range infraEvents {
		if m := byInfra[e.Key()]; m != nil && m.infra == nil {
			if e.Recv.IsZero() {
				rep.unverifiable++
				rep.notes = append(rep.notes, fmt.Sprintf("unverifiable: the deletion of the infrastructure of %s is not in the audit log", m.key))
				continue
			}
			m.infra = e
		}
	}

	// The workload cluster's objects, by Node.
	objs := map[string]*wlObject{}
	byNode := map[timeline.Kind]map[string][]*wlObject{timeline.Pod: {}, timeline.VolumeAttachment: {}, timeline.Node: {}}
	for i := range wl.Events {
		e := &wl.Events[i]
		if _, ok := byNode[e.Kind]; !ok || e.Obj == nil || e.Op == timeline.Uncertain {
			continue
		}
		k := string(e.Kind) + "/" + e.Key()
		o := objs[k]
		if o == nil {
			o = &wlObject{first: e}
			objs[k] = o
		}
		if e.Op == timeline.Deleted {
			o.removedAt = e
			continue
		}
		o.removedAt = nil
		o.obj = e.Obj
	}
	for k, o := range objs {
		if o.obj == nil {
			continue
		}
		node := nodeOf(o.obj)
		kind := timeline.Kind(k[:strings.Index(k, "/")])
		byNode[kind][node] = append(byNode[kind][node], o)
	}

	var darkFrom time.Time
	if len(outages) > 0 {
		darkFrom = outages[0].Down
	}
	inOutage := func(t time.Time) bool {
		for _, o := range outages {
			if !t.Before(o.Down.Truncate(time.Second)) && !t.After(o.Up) {
				return true
			}
		}
		return false
	}
	keys := make([]string, 0, len(machines))
	for k := range machines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := machines[k]
		violate := func(inv, msg string) {
			rep.violations = append(rep.violations, timeline.Violation{Invariant: inv, Object: "Machine " + k, Message: msg})
		}
		sort.SliceStable(m.fires, func(i, j int) bool { return m.fires[i].stage.Before(m.fires[j].stage) })
		fired := map[string]bool{}
		for _, f := range m.fires {
			if !slices.Contains(wlRows, f.id) {
				continue
			}
			fired[f.id] = true
			if !darkFrom.IsZero() && f.recv.Before(darkFrom) || darkFrom.IsZero() {
				violate(DarkNamed, fmt.Sprintf("row %s fired at %s, before the workload cluster went down", f.row, f.stage.Format(time.StampMilli)))
				continue
			}
			if f.msg == "" {
				continue // an Event's row without words of its own
			}
			since, ok := sinceOf(f.msg)
			switch {
			case !strings.Contains(f.msg, "is unreachable") || !strings.Contains(f.msg, server):
				violate(DarkNamed, fmt.Sprintf("row %s does not say that the workload cluster %s is unreachable: %q", f.row, server, f.msg))
			case !ok || !inOutage(since):
				violate(DarkNamed, fmt.Sprintf("row %s names no time inside an outage of the workload cluster: %q", f.row, f.msg))
			}
		}
		for id := range fired {
			rep.rows[id]++
		}
		leftDrain, drainOK := leftPast(m, rules, rules.DrainStates)
		leftVolume, volumeOK := leftPast(m, rules, rules.VolumeStates)
		drainSkipped := drainOK && !rules.DrainRows[leftDrain.row]
		volumeSkipped := volumeOK && !rules.VolumeWaitRows[leftVolume.row]
		if drainSkipped {
			rep.drainSkipped[m.node] = true
		}
		last := ""
		if len(m.fires) > 0 {
			last = m.fires[len(m.fires)-1].id
		}
		keptBy := ""
		for row := range rules.NodeKeptRows {
			if last != "" && strings.HasSuffix(row, "/"+last) {
				keptBy = row
			}
		}
		if timed[k] {
			if !drainOK || (leftDrain.id != "W06" && leftDrain.id != "W07") {
				rep.plan = append(rep.plan, fmt.Sprintf("%s (timeouts) left its drain by %q, not by a workload-cluster timeout row: the outage did not cover its drain timeout", k, leftDrain.row))
			}
		} else {
			if drainSkipped {
				violate(NoSkipWithoutTimeouts, fmt.Sprintf("it left the drain by row %s (%s→%s): %s", leftDrain.row, leftDrain.from, leftDrain.to, leftDrain.msg))
			}
			if volumeSkipped {
				violate(NoSkipWithoutTimeouts, fmt.Sprintf("it left the volume wait by row %s (%s→%s): %s", leftVolume.row, leftVolume.from, leftVolume.to, leftVolume.msg))
			}
			if keptBy != "" {
				violate(NoSkipWithoutTimeouts, fmt.Sprintf("its Node was left by row %s", keptBy))
			}
			for _, step := range []struct {
				tr    fire
				ok    bool
				kind  timeline.Kind
				which string
			}{{leftDrain, drainOK, timeline.Pod, "drain"}, {leftVolume, volumeOK, timeline.VolumeAttachment, "volume wait"}} {
				if !step.ok {
					continue
				}
				for _, o := range outages {
					if !step.tr.recv.After(o.Down) || !step.tr.stage.Before(o.Up) {
						continue
					}
					var there []string
					for _, x := range byNode[step.kind][m.node] {
						if (step.kind != timeline.Pod || evictable(x.obj)) && (x.removedAt == nil || x.removedAt.Stage.After(o.Down)) {
							there = append(there, x.obj.GetName())
						}
					}
					if len(there) > 0 {
						violate(NothingDecidedInTheDark, fmt.Sprintf("it left the %s by row %s while the workload cluster was down (%s to %s), with %v of its Node still there when it went down",
							step.which, step.tr.row, o.Down.Format(time.StampMilli), o.Up.Format(time.StampMilli), there))
					}
				}
			}
		}
		if m.volEnter != nil {
			for _, va := range byNode[timeline.VolumeAttachment][m.node] {
				if va.first.Stage.Before(m.volEnter.Recv) && (va.removedAt == nil || va.removedAt.Stage.After(m.volEnter.Recv)) {
					rep.volumeWaits++
					break
				}
			}
		}

		// The infrastructure goes after the drain and the volume wait:
		// every evictable Pod and VolumeAttachment of the Node removed
		// first, unless a row skipped that step (a Machine without
		// timeouts skipping is a violation of its own, above).
		if m.infra != nil && m.node != "" {
			for _, step := range []struct {
				kind    timeline.Kind
				inv     string
				skipped bool
				tr      fire
			}{{timeline.Pod, timeline.InfraAfterDrain, drainSkipped, leftDrain}, {timeline.VolumeAttachment, timeline.InfraAfterVolumes, volumeSkipped, leftVolume}} {
				var left []string
				for _, x := range byNode[step.kind][m.node] {
					if step.kind == timeline.Pod && !evictable(x.obj) {
						continue
					}
					r := x.removedAt
					seen, watchedGone := seenGone[removalKey(step.kind, x.obj)]
					switch {
					case r != nil && r.Stage.Before(m.infra.Recv):
					case r != nil && r.Recv.After(m.infra.Stage):
						left = append(left, x.obj.GetName())
					case r != nil && watchedGone && seen.Before(m.infra.Recv):
					case r != nil:
						rep.unverifiable++
						rep.notes = append(rep.notes, fmt.Sprintf("unverifiable: %s: %s %s was removed while its infrastructure's deletion was in flight: their order is unknown", k, step.kind, x.obj.GetName()))
					default:
						left = append(left, x.obj.GetName())
					}
				}
				if len(left) == 0 {
					continue
				}
				if step.skipped {
					rep.notes = append(rep.notes, fmt.Sprintf("%s: infrastructure deleted with %s %v on Node %s: row %s skipped the step", k, step.kind, left, m.node, step.tr.row))
					continue
				}
				why := "no recorded row completed or skipped the step"
				if step.tr.row != "" {
					why = "row " + step.tr.row + " completed it"
				}
				violate(step.inv, fmt.Sprintf("infrastructure deleted at %s with %s %v still on Node %s in the workload cluster (%s)", m.infra.Recv.Format(time.StampMilli), step.kind, left, m.node, why))
			}
		}

		// What the Machine left in the workload cluster.
		if !m.gone || m.node == "" {
			continue
		}
		nodeThere := false
		for _, x := range byNode[timeline.Node][m.node] {
			nodeThere = nodeThere || x.removedAt == nil
		}
		switch {
		case nodeThere && keptBy != "":
			rep.kept = append(rep.kept, m.node)
			rep.notes = append(rep.notes, fmt.Sprintf("%s: Node %s left by row %s, as the row says", k, m.node, keptBy))
			continue
		case nodeThere:
			rep.leaked = append(rep.leaked, "Node "+m.node)
		}
		for _, x := range byNode[timeline.VolumeAttachment][m.node] {
			if x.removedAt == nil {
				rep.leaked = append(rep.leaked, "VolumeAttachment "+x.obj.GetName())
			}
		}
		for _, x := range byNode[timeline.Pod][m.node] {
			if x.removedAt == nil && !nodeThere && evictable(x.obj) && !drainSkipped {
				rep.leaked = append(rep.leaked, "Pod "+x.obj.GetNamespace()+"/"+x.obj.GetName())
			}
		}
	}
	for _, id := range wlRows {
		if rep.rows[id] == 0 {
			rep.plan = append(rep.plan, fmt.Sprintf("row %s never fired", id))
		}
	}
	sort.Strings(rep.kept)
	sort.Strings(rep.leaked)
	return rep
}

// leftPast finds the row that took the Machine past states (from at or
// before the last of them to after it), as its lastTransition told it.
func leftPast(m *wlMachine, rules timeline.Rules, states map[string]bool) (fire, bool) {
	rank := func(s string) int { return slices.Index(rules.States, s) }
	last := -1
	for s := range states {
		last = max(last, rank(s))
	}
	for _, f := range m.fires {
		if f.event {
			continue
		}
		if from, to := rank(f.from), rank(f.to); from >= 0 && from <= last && to > last {
			return f, true
		}
	}
	return fire{}, false
}

// evictable: a Pod the drain must remove (not finished, not a mirror or
// DaemonSet Pod, not labelled to be skipped).
func evictable(o client.Object) bool {
	p, ok := o.(*corev1.Pod)
	if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror || p.Labels[clusterv1.PodDrainLabel] == clusterv1.PodDrainLabelValueSkip {
		return false
	}
	ctl := metav1.GetControllerOf(p)
	return ctl == nil || ctl.Kind != "DaemonSet"
}
