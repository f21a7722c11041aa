// Command krtt-demo is what `make demo` runs: a narrated, self-contained
// tour of a Machine's life. It starts its own fresh local control plane in
// .krtt/demo with the operator and the simulated provider in-process,
// creates a Cluster and three Machines, puts Pods on one Machine's Node (one
// with a volume, one behind a PodDisruptionBudget), deletes that Machine and
// shows every deletion step (pre-drain hook, drain, volume detach,
// infrastructure, bootstrap, Node) as the tables decide it. Then another
// Machine's Node goes NotReady: the Machine turns Unknown, and Failed once its
// (shortened) health timeout has passed. Then a Machine of a second Cluster,
// whose Nodes live in a second API server (its workload cluster, named by
// the Secret remote-kubeconfig), reaches Running with its Node there and is
// deleted. Then a MachineSet scales up,
// replaces a Machine whose VM is lost and scales down honouring the
// delete-machine annotation. It ends by itself within about two minutes,
// prints the rows that fired, and exits 0; it exits 1 naming the step that
// did not happen in time.
//
// With -scene rollout (`make demo SCENE=rollout`) it shows instead a
// rolling update of a MachineDeployment of 3 Machines (maxSurge 1,
// maxUnavailable 0) to new templates, a line per row the deployment fires.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

const (
	ns          = "demo"
	clusterName = "demo"
	victim      = "worker-a"
	hook        = clusterv1.PreDrainDeleteHookAnnotationPrefix + "backup"
	// sick is the Machine whose Node goes NotReady; its health timeout is
	// cut from the default 10 minutes so the demo sees it fail.
	sick          = "worker-c"
	healthTimeout = 15
	legacyPV      = "legacy-disk"
	legacyVA      = "legacy-disk-attachment"
	legacyCSI     = "legacy.csi.example.com"
)

var workers = []struct {
	name  string
	delay int32
}{{"worker-a", 1}, {"worker-b", 2}, {"worker-c", 1}}

func main() {
	dir := flag.String("dir", filepath.Join(localcp.DefaultDir, "demo"), "State directory of the demo's control plane (wiped on start).")
	concurrency := flag.Int("machine-concurrency", 4, "Machines reconciled in parallel.")
	scene := flag.String("scene", sceneLifecycle, "What the demo shows: lifecycle (a Machine's life, health, a workload cluster, a MachineSet) or rollout (a rolling update of a MachineDeployment of 3 Machines).")
	flag.Parse()
	if *scene != sceneLifecycle && *scene != sceneRollout {
		fmt.Fprintf(os.Stderr, "krtt-demo: -scene %q: want %s or %s\n", *scene, sceneLifecycle, sceneRollout)
		os.Exit(2)
	}

	d := &demo{start: time.Now(), out: os.Stdout}
	err := d.run(*dir, *concurrency, *scene)
	if err != nil {
		d.say("")
		d.say("krtt-demo FAILED: %v", err)
		if d.logPath != "" {
			d.say("operator and sim logs: %s; control plane logs: %s", d.logPath, filepath.Join(*dir, "logs"))
		}
		os.Exit(1)
	}
}

// Scenes of -scene.
const (
	sceneLifecycle = "lifecycle"
	sceneRollout   = "rollout"
)

type demo struct {
	start   time.Time
	c       client.WithWatch
	logPath string

	outMu sync.Mutex // out
	out   io.Writer

	trMu   sync.Mutex
	traces []engine.Trace
	// onTrace, when set, is handed every trace as its row fires; it must
	// not block the reconcile that fired it.
	onTrace func(engine.Trace)

	tblMu    sync.Mutex
	lastTbl  string
	tblCount int
}

func (d *demo) say(format string, args ...any) {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	_, _ = fmt.Fprintf(d.out, format+"\n", args...)
}

func (d *demo) step(format string, args ...any) {
	d.say("\n[%5.1fs] == %s", time.Since(d.start).Seconds(), fmt.Sprintf(format, args...))
}

func (d *demo) note(format string, args ...any) {
	d.say("[%5.1fs]    %s", time.Since(d.start).Seconds(), fmt.Sprintf(format, args...))
}

func (d *demo) run(dir string, concurrency int, scene string) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	d.step("Starting a fresh local control plane in %s, the krtt operator and the simulated provider", dir)
	cp, err := localcp.Start(localcp.Options{Dir: dir, Fresh: true, Port: -1, Log: noteWriter{d}})
	if err != nil {
		return err
	}
	// The control plane wiped dir: the log goes in after the start.
	d.logPath = filepath.Join(cp.Dir, "logs", "operator-and-sim.log")
	logf, err := os.Create(d.logPath)
	if err != nil {
		return errors.Join(err, cp.Stop())
	}
	defer func() { _ = logf.Close() }()
	ctrl.SetLogger(zap.New(zap.WriteTo(logf), zap.UseDevMode(true)))
	if d.c, err = client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Scheme}); err != nil {
		return errors.Join(err, cp.Stop())
	}
	var wl *workloadCP
	if scene == sceneLifecycle {
		// The workload cluster of Cluster "remote" starts meanwhile.
		wl = startWorkloadCP(cp.Dir)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		if wl == nil {
			d.step("Shutting down: operator and sim, then kube-apiserver and etcd")
			err = errors.Join(err, cp.Stop())
			return
		}
		d.step("Shutting down: operator and sim, then kube-apiserver and etcd (both API servers)")
		if e := errors.Join(wl.stop(), cp.Stop()); e != nil {
			err = errors.Join(err, e)
		}
	}()
	if err := d.startManagers(ctx, cp, concurrency, &wg, cancel); err != nil {
		return err
	}
	if scene == sceneRollout {
		if err := d.rolloutScene(ctx); err != nil {
			return err
		}
		d.summary(ns + "/" + rollout)
		return nil
	}
	wg.Add(1)
	go func() { defer wg.Done(); d.watchTable(ctx) }()

	if err := d.story(ctx); err != nil {
		return err
	}
	if err := d.remoteScene(ctx, wl); err != nil {
		return err
	}
	if err := d.machineSetStory(ctx); err != nil {
		return err
	}
	d.summary(ns + "/" + victim)
	d.summary(ns + "/" + sick)
	d.summary(ns + "/" + remoteMachine)
	d.summary(ns + "/" + pool)
	return nil
}

func (d *demo) startManagers(ctx context.Context, cp *localcp.ControlPlane, concurrency int, wg *sync.WaitGroup, cancel context.CancelFunc) error {
	opMgr, err := actions.NewManager(cp.Config, ctrl.Options{HealthProbeBindAddress: "0"})
	if err != nil {
		return err
	}
	// The demo's Machines are self-hosted: the simulated provider puts
	// their Nodes in the demo's control plane.
	err = actions.Setup(ctx, opMgr, nil, controller.Options{Concurrency: concurrency, SelfHostedClusters: true,
		Traces: func(tr engine.Trace) {
			d.trMu.Lock()
			d.traces = append(d.traces, tr)
			onTrace := d.onTrace
			d.trMu.Unlock()
			if onTrace != nil {
				onTrace(tr)
			}
		}})
	if err != nil {
		return err
	}
	simMgr, err := sim.NewManager(ctx, cp.Config, ctrl.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}, sim.Options{KubeletGracePeriodCap: 2 * time.Second, HeartbeatInterval: 5 * time.Second, WorkloadClusters: true})
	if err != nil {
		return err
	}
	for _, m := range []manager.Manager{opMgr, simMgr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Start(ctx); err != nil {
				d.say("krtt-demo: manager stopped: %v", err)
				cancel()
			}
		}()
	}
	return nil
}

// story is the narrated scenario; every wait has a deadline.
func (d *demo) story(ctx context.Context) error {
	c := d.c
	d.step("Creating namespace %q, Cluster %q and three Machines (sim provisioning takes 1-2s each)", ns, clusterName)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	if _, err := harness.ClusterObjects(ctx, c, ns, clusterName, true); err != nil {
		return err
	}
	for _, w := range workers {
		if err := d.createMachine(ctx, w.name, w.delay); err != nil {
			return err
		}
	}
	if err := d.waitFor(ctx, "all three Machines Running", 60*time.Second, func() (bool, string, error) {
		for _, w := range workers {
			m, err := d.machine(ctx, w.name)
			if err != nil {
				return false, "", err
			}
			if m == nil || m.Status.Phase != clusterv1.MachinePhaseRunning {
				return false, fmt.Sprintf("%s is %s", w.name, phaseOf(m)), nil
			}
		}
		return true, "", nil
	}); err != nil {
		return err
	}
	nodeA, err := d.nodeOf(ctx, "worker-a")
	if err != nil {
		return err
	}
	nodeB, err := d.nodeOf(ctx, "worker-b")
	if err != nil {
		return err
	}
	d.note("worker-a runs on Node %s, worker-b on Node %s", nodeA, nodeB)

	d.step("Scheduling workloads on %s (worker-a's Node)", nodeA)
	d.note("db-0 mounts PersistentVolumeClaim db-data (the sim CSI driver attaches it)")
	d.note("web-0 is the only Pod of app=web, guarded by PodDisruptionBudget web (minAvailable: 1)")
	d.note("a disk of another driver (%s) is attached to the Node too; the demo plays that driver", legacyCSI)
	if err := d.createWorkloads(ctx, nodeA); err != nil {
		return err
	}
	if err := d.waitFor(ctx, "db-0 and web-0 Running, db-data attached, PDB web allowing 0 disruptions", 30*time.Second, func() (bool, string, error) {
		for _, p := range []string{"db-0", "web-0"} {
			pod := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: p}, pod); err != nil {
				return false, "", err
			}
			if pod.Status.Phase != corev1.PodRunning {
				return false, p + " is " + string(pod.Status.Phase), nil
			}
		}
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: nodeA}, node); err != nil {
			return false, "", err
		}
		if len(node.Status.VolumesAttached) == 0 {
			return false, "no volume attached to " + nodeA, nil
		}
		pdb := &policyv1.PodDisruptionBudget{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pdb); err != nil {
			return false, "", err
		}
		if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.CurrentHealthy != 1 {
			return false, fmt.Sprintf("PDB web: %d healthy", pdb.Status.CurrentHealthy), nil
		}
		return true, "", nil
	}); err != nil {
		return err
	}

	d.step("Adding a pre-drain hook to worker-a (%s: a backup must finish first), then deleting worker-a", hook)
	if err := d.patchMachine(ctx, victim, func(m *clusterv1.Machine) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[hook] = "demo"
	}); err != nil {
		return err
	}
	m, err := d.machine(ctx, victim)
	if err != nil || m == nil {
		return fmt.Errorf("read %s: %v", victim, err)
	}
	if err := c.Delete(ctx, m); err != nil {
		return err
	}
	if err := d.waitReason(ctx, clusterv1.DeletingWaitingForPreDrainHookReason, "", 30*time.Second); err != nil {
		return err
	}
	d.note("worker-a holds before the drain while the hook annotation is there (no timeout); the backup runs ...")
	if err := sleep(ctx, 4*time.Second); err != nil { // the "backup" taking a while
		return err
	}
	d.step("The backup is done: removing the hook annotation")
	if err := d.patchMachine(ctx, victim, func(m *clusterv1.Machine) { delete(m.Annotations, hook) }); err != nil {
		return err
	}
	if err := d.waitReason(ctx, clusterv1.DeletingDrainingNodeReason, "web-0", 30*time.Second); err != nil {
		return err
	}
	d.note("the drain cordoned %s; web-0 is blocked by PodDisruptionBudget web, and db-0 waits its turn: Pods with volumes are evicted one at a time, after the others (pod-verdict row P16)", nodeA)

	d.step("Scaling app=web: web-1 starts on %s, so PDB web allows one disruption", nodeB)
	if err := d.createPod(ctx, "web-1", nodeB, map[string]string{"app": "web"}, nil); err != nil {
		return err
	}
	// A PDB change wakes the draining Machine, so web-0 may be evicted
	// before its budget is even seen allowing it: wait for the eviction.
	if err := d.waitFor(ctx, "web-0 evicted once PDB web allows it", 30*time.Second, func() (bool, string, error) {
		p := &corev1.Pod{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-0"}, p)
		if apierrors.IsNotFound(err) {
			return true, "web-0 gone", nil
		}
		if err != nil {
			return false, "", err
		}
		if p.DeletionTimestamp != nil {
			return true, "web-0 terminating", nil
		}
		pdb := &policyv1.PodDisruptionBudget{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pdb); err != nil {
			return false, "", err
		}
		return false, fmt.Sprintf("web-0 running, PDB web disruptionsAllowed=%d", pdb.Status.DisruptionsAllowed), nil
	}); err != nil {
		return err
	}
	d.note("PDB web allowed one disruption; the change woke the drain, which evicted web-0")
	d.note("now db-0, the Pod with a volume, is evicted")
	if err := d.waitFor(ctx, "db-0 evicted and gone (the sim kubelet finishes it)", 45*time.Second, func() (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-0"}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "db-0 still there", err
	}); err != nil {
		return err
	}

	if err := d.waitReason(ctx, clusterv1.DeletingWaitingForVolumeDetachReason, legacyPV, 75*time.Second); err != nil {
		return err
	}
	d.note("drain done; db-data detached with db-0, but %s is still attached: the volume wait holds", legacyPV)
	if err := sleep(ctx, 3*time.Second); err != nil { // the legacy driver being slow
		return err
	}
	d.step("The %s driver detaches %s", legacyCSI, legacyPV)
	if err := c.Delete(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: legacyVA}}); err != nil {
		return err
	}

	d.step("Waiting for infrastructure, bootstrap and Node deletion and the finalizer")
	if err := d.waitFor(ctx, "worker-a gone", 75*time.Second, func() (bool, string, error) {
		return d.machineGone(ctx, victim)
	}); err != nil {
		return err
	}
	for what, obj := range map[string]client.Object{
		"Node " + nodeA:               &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeA}},
		"SimMachine worker-a":         &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim}},
		"SimBootstrapConfig worker-a": &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim}},
	} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s still exists after worker-a was deleted (err=%v)", what, err)
		}
	}
	d.note("worker-a, its SimMachine, SimBootstrapConfig and Node %s are gone; web-1 still runs on %s", nodeA, nodeB)
	d.refreshTable(ctx)
	return d.healthScene(ctx)
}

// healthScene: a Node going NotReady turns its Machine Unknown, then Failed
// once the health timeout has passed; the Machine is left for its owner.
func (d *demo) healthScene(ctx context.Context) error {
	d.step("Machine health: setting %s's spec.health.healthTimeoutSeconds to %d (default 600), then its Node goes NotReady (spec.sim.nodeNotReady)", sick, healthTimeout)
	if err := d.patchMachine(ctx, sick, func(m *clusterv1.Machine) {
		m.Spec.Health.HealthTimeoutSeconds = ptr.To[int32](healthTimeout)
	}); err != nil {
		return err
	}
	sm := &simv1.SimMachine{}
	if err := d.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: sick}, sm); err != nil {
		return err
	}
	before := sm.DeepCopy()
	sm.Spec.Sim.NodeNotReady = true
	if err := d.c.Patch(ctx, sm, client.MergeFrom(before)); err != nil {
		return err
	}
	var m *clusterv1.Machine
	if err := d.waitFor(ctx, sick+" phase Unknown", 30*time.Second, func() (bool, string, error) {
		var err error
		m, err = d.machine(ctx, sick)
		if err != nil || m == nil {
			return false, "", err
		}
		return m.Status.Phase == clusterv1.MachinePhaseUnknown, sick + " is " + phaseOf(m), nil
	}); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.NodeHealthyCondition); c != nil {
		d.note("%s: NodeHealthy=%s reason %s: %s", sick, c.Status, c.Reason, c.Message)
	}
	if since := m.Status.Health.UnhealthySince; since != nil {
		d.note("unhealthy since %s; it fails at %s unless the Node recovers (krtt explain machine %s -n %s shows the wait)",
			since.Format(time.TimeOnly), since.Add(healthTimeout*time.Second).Format(time.TimeOnly), sick, ns)
	}
	if err := d.waitFor(ctx, sick+" Failed after its health timeout", 60*time.Second, func() (bool, string, error) {
		var err error
		m, err = d.machine(ctx, sick)
		if err != nil || m == nil {
			return false, "", err
		}
		return m.Status.Phase == clusterv1.MachinePhaseFailed, sick + " is " + phaseOf(m), nil
	}); err != nil {
		return err
	}
	d.note("%s: failureReason %s: %s", sick, ptr.Deref(m.Status.FailureReason, ""), ptr.Deref(m.Status.FailureMessage, ""))
	d.note("the Machine controller never deletes a Failed Machine: a MachineSet replaces it, or a human deletes it")
	d.refreshTable(ctx)
	return d.forceScene(ctx)
}

// forceScene: the Failed Machine is deleted with the force-deletion label;
// its Pod, which a PodDisruptionBudget would keep from being evicted, is
// deleted with grace period 0 and the deletion goes on.
func (d *demo) forceScene(ctx context.Context) error {
	c := d.c
	node, err := d.nodeOf(ctx, sick)
	if err != nil {
		return err
	}
	d.step("Force deletion: batch-0 runs on %s behind PodDisruptionBudget batch (minAvailable: 1, so no eviction is allowed); labelling %s %s=%s and deleting it",
		node, sick, clusterv1.ForceDeletionLabel, clusterv1.ForceDeletionLabelValue)
	if err := d.createPod(ctx, "batch-0", node, map[string]string{"app": "batch"}, nil); err != nil {
		return err
	}
	if err := c.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "batch"}}},
	}); err != nil {
		return err
	}
	if err := d.patchMachine(ctx, sick, func(m *clusterv1.Machine) {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[clusterv1.ForceDeletionLabel] = clusterv1.ForceDeletionLabelValue
	}); err != nil {
		return err
	}
	if err := c.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sick}}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, "batch-0 deleted with grace period 0, the budget notwithstanding", 30*time.Second, func() (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "batch-0"}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "batch-0 still there", err
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, sick+" gone", 60*time.Second, func() (bool, string, error) {
		return d.machineGone(ctx, sick)
	}); err != nil {
		return err
	}
	d.note("%s is gone: row D21 forced the drain (Deleting reason ForceDeletionLabel), deleted the Node's VolumeAttachments and skipped the volume wait; hooks would still have held it", sick)
	d.refreshTable(ctx)
	return nil
}

func (d *demo) createMachine(ctx context.Context, name string, delay int32) error {
	return d.createClusterMachine(ctx, name, clusterName, delay)
}

func (d *demo) createClusterMachine(ctx context.Context, name, cluster string, delay int32) error {
	c := d.c
	if err := c.Create(ctx, &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		return err
	}
	sm := &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	sm.Spec.Sim.ProvisionDelaySeconds = delay
	if err := c.Create(ctx, sm); err != nil {
		return err
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.NodeRoleLabelPrefix + "worker": ""}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster,
			Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
				APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfig", Name: name}},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: name},
			Deletion: clusterv1.MachineDeletionSpec{
				NodeDrainTimeoutSeconds:        ptr.To[int32](300),
				NodeVolumeDetachTimeoutSeconds: ptr.To[int32](300),
			},
		},
	}
	return c.Create(ctx, m)
}

func (d *demo) createWorkloads(ctx context.Context, node string) error {
	c := d.c
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if err := c.Create(ctx, pvc); err != nil {
		return err
	}
	if err := d.createPod(ctx, "db-0", node, map[string]string{"app": "db"}, []corev1.Volume{{Name: "data",
		VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db-data"}}}}); err != nil {
		return err
	}
	if err := d.createPod(ctx, "web-0", node, map[string]string{"app": "web"}, nil); err != nil {
		return err
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	if err := c.Create(ctx, pdb); err != nil {
		return err
	}
	// A disk of another CSI driver, attached to the Node; the sim CSI driver
	// leaves it alone, the demo detaches it later.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: legacyPV},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: legacyCSI, VolumeHandle: "vol-legacy-1"}},
		},
	}
	if err := c.Create(ctx, pv); err != nil {
		return err
	}
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: legacyVA},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: legacyCSI, NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(legacyPV)}},
	}
	if err := c.Create(ctx, va); err != nil {
		return err
	}
	va.Status.Attached = true
	return c.Status().Update(ctx, va)
}

func (d *demo) createPod(ctx context.Context, name, node string, labels map[string]string, vols []corev1.Volume) error {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			Volumes:    vols,
		},
	}
	for _, v := range vols {
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/" + v.Name})
	}
	return d.c.Create(ctx, p)
}

func (d *demo) machine(ctx context.Context, name string) (*clusterv1.Machine, error) {
	m := &clusterv1.Machine{}
	err := d.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return m, err
}

// machineGone says whether a Machine is gone, or else which deletion step
// it is in (a waitFor condition).
func (d *demo) machineGone(ctx context.Context, name string) (bool, string, error) {
	m, err := d.machine(ctx, name)
	if err != nil {
		return false, "", err
	}
	if m != nil {
		return false, name + " is " + deletingReason(m), nil
	}
	return true, "", nil
}

func (d *demo) nodeOf(ctx context.Context, name string) (string, error) {
	m, err := d.machine(ctx, name)
	if err != nil {
		return "", err
	}
	if m == nil || m.Status.NodeRef == nil {
		return "", fmt.Errorf("%s has no Node", name)
	}
	return m.Status.NodeRef.Name, nil
}

func (d *demo) patchMachine(ctx context.Context, name string, mutate func(*clusterv1.Machine)) error {
	m, err := d.machine(ctx, name)
	if err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("Machine %s not found", name)
	}
	before := m.DeepCopy()
	mutate(m)
	return d.c.Patch(ctx, m, client.MergeFrom(before))
}

// waitReason waits until the victim's Deleting condition has reason (and
// its message contains substr).
func (d *demo) waitReason(ctx context.Context, reason, substr string, timeout time.Duration) error {
	what := "worker-a Deleting reason " + reason
	if substr != "" {
		what += " naming " + substr
	}
	return d.waitFor(ctx, what, timeout, func() (bool, string, error) {
		m, err := d.machine(ctx, victim)
		if err != nil {
			return false, "", err
		}
		if m == nil {
			return false, "worker-a is gone", nil
		}
		cond := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition)
		if cond == nil || cond.Reason != reason || !strings.Contains(cond.Message, substr) {
			return false, "worker-a is " + deletingReason(m), nil
		}
		return true, "", nil
	})
}

// waitFor polls cond every 250ms until it holds; after timeout it fails
// with the last thing cond reported.
func (d *demo) waitFor(ctx context.Context, what string, timeout time.Duration, cond func() (bool, string, error)) error {
	d.note("waiting for %s (up to %s)", what, timeout)
	deadline := time.Now().Add(timeout)
	t0 := time.Now()
	last := ""
	for {
		ok, status, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			d.refreshTable(ctx)
			d.note("ok: %s (%.1fs)", what, time.Since(t0).Seconds())
			return nil
		}
		last = status
		if time.Now().After(deadline) {
			return fmt.Errorf("step did not happen within %s: %s (last seen: %s)", timeout, what, last)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return errors.New("stopped (a manager failed; see the log)")
	case <-time.After(d):
		return nil
	}
}

// watchTable redraws the Machine table whenever it changes.
func (d *demo) watchTable(ctx context.Context) {
	for {
		d.refreshTable(ctx)
		if sleep(ctx, 250*time.Millisecond) != nil {
			return
		}
	}
}

func (d *demo) refreshTable(ctx context.Context) {
	list := &clusterv1.MachineList{}
	if err := d.c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "    NAME\tPHASE\tSTATE\tDELETING REASON\tLAST ROW\tMESSAGE")
	for i := range list.Items {
		m := &list.Items[i]
		reason, msg := "", ""
		if cond := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition); cond != nil && cond.Status == metav1.ConditionTrue {
			reason, msg = cond.Reason, cond.Message
		}
		row := ""
		if lt := m.Status.LastTransition; lt != nil {
			row = lt.Table + "/" + lt.Row
			if msg == "" {
				msg = lt.Message
			}
		}
		_, _ = fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\n", m.Name, orDash(string(m.Status.Phase)), orDash(m.Status.State), orDash(reason), orDash(row), orDash(truncate(msg, 90)))
	}
	_ = tw.Flush()
	tbl := b.String()
	d.tblMu.Lock()
	defer d.tblMu.Unlock()
	if tbl == d.lastTbl {
		return
	}
	d.lastTbl = tbl
	d.tblCount++
	d.say("[%5.1fs]    Machines:\n%s", time.Since(d.start).Seconds(), strings.TrimRight(tbl, "\n"))
}

func (d *demo) summary(key string) {
	d.trMu.Lock()
	trs := append([]engine.Trace(nil), d.traces...)
	d.trMu.Unlock()
	d.step("Summary: the rows that fired for %s, in order", key)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "    #\tTIME\tTABLE/ROW\tFROM → TO\tACTION\tOUTCOME\tTIMES")
	n := 0
	var prev *engine.Trace
	count := 0
	flush := func() {
		if prev == nil {
			return
		}
		n++
		_, _ = fmt.Fprintf(tw, "    %d\t%5.1fs\t%s/%s\t%s → %s\t%s\t%s\t×%d\n", n, prev.Time.Sub(d.start).Seconds(), prev.Table, prev.Row,
			orDash(prev.From), orDash(prev.To), orDash(prev.Action), orDash(string(prev.Outcome)), count)
	}
	for i := range trs {
		tr := &trs[i]
		if tr.Object != key {
			continue
		}
		if prev != nil && prev.Table == tr.Table && prev.Row == tr.Row && prev.From == tr.From && prev.To == tr.To && prev.Outcome == tr.Outcome {
			count++
			continue
		}
		flush()
		prev, count = tr, 1
	}
	flush()
	_ = tw.Flush()
	d.say("%s", strings.TrimRight(b.String(), "\n"))
	d.say("    (×N: the same row fired N times in a row, e.g. the drain looking again while a Pod remained)")
	d.say("    Explain any row: bin/krtt decide --table transitions --state <FROM> --fact ...; tables: docs/tables/")
}

type noteWriter struct{ d *demo }

func (w noteWriter) Write(p []byte) (int, error) {
	w.d.note("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func phaseOf(m *clusterv1.Machine) string {
	if m == nil {
		return "missing"
	}
	return orDash(string(m.Status.Phase))
}

func deletingReason(m *clusterv1.Machine) string {
	if cond := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition); cond != nil {
		if cond.Message != "" {
			return cond.Reason + ": " + truncate(cond.Message, 120)
		}
		return cond.Reason
	}
	return phaseOf(m)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
