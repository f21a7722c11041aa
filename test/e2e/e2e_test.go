// Package e2e runs the krtt operator and the sim provider together on a
// real API server (envtest): nothing plays a provider or kubelet by hand.
package e2e

import (
	"context"
	"fmt"
	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/actions/controller"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/leakcheck"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// traces records the rows the Machine controller fired.
type traces struct {
	mu   sync.Mutex
	rows map[string][]engine.Trace // by object
}

func (tr *traces) add(t engine.Trace) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.rows[t.Object] = append(tr.rows[t.Object], t)
}

func (tr *traces) of(object string) []engine.Trace {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]engine.Trace(nil), tr.rows[object]...)
}

func zapLevel() zapcore.Level {
	if os.Getenv("KRTT_TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// env is the package's one control plane; each test runs its own managers
// on it, in its own namespace, and stops them when it ends.
var env *localcp.ControlPlane

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(false), zap.Level(zapLevel())))
	os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error { env = cp; return nil }))
}

// managers runs managers for one test and stops them when it ends
// (leakcheck.Group: the test fails if anything they started still runs).
type managers struct {
	t   *testing.T
	ctx context.Context
	g   *leakcheck.Group
}

func newManagers(t *testing.T) *managers {
	t.Helper()
	g := leakcheck.NewGroup(t)
	return &managers{t: t, ctx: g.Context(), g: g}
}

func (ms *managers) run(name string, mgr ctrl.Manager) { ms.g.Go(name+" manager", mgr) }

// operator starts the operator, managing only the Machines and Clusters
// labelled with harness.Filter, or with harness.Filter-<split> when split
// is not empty, and records the rows its controllers fire.
func (ms *managers) operator(split string) *traces {
	ms.t.Helper()
	o, err := harness.OperatorOptions(splitFilter(split))
	if err != nil {
		ms.t.Fatal(err)
	}
	opMgr, err := actions.NewManager(env.Config, o)
	if err != nil {
		ms.t.Fatal(err)
	}
	// The rows of every controller, by object.
	tr := &traces{rows: map[string][]engine.Trace{}}
	if err := actions.Setup(ms.ctx, opMgr, nil, controller.Options{Concurrency: 4, Traces: tr.add, SelfHostedClusters: true}); err != nil {
		ms.t.Fatal(err)
	}
	ms.run("operator "+split, opMgr)
	return tr
}

// splitFilter is the watch-filter value of the operator of one split of the
// fleet: harness.Filter itself for the whole of this package's fleet.
func splitFilter(split string) string {
	if split == "" {
		return harness.Filter
	}
	return harness.Filter + "-" + split
}

// sim starts the simulated provider, as its own process would.
func (ms *managers) sim() {
	ms.t.Helper()
	// A fast heartbeat wakes the Machine (it watches its Node) while it
	// drains and waits for volumes, instead of the rows' 20s requeue.
	simMgr, err := harness.NewSimManager(ms.ctx, env.Config, sim.Options{KubeletGracePeriodCap: 2 * time.Second, HeartbeatInterval: time.Second})
	if err != nil {
		ms.t.Fatal(err)
	}
	ms.run("sim", simMgr)
}

// start runs the operator and the sim provider (two managers, as they would
// run as two processes).
func start(t *testing.T) (client.Client, *traces) {
	t.Helper()
	ms := newManagers(t)
	tr := ms.operator("")
	ms.sim()
	return env.Client, tr
}

// TestMachineLifecycleWithSimProvider: a Machine goes to Running on the sim
// provider alone, carries a workload (a plain Pod, a Pod with a volume, a
// Pod behind a PodDisruptionBudget whose other Pod runs elsewhere), and is
// deleted: drain through the Eviction API, volume detach, infrastructure
// release, Node deletion, Machine gone.
func TestMachineLifecycleWithSimProvider(t *testing.T) {
	t0 := time.Now()
	c, tr := start(t)
	t.Logf("control plane and managers up in %s", time.Since(t0).Round(time.Millisecond))
	ctx := context.Background()
	ns := localcp.UniqueName("e2e")
	harness.Must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	_, err := harness.ClusterObjects(ctx, c, ns, "c1", true)
	harness.Must(t, err)

	// The Machine and its provider objects, and a second sim machine
	// (no Machine) for the PDB's other Pod.
	harness.Must(t, c.Create(ctx, harness.Label(&simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}})))
	if _, err := harness.MachineObjects(ctx, c, ns, "c1", "m1", simv1.SimBehavior{ProvisionDelaySeconds: 1, DeleteDelaySeconds: 2}); err != nil {
		t.Fatal(err)
	}
	node := sim.NodeName(ns, "m1")
	harness.Await(t, 60*time.Second, "Machine Running", func(ctx context.Context) error {
		m := &clusterv1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m1"}, m); err != nil {
			return err
		}
		if m.Status.Phase != clusterv1.MachinePhaseRunning || m.Status.NodeRef == nil || m.Status.NodeRef.Name != node {
			return fmt.Errorf("phase %q nodeRef %+v last row %+v", m.Status.Phase, m.Status.NodeRef, m.Status.LastTransition)
		}
		if ptr.Deref(m.Spec.ProviderID, "") != sim.ProviderID(ns, "m1") || ptr.Deref(m.Spec.Bootstrap.DataSecretName, "") != "m1-bootstrap" {
			return fmt.Errorf("providerID %v dataSecretName %v", m.Spec.ProviderID, m.Spec.Bootstrap.DataSecretName)
		}
		return nil
	})
	t.Logf("Machine Running after %s", time.Since(t0).Round(time.Millisecond))
	otherNode := sim.NodeName(ns, "other")
	harness.Await(t, poll.DefaultTimeout, "other Node registered", func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Name: otherNode}, &corev1.Node{})
	})

	// The workload.
	harness.Must(t, c.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}))
	minAvailable := intstr.FromInt32(1)
	harness.Must(t, c.Create(ctx, harness.Label(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}})))
	pod := func(name, node string, labels map[string]string, volumes ...corev1.Volume) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, Volumes: volumes,
				Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}
	}
	pods := []*corev1.Pod{
		pod("web", node, map[string]string{"app": "web"}),
		pod("store", node, map[string]string{"app": "store"}, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}),
		pod("db-1", node, map[string]string{"app": "db"}),
		pod("db-2", otherNode, map[string]string{"app": "db"}),
	}
	for _, p := range pods {
		harness.Must(t, c.Create(ctx, p))
	}
	harness.Await(t, poll.DefaultTimeout, "workload running, volume attached, PDB allows 1", func(ctx context.Context) error {
		if err := harness.PodsRunning(ctx, c, pods, node, 1); err != nil {
			return err
		}
		pdb := &policyv1.PodDisruptionBudget{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, pdb); err != nil {
			return err
		}
		if pdb.Status.DisruptionsAllowed != 1 || pdb.Status.ObservedGeneration != pdb.Generation {
			return fmt.Errorf("PDB status %+v", pdb.Status)
		}
		return nil
	})

	// Delete the Machine and let the sim do the rest.
	tDelete := time.Now()
	harness.Must(t, c.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}))
	harness.Await(t, 120*time.Second, "Machine gone", func(ctx context.Context) error {
		m := &clusterv1.Machine{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m1"}, m)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: phase %q last row %+v", m.Status.Phase, m.Status.LastTransition)
	})
	t.Logf("Machine deleted in %s", time.Since(tDelete).Round(time.Millisecond))

	for _, obj := range []client.Object{
		&simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}},
		&simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
	} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s still exists: %v", obj, obj.GetName(), err)
		}
	}
	for _, p := range pods[:3] {
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}); !apierrors.IsNotFound(err) {
			t.Errorf("Pod %s survived the drain: %v", p.Name, err)
		}
	}
	vas := &storagev1.VolumeAttachmentList{}
	harness.Must(t, c.List(ctx, vas))
	for _, va := range vas.Items {
		if va.Spec.NodeName == node {
			t.Errorf("VolumeAttachment %s still attached to %s", va.Name, node)
		}
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pods[3]), &corev1.Pod{}); err != nil {
		t.Errorf("db-2 on the other Node: %v", err)
	}

	fired := map[string]bool{}
	var seq []string
	for _, x := range tr.of(ns + "/m1") {
		if x.Table == "machine-deletion" {
			fired[x.Row] = true
			if step := x.Row + "(" + string(x.Outcome) + ")"; len(seq) == 0 || seq[len(seq)-1] != step {
				seq = append(seq, step)
			}
		}
	}
	rows := make([]string, 0, len(fired))
	for r := range fired {
		rows = append(rows, r)
	}
	sort.Strings(rows)
	t.Logf("deletion rows fired: %s; sequence %s", strings.Join(rows, " "), strings.Join(seq, " "))
	// The drain really waited for the sim kubelet to finish the evicted Pods.
	if !strings.Contains(strings.Join(seq, " "), "D05(InProgress)") {
		t.Errorf("the drain never had to wait: %s", strings.Join(seq, " "))
	}
	for _, row := range []string{"D05", "D08", "D13", "D18"} {
		if !fired[row] {
			t.Errorf("row %s never fired; sequence %s", row, strings.Join(seq, " "))
		}
	}
}
