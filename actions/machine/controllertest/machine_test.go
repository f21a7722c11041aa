package controllertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

var h *harness.Harness

func TestMain(m *testing.M) {
	var err error
	h, err = harness.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := h.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	os.Exit(code)
}

const wait = poll.DefaultTimeout // Await scales it

func eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	if err := harness.Eventually(context.Background(), wait, cond); err != nil {
		for _, tr := range h.Traces(types.NamespacedName{}) {
			if os.Getenv("KRTT_TEST_TRACES") != "" {
				t.Logf("trace %s %s/%s %s->%s %s %s %s", tr.Object, tr.Table, tr.Row, tr.From, tr.To, tr.Action, tr.Outcome, tr.Message)
			}
		}
		t.Fatalf("%s: %v", what, err)
	}
}

func condition(m *clusterv1.Machine, t string) *metav1.Condition {
	return meta.FindStatusCondition(m.Status.Conditions, t)
}

// running brings a Machine to Running by playing the providers and kubelet.
func running(t *testing.T, ns, name string, mutate ...func(*clusterv1.Machine)) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	_, err := h.MachineObjects(ctx, ns, "c1", name, mutate...)
	harness.Must(t, err)
	harness.Must(t, h.BootstrapReady(ctx, ns, name))
	harness.Must(t, h.InfrastructureProvisioned(ctx, ns, name))
	n, err := h.JoinNode(ctx, ns+"-"+name, harness.ProviderID(ns, name))
	harness.Must(t, err)
	eventually(t, "Machine Running", func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, name)
		if err != nil {
			return err
		}
		if m.Status.Phase != clusterv1.MachinePhaseRunning {
			return fmt.Errorf("phase %q, last row %+v", m.Status.Phase, m.Status.LastTransition)
		}
		return nil
	})
	return n
}

// setup creates a fresh namespace for one run of a test (so -count=N runs
// on one control plane) with Cluster c1, and returns its name.
func setup(t *testing.T, base string) string {
	t.Helper()
	ctx := context.Background()
	ns := localcp.UniqueName(base)
	harness.Must(t, h.Namespace(ctx, ns))
	_, err := h.Cluster(ctx, ns, "c1")
	harness.Must(t, err)
	return ns
}

func TestCreateToRunning(t *testing.T) {
	ns := setup(t, "create")
	node := running(t, ns, "m1", func(m *clusterv1.Machine) {
		m.Labels = map[string]string{"node-role.kubernetes.io/worker": "", "unrelated": "x"}
	})
	ctx := context.Background()
	m, err := h.Machine(ctx, ns, "m1")
	harness.Must(t, err)
	if m.Status.NodeRef == nil || m.Status.NodeRef.Name != node.Name {
		t.Fatalf("nodeRef = %+v", m.Status.NodeRef)
	}
	if m.Spec.ProviderID == nil || *m.Spec.ProviderID != harness.ProviderID(ns, "m1") {
		t.Fatalf("providerID = %v", m.Spec.ProviderID)
	}
	if m.Spec.Bootstrap.DataSecretName == nil || *m.Spec.Bootstrap.DataSecretName != "m1-bootstrap" {
		t.Fatalf("dataSecretName = %v", m.Spec.Bootstrap.DataSecretName)
	}
	if len(m.Status.Addresses) != 1 || m.Status.FailureDomain != "zone-a" {
		t.Fatalf("addresses %v failureDomain %q", m.Status.Addresses, m.Status.FailureDomain)
	}
	if m.Labels[clusterv1.ClusterNameLabel] != "c1" {
		t.Fatalf("cluster-name label missing: %v", m.Labels)
	}
	// Running needs the Node, not its Ready report, which the kubelet
	// (JoinNode) writes a moment after creating it: the Node conditions
	// follow on the reconcile that report wakes.
	eventually(t, "Ready and Node synced", func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		for _, ct := range []string{clusterv1.BootstrapConfigReadyCondition, clusterv1.InfrastructureReadyCondition, clusterv1.NodeReadyCondition, clusterv1.NodeHealthyCondition} {
			if c := condition(m, ct); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("condition %s = %+v", ct, c)
			}
		}
		if c := condition(m, clusterv1.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Ready = %+v", c)
		}
		n := &corev1.Node{}
		if err := h.Client.Get(ctx, client.ObjectKey{Name: node.Name}, n); err != nil {
			return err
		}
		if _, ok := n.Labels["node-role.kubernetes.io/worker"]; !ok || n.Labels["unrelated"] != "" {
			return fmt.Errorf("node labels %v", n.Labels)
		}
		if n.Annotations[clusterv1.MachineAnnotation] != "m1" || n.Annotations[clusterv1.ClusterNamespaceAnnotation] != ns {
			return fmt.Errorf("node annotations %v", n.Annotations)
		}
		return nil
	})
	// The provider objects are owned by the Machine.
	b := &simv1.SimBootstrapConfig{}
	harness.Must(t, h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m1"}, b))
	if owner := metav1.GetControllerOf(b); owner == nil || owner.UID != m.UID {
		t.Fatalf("bootstrap owner = %+v", owner)
	}
	key := types.NamespacedName{Namespace: ns, Name: "m1"}
	// N12 (waiting for the data secret) fires only when the operator sees
	// the bootstrap object before the provider reports, so it is not required.
	for _, row := range []string{"N02", "N06", "N13", "N23", "N31"} {
		if !h.Fired(key, "machine-normal", row) {
			t.Errorf("row %s never fired for %s", row, key)
		}
	}
}

func TestPausedMachineIsLeftAlone(t *testing.T) {
	ns := setup(t, "paused")
	ctx := context.Background()
	_, err := h.MachineObjects(ctx, ns, "c1", "m1", func(m *clusterv1.Machine) {
		m.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	})
	harness.Must(t, err)
	eventually(t, "Paused condition", func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		if c := condition(m, clusterv1.PausedCondition); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Paused = %+v (row %+v)", c, m.Status.LastTransition)
		}
		return nil
	})
	m, err := h.Machine(ctx, ns, "m1")
	harness.Must(t, err)
	if len(m.Finalizers) != 1 {
		t.Fatalf("the finalizer comes before the pause check: %v", m.Finalizers)
	}
	if m.Status.Phase != clusterv1.MachinePhasePending {
		t.Fatalf("paused Machine moved on: %s", m.Status.Phase)
	}
}

func TestMissingBootstrapObjectWaits(t *testing.T) {
	ns := setup(t, "missing")
	ctx := context.Background()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"},
		Spec: clusterv1.MachineSpec{
			ClusterName:       "c1",
			Bootstrap:         clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfig", Name: "nope"}},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachine", Name: "nope"},
		},
	}
	harness.Must(t, h.Client.Create(ctx, m))
	eventually(t, "ObjectDoesNotExist", func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		c := condition(m, clusterv1.BootstrapConfigReadyCondition)
		if c == nil || c.Reason != "ObjectDoesNotExist" || m.Status.LastTransition == nil || m.Status.LastTransition.Row != "N11" {
			return fmt.Errorf("condition %+v, last %+v", c, m.Status.LastTransition)
		}
		return nil
	})
}

// TestDeletionWithHookPDBAndVolumes walks the whole deletion: a pre-drain
// hook holds it, a PodDisruptionBudget blocks the drain until relaxed, an
// attached volume holds it, then infrastructure, bootstrap and Node go, and
// an operator restart in the middle changes nothing.
func TestDeletionWithHookPDBAndVolumes(t *testing.T) {
	ns := setup(t, "deletion")
	ctx := context.Background()
	node := running(t, ns, "m1", func(m *clusterv1.Machine) {
		m.Annotations = map[string]string{clusterv1.PreDrainDeleteHookAnnotationPrefix + "backup": "team-a"}
	})
	// Workload: a plain Pod and one behind a PDB that allows no disruption.
	for _, name := range []string{"web", "db"} {
		_, err := h.RunningPod(ctx, ns, name, node.Name, map[string]string{"app": name})
		harness.Must(t, err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrIntStr(1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	harness.Must(t, h.Client.Create(ctx, pdb))
	setPDB(t, ns, "db", 0)

	harness.Must(t, h.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}))
	expectReason(t, ns, "m1", clusterv1.DeletingWaitingForPreDrainHookReason, "backup")

	// Restart the operator while the hook holds the deletion.
	harness.Must(t, h.RestartOperator())
	expectReason(t, ns, "m1", clusterv1.DeletingWaitingForPreDrainHookReason, "backup")

	// The operator may write the Machine between the read and the update.
	harness.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		delete(m.Annotations, clusterv1.PreDrainDeleteHookAnnotationPrefix+"backup")
		return h.Client.Update(ctx, m)
	}))

	// web is evicted (and finished by the "kubelet"); db is blocked by its PDB.
	eventually(t, "drain blocked by PDB", func(ctx context.Context) error {
		if _, err := h.FinishTerminatingPods(ctx, node.Name); err != nil {
			return err
		}
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		c := condition(m, clusterv1.DeletingCondition)
		if c == nil || c.Reason != clusterv1.DeletingDrainingNodeReason || !strings.Contains(c.Message, "db") || !strings.Contains(c.Message, "disruption budget") || strings.Contains(c.Message, "web") {
			return fmt.Errorf("Deleting = %+v", c)
		}
		return nil
	})
	n := &corev1.Node{}
	harness.Must(t, h.Client.Get(ctx, client.ObjectKey{Name: node.Name}, n))
	if !n.Spec.Unschedulable {
		t.Fatal("the Node was not cordoned")
	}
	// An attached volume will hold the deletion after the drain.
	n.Status.VolumesAttached = []corev1.AttachedVolume{{Name: "kubernetes.io/csi/sim^vol-1", DevicePath: "/dev/x"}}
	harness.Must(t, h.Client.Status().Update(ctx, n))

	setPDB(t, ns, "db", 1)
	eventually(t, "drain completes once the PDB allows it", func(ctx context.Context) error {
		if _, err := h.FinishTerminatingPods(ctx, node.Name); err != nil {
			return err
		}
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		if c := condition(m, clusterv1.DeletingCondition); c == nil || c.Reason != clusterv1.DeletingWaitingForVolumeDetachReason {
			return fmt.Errorf("Deleting = %+v", c)
		}
		return nil
	})
	harness.Must(t, h.Client.Get(ctx, client.ObjectKey{Name: node.Name}, n))
	n.Status.VolumesAttached = nil
	harness.Must(t, h.Client.Status().Update(ctx, n))

	// Infrastructure and bootstrap objects are deleted, then the Node, then the Machine is gone.
	eventually(t, "Machine gone", func(ctx context.Context) error {
		_, err := h.Machine(ctx, ns, "m1")
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there")
	})
	for _, obj := range []client.Object{&simv1.SimMachine{}, &simv1.SimBootstrapConfig{}} {
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m1"}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T still exists: %v", obj, err)
		}
	}
	if err := h.Client.Get(ctx, client.ObjectKey{Name: node.Name}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("Node still exists: %v", err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "m1"}
	for _, row := range []string{"D01", "D03", "D04", "D05", "D08", "D12", "D13", "D14", "D15", "D16", "D18"} {
		if !h.Fired(key, "machine-deletion", row) {
			t.Errorf("row %s never fired", row)
		}
	}
	assertTransitionsCounted(t)
}

func ptrIntStr(i int) *intstr.IntOrString { v := intstr.FromInt32(int32(i)); return &v }

// setPDB plays the disruption controller, which envtest does not run.
func setPDB(t *testing.T, ns, name string, allowed int32) {
	t.Helper()
	eventually(t, "PDB status", func(ctx context.Context) error {
		p := &policyv1.PodDisruptionBudget{}
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return err
		}
		p.Status.ObservedGeneration = p.Generation
		p.Status.DisruptionsAllowed = allowed
		p.Status.CurrentHealthy = 1 + allowed
		p.Status.DesiredHealthy = 1
		p.Status.ExpectedPods = 1 + allowed
		return h.Client.Status().Update(ctx, p)
	})
}

func expectReason(t *testing.T, ns, name, reason, inMessage string) {
	t.Helper()
	eventually(t, "Deleting reason "+reason, func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, name)
		if err != nil {
			return err
		}
		c := condition(m, clusterv1.DeletingCondition)
		if c == nil || c.Reason != reason || !strings.Contains(c.Message, inMessage) {
			return fmt.Errorf("Deleting = %+v", c)
		}
		return nil
	})
}

// assertTransitionsCounted: the rows the deletion test fired are counted on
// the manager's metrics registry, labelled with the controller.
func assertTransitionsCounted(t *testing.T) {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	harness.Must(t, err)
	seen := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "krtt_transitions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			// Each controller's rows carry its name; the Cluster,
			// MachineSet and MachineDrainRule controllers run beside
			// this one (and see what other packages' tests create on a
			// shared control plane).
			want := "machine"
			for prefix, c := range map[string]string{"cluster-": "cluster", "machineset-": "machineset", "machinedrainrule": "machinedrainrule"} {
				if strings.HasPrefix(labels["table"], prefix) {
					want = c
				}
			}
			if labels["controller"] != want {
				t.Errorf("krtt_transitions_total with the wrong controller label: %v", labels)
			}
			if labels["controller"] != "machine" {
				continue
			}
			seen[labels["table"]+"/"+labels["row"]+"/"+labels["outcome"]] += m.GetCounter().GetValue()
		}
	}
	for _, want := range []string{"machine-deletion/D03/Done", "machine-deletion/D05/InProgress", "machine-normal/N31/Done"} {
		if seen[want] < 1 {
			t.Errorf("krtt_transitions_total{%s} = %v; have %v", want, seen[want], seen)
		}
	}
}

// gauge reads one sample of a gauge family whose labels include want.
func gauge(t *testing.T, family string, want map[string]string) (float64, bool) {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	harness.Must(t, err)
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metrics
				}
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// TestMetricsMachinesAndDeletionStep: Machines are counted by phase, and a
// Machine held in a deletion step reports how long it has been there.
func TestMetricsMachinesAndDeletionStep(t *testing.T) {
	ns := setup(t, "metrics")
	ctx := context.Background()
	running(t, ns, "m1", func(m *clusterv1.Machine) {
		m.Annotations = map[string]string{clusterv1.PreDrainDeleteHookAnnotationPrefix + "hold": ""}
	})
	if n, ok := gauge(t, "krtt_machines", map[string]string{"phase": "Running"}); !ok || n < 1 {
		t.Fatalf("krtt_machines{phase=Running} = %v (present %v)", n, ok)
	}
	harness.Must(t, h.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}))
	expectReason(t, ns, "m1", clusterv1.DeletingWaitingForPreDrainHookReason, "hold")
	eventually(t, "deletion step gauge", func(context.Context) error {
		v, ok := gauge(t, "krtt_machine_deletion_step_seconds", map[string]string{"namespace": ns, "name": "m1", "state": "WaitingForPreDrainHook"})
		if !ok || v < 0 {
			return fmt.Errorf("krtt_machine_deletion_step_seconds = %v (present %v)", v, ok)
		}
		return nil
	})
}
