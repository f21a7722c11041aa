package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/machine"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	krttexplain "github.com/krtt-dev/krtt/engine/explain"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// -update rewrites the goldens. Another test file of the package may define
// the flag already; it is looked up, and defined only when missing.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updateGoldens() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// goldenCompare compares got with testdata/explain/NAME, or rewrites it with -update.
func goldenCompare(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "explain", name)
	if updateGoldens() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/krtt -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden (go test ./cmd/krtt -run Explain -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

var (
	timeRe   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	agoRe    = regexp.MustCompile(`\((?:[0-9.]+(?:h|m|s|ms|µs|ns))+ ago\)`)
	inRe     = regexp.MustCompile(`\(in (?:[0-9.]+(?:h|m|s|ms|µs|ns))+\)`)
	passedRe = regexp.MustCompile(`passed (?:[0-9.]+(?:h|m|s|ms|µs|ns))+ ago`)
	seenRe   = regexp.MustCompile(` \(seen \d+ times\)`)
	// uniqueRe: the suffix localcp.UniqueName gives namespaces (and the
	// Nodes named after them).
	uniqueRe = regexp.MustCompile(regexp.QuoteMeta("-"+localcp.RunToken()+"-") + `\d+`)
)

// mask replaces times, ages and repeat counts with placeholders so the
// output of a live cluster can be compared with a golden.
func mask(s string) string {
	s = timeRe.ReplaceAllString(s, "<time>")
	s = agoRe.ReplaceAllString(s, "(<age> ago)")
	s = inRe.ReplaceAllString(s, "(in <duration>)")
	s = passedRe.ReplaceAllString(s, "passed <duration> ago")
	s = seenRe.ReplaceAllString(s, "")
	s = uniqueRe.ReplaceAllString(s, "")
	return s
}

// kubeconfigFor writes a kubeconfig for the envtest control plane, so the
// command is exercised through its real --kubeconfig loading.
func kubeconfigFor(t *testing.T, h *harness.Harness) string {
	t.Helper()
	return kubeconfigOf(t, h.Env.Config)
}

const explainWait = 60 * time.Second

// runningMachine creates Cluster c1 and Machine m1 in ns and plays the
// providers and kubelet until it is Running; the Node is NS-m1.
func runningMachine(t *testing.T, h *harness.Harness, ns string, mutate ...func(*clusterv1.Machine)) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	harness.Must(t, h.Namespace(ctx, ns))
	_, err := h.Cluster(ctx, ns, "c1")
	harness.Must(t, err)
	_, err = h.MachineObjects(ctx, ns, "c1", "m1", mutate...)
	harness.Must(t, err)
	// One step at a time, each once the Machine waits for it: run to
	// completion lets one reconcile pass through every step whose object
	// is ready (status.lastTransition.via), so which steps a golden shows
	// would otherwise depend on when the cache saw each object.
	waitRow(t, h, ns, "N12")
	harness.Must(t, h.BootstrapReady(ctx, ns, "m1"))
	waitRow(t, h, ns, "N21")
	harness.Must(t, h.InfrastructureProvisioned(ctx, ns, "m1"))
	waitRow(t, h, ns, "N30")
	n, err := h.JoinNode(ctx, ns+"-m1", harness.ProviderID(ns, "m1"))
	harness.Must(t, err)
	harness.Await(t, explainWait, "Machine Running", func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		if m.Status.Phase != clusterv1.MachinePhaseRunning {
			return fmt.Errorf("phase %q", m.Status.Phase)
		}
		return nil
	})
	return n
}

// waitRow waits until row ID of the machine-normal table fired for m1 and
// its result was written.
func waitRow(t *testing.T, h *harness.Harness, ns, id string) {
	t.Helper()
	key := types.NamespacedName{Namespace: ns, Name: "m1"}
	harness.Await(t, explainWait, "Machine "+ns+"/m1 fired "+id, func(context.Context) error {
		for _, tr := range h.Traces(key) {
			if tr.Table == "machine-normal" && tr.Row == id && tr.Unwritten == "" {
				return nil
			}
		}
		return fmt.Errorf("row %s has not fired", id)
	})
}

// blockingPDB guards the Pods labelled app=APP with a PodDisruptionBudget
// that allows no disruption.
func blockingPDB(t *testing.T, h *harness.Harness, ns, app string) {
	t.Helper()
	one := intstr.FromInt32(1)
	harness.Must(t, h.Client.Create(context.Background(), &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}))
	// envtest runs no disruption controller: report no disruption allowed.
	harness.Await(t, explainWait, "PDB status", func(ctx context.Context) error {
		p := &policyv1.PodDisruptionBudget{}
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, p); err != nil {
			return err
		}
		p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: p.Generation, DisruptionsAllowed: 0,
			CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
		return h.Client.Status().Update(ctx, p)
	})
}

func deleteMachine(t *testing.T, h *harness.Harness, ns string) {
	t.Helper()
	harness.Must(t, h.Client.Delete(context.Background(), &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}))
}

// settled waits until the Machine has the Deleting reason (empty: any) with
// the words in its message, its last transition is the row that fires now
// and the newest Event is about entering its state, then returns the
// report.
func settled(t *testing.T, h *harness.Harness, ns, reason, inMessage string) *krttexplain.Report {
	t.Helper()
	return settledTold(t, h, ns, reason, inMessage, "")
}

// settledTold is settled for a Machine that entered its state quietly (a
// quiet state, or a quiet row whose action told an Event with Cluster
// API's reason instead): the newest Event has the reason told.
func settledTold(t *testing.T, h *harness.Harness, ns, reason, inMessage, told string) *krttexplain.Report {
	t.Helper()
	var rep *krttexplain.Report
	harness.Await(t, explainWait, "Machine "+ns+"/m1 settled", func(ctx context.Context) error {
		r, err := machine.Explain(ctx, h.Client, h.Set, client.ObjectKey{Namespace: ns, Name: "m1"}, time.Now().UTC())
		if err != nil {
			return err
		}
		if reason != "" && (r.Deleting == nil || r.Deleting.Reason != reason || !strings.Contains(r.Deleting.Message, inMessage)) {
			return fmt.Errorf("Deleting = %+v", r.Deleting)
		}
		if r.Fires == nil || r.LastTransition == nil || r.LastTransition.Row != r.Fires.Row {
			return fmt.Errorf("fires %+v, last transition %+v", r.Fires, r.LastTransition)
		}
		// Events are recorded on state changes (and failures): the newest
		// is the one that brought the Machine into its state. A Machine
		// still in the initial state has changed none.
		if r.State == h.Set.InitialState && len(r.Events) == 0 {
			rep = r
			return nil
		}
		if told != "" {
			if len(r.Events) == 0 || r.Events[len(r.Events)-1].Reason != told {
				return fmt.Errorf("newest Event is not %s: %+v", told, r.Events)
			}
			rep = r
			return nil
		}
		if st := h.Set.State(r.State); st == nil || st.Quiet {
			return fmt.Errorf("state %s is quiet in the tables: no Event of its own tells it settled", r.State)
		}
		if len(r.Events) == 0 || !strings.Contains(r.Events[len(r.Events)-1].Note, " → "+r.State+" (") {
			return fmt.Errorf("newest Event is not about entering state %s: %+v", r.State, r.Events)
		}
		rep = r
		return nil
	})
	return rep
}

// settledOnRepeat wakes the Machine and waits until a reconcile decided
// again in the same state (its trace is published once its status write,
// if any, landed): the reconcile that entered the state may have run
// several rows at once (run to completion, status.lastTransition.via),
// and a repeat whose message differs replaces them, at a time a golden
// must not depend on; a repeat with the same result keeps them.
func settledOnRepeat(t *testing.T, h *harness.Harness, ns string) {
	t.Helper()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}
	harness.Must(t, h.Client.Get(context.Background(), client.ObjectKeyFromObject(m), m))
	key := types.NamespacedName{Namespace: ns, Name: "m1"}
	state, seen := m.Status.State, len(h.Traces(key))
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{"specs.krtt.dev/nudge":%q}}}`,
		time.Now().UTC().Format(time.RFC3339Nano)))
	harness.Must(t, h.Client.Patch(context.Background(), m, patch))
	harness.Await(t, explainWait, "Machine "+ns+"/m1 decided again in its state", func(context.Context) error {
		for _, tr := range h.Traces(key)[seen:] {
			if tr.From == state && tr.To == state && tr.Unwritten == "" {
				return nil
			}
		}
		return fmt.Errorf("no reconcile in state %s since the nudge", state)
	})
}

// explainText runs krtt explain machine m1 through the command line and
// keeps only the newest Event: how many Events a Machine collected on the
// way depends on timing, the newest one does not.
func explainText(t *testing.T, kubeconfig, ns string) string {
	t.Helper()
	code, out, errOut := krtt(t, "explain", "machine", "m1", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
	if code != 0 {
		t.Fatalf("explain -o json: exit %d\n%s%s", code, out, errOut)
	}
	var rep krttexplain.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("explain -o json: %v\n%s", err, out)
	}
	code, out, errOut = krtt(t, "explain", "machine", "m1", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Fatalf("explain: exit %d\n%s%s", code, out, errOut)
	}
	// The text lists Events last; keep the header and the newest one.
	head, events, ok := strings.Cut(out, "\nEvents (last ")
	if !ok {
		t.Fatalf("no Events section:\n%s", out)
	}
	lines := strings.Split(strings.TrimRight(events, "\n"), "\n")
	return mask(head + "\nEvents (last " + lines[0] + "\n  ...\n" + lines[len(lines)-1] + "\n")
}

// TestExplainMachineGolden runs the operator in-process on envtest, brings
// Machines into five states and compares krtt explain machine with goldens.
func TestExplainMachineGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under testing.Short: needs envtest")
	}
	h, err := harness.Start()
	if err != nil {
		t.Fatalf("start envtest (make test builds bin/k8s): %v", err)
	}
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Error(err)
		}
	})
	kubeconfig := kubeconfigFor(t, h)
	ctx := context.Background()

	t.Run("MachineSetWaitingForTemplate", func(t *testing.T) { explainMachineSetWaitingForTemplate(t, h, kubeconfig) })
	t.Run("MachineDeploymentScalingUp", func(t *testing.T) { explainMachineDeploymentScalingUp(t, h, kubeconfig) })

	t.Run("Running", func(t *testing.T) {
		ns := localcp.UniqueName("explain-running")
		runningMachine(t, h, ns)
		// N31 enters Running quietly and tells Cluster API's Event.
		settledTold(t, h, ns, "", "", "SuccessfulSetNodeRef")
		settledOnRepeat(t, h, ns)
		goldenCompare(t, "running.txt", explainText(t, kubeconfig, ns))
	})

	t.Run("WaitingForPreDrainHook", func(t *testing.T) {
		ns := localcp.UniqueName("explain-hook")
		runningMachine(t, h, ns, func(m *clusterv1.Machine) {
			m.Annotations = map[string]string{clusterv1.PreDrainDeleteHookAnnotationPrefix + "backup": "team-a"}
		})
		deleteMachine(t, h, ns)
		// The deletion's steps are quiet: the newest Event is the Node found.
		rep := settledTold(t, h, ns, clusterv1.DeletingWaitingForPreDrainHookReason, "backup", "SuccessfulSetNodeRef")
		if rep.Fires.Row != "D03" || len(rep.Releases) == 0 || rep.Releases[0].Row != "D04" {
			t.Errorf("fires %s, releases %+v; want D03 released by preDrainHooks=false → D04", rep.Fires.Row, rep.Releases)
		}
		settledOnRepeat(t, h, ns)
		goldenCompare(t, "waiting-for-pre-drain-hook.txt", explainText(t, kubeconfig, ns))
	})

	t.Run("DrainingNodeBlockedByPDB", func(t *testing.T) {
		ns := localcp.UniqueName("explain-pdb")
		node := runningMachine(t, h, ns)
		_, err := h.RunningPod(ctx, ns, "db", node.Name, map[string]string{"app": "db"})
		harness.Must(t, err)
		blockingPDB(t, h, ns, "db")
		deleteMachine(t, h, ns)
		rep := settledTold(t, h, ns, clusterv1.DeletingDrainingNodeReason, "disruption budget", "SuccessfulSetNodeRef")
		if rep.Fires.Row != "D05" || rep.WaitingOn == nil || rep.WaitingOn.Since == nil || rep.WaitingOn.TimeoutSeconds != 0 {
			t.Errorf("fires %+v waiting on %+v", rep.Fires, rep.WaitingOn)
		}
		settledOnRepeat(t, h, ns)
		got := explainText(t, kubeconfig, ns)
		goldenCompare(t, "draining-blocked-by-pdb.txt", got)
		t.Logf("krtt explain machine m1 -n %s:\n%s", ns, got)
	})

	t.Run("WaitingForVolumeDetach", func(t *testing.T) {
		ns := localcp.UniqueName("explain-volume")
		node := runningMachine(t, h, ns, func(m *clusterv1.Machine) {
			m.Spec.Deletion.NodeVolumeDetachTimeoutSeconds = ptr.To[int32](3600)
		})
		harness.Await(t, explainWait, "volume attached", func(ctx context.Context) error {
			n := &corev1.Node{}
			if err := h.Client.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
				return err
			}
			n.Status.VolumesAttached = []corev1.AttachedVolume{{Name: "kubernetes.io/csi/sim^vol-1", DevicePath: "/dev/x"}}
			return h.Client.Status().Update(ctx, n)
		})
		deleteMachine(t, h, ns)
		// The drain of a Node without Pods ends at once and tells so.
		rep := settledTold(t, h, ns, clusterv1.DeletingWaitingForVolumeDetachReason, "vol-1", "SuccessfulDrainNode")
		if rep.WaitingOn == nil || rep.WaitingOn.EndsAt == nil || rep.WaitingOn.Overdue {
			t.Errorf("waiting on %+v; want a timeout one hour after the wait started", rep.WaitingOn)
		}
		settledOnRepeat(t, h, ns)
		goldenCompare(t, "waiting-for-volume-detach.txt", explainText(t, kubeconfig, ns))
	})

	t.Run("WaitingForInfrastructureDeletion", func(t *testing.T) {
		ns := localcp.UniqueName("explain-infra")
		runningMachine(t, h, ns)
		// A provider finalizer keeps the infrastructure object while it is deleted.
		harness.Await(t, explainWait, "SimMachine finalizer", func(ctx context.Context) error {
			sm := &simv1.SimMachine{}
			if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m1"}, sm); err != nil {
				return err
			}
			sm.Finalizers = append(sm.Finalizers, "sim.krtt.dev/cleanup")
			return h.Client.Update(ctx, sm)
		})
		deleteMachine(t, h, ns)
		// The deletion's steps are quiet: the newest Event is the drain's
		// end; the volume wait of a Node without volumes never waited, so it
		// tells nothing.
		settledTold(t, h, ns, clusterv1.DeletingWaitingForInfrastructureDeletionReason, "SimMachine", "SuccessfulDrainNode")
		settledOnRepeat(t, h, ns)
		goldenCompare(t, "waiting-for-infrastructure-deletion.txt", explainText(t, kubeconfig, ns))
	})

	// A Node that went NotReady: the wait of state Unhealthy counts from
	// status.health.unhealthySince and ends at spec.health.healthTimeoutSeconds.
	t.Run("Unhealthy", func(t *testing.T) {
		ns := localcp.UniqueName("explain-unhealthy")
		node := runningMachine(t, h, ns)
		harness.Await(t, explainWait, "Node NotReady", func(ctx context.Context) error {
			n := &corev1.Node{}
			if err := h.Client.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
				return err
			}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
				Message: "container runtime is down", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
			return h.Client.Status().Update(ctx, n)
		})
		var rep *krttexplain.Report
		harness.Await(t, explainWait, "Machine Unhealthy", func(ctx context.Context) error {
			rep = settled(t, h, ns, "", "")
			if rep.State != "Unhealthy" {
				return fmt.Errorf("state %s", rep.State)
			}
			return nil
		})
		if w := rep.WaitingOn; w == nil || w.StartField != "status.health.unhealthySince" || w.Since == nil ||
			w.TimeoutField != "spec.health.healthTimeoutSeconds" || w.TimeoutSeconds != 600 || w.EndsAt == nil || w.Overdue {
			t.Errorf("waiting on %+v; want since status.health.unhealthySince, ending 600s later", rep.WaitingOn)
		}
		settledOnRepeat(t, h, ns)
		goldenCompare(t, "unhealthy.txt", explainText(t, kubeconfig, ns))
	})

	// A drain held by a PodDisruptionBudget on a Node that went NotReady two
	// minutes ago: besides the drain's own wait, the report shows since when
	// the Node is unhealthy and when its 5 minutes end (row D22 forces the
	// deletion then).
	t.Run("DrainingNodeUnhealthyNode", func(t *testing.T) {
		ns := localcp.UniqueName("explain-forced")
		node := runningMachine(t, h, ns)
		_, err := h.RunningPod(ctx, ns, "db", node.Name, map[string]string{"app": "db"})
		harness.Must(t, err)
		blockingPDB(t, h, ns, "db")
		notReadySince := metav1.NewTime(time.Now().Add(-2 * time.Minute))
		harness.Await(t, explainWait, "Node NotReady", func(ctx context.Context) error {
			n := &corev1.Node{}
			if err := h.Client.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
				return err
			}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
				Message: "container runtime is down", LastHeartbeatTime: metav1.Now(), LastTransitionTime: notReadySince}}
			return h.Client.Status().Update(ctx, n)
		})
		// Deleted once it is Unhealthy, so the deletion starts from there.
		harness.Await(t, explainWait, "Machine Unhealthy", func(ctx context.Context) error {
			m, err := h.Machine(ctx, ns, "m1")
			if err != nil {
				return err
			}
			if m.Status.State != "Unhealthy" {
				return fmt.Errorf("state %q", m.Status.State)
			}
			return nil
		})
		deleteMachine(t, h, ns)
		rep := settledTold(t, h, ns, clusterv1.DeletingDrainingNodeReason, "disruption budget", "Unhealthy")
		if w := rep.WaitingOn; w == nil || w.Forced == nil || w.Forced.Row != "D22" || w.Forced.Since == nil ||
			!w.Forced.Since.Equal(notReadySince.Time.Truncate(time.Second)) || w.Forced.Overdue ||
			!w.Forced.EndsAt.Equal(w.Forced.Since.Add(5*time.Minute)) {
			t.Errorf("waiting on %+v; want forced by D22 5m after the Node went NotReady", rep.WaitingOn)
		}
		settledOnRepeat(t, h, ns)
		goldenCompare(t, "draining-node-unhealthy.txt", explainText(t, kubeconfig, ns))
	})

	// A Machine waiting for its bootstrap data counts towards its creation
	// timeout from its creationTimestamp.
	t.Run("PendingCreationTimeout", func(t *testing.T) {
		ns := localcp.UniqueName("explain-pending")
		harness.Must(t, h.Namespace(ctx, ns))
		_, err := h.Cluster(ctx, ns, "c1")
		harness.Must(t, err)
		_, err = h.MachineObjects(ctx, ns, "c1", "m1", func(m *clusterv1.Machine) {
			m.Spec.Health.CreationTimeoutSeconds = ptr.To[int32](900)
		})
		harness.Must(t, err)
		rep := settled(t, h, ns, "", "")
		if w := rep.WaitingOn; rep.State != "Pending" || w == nil || w.StartField != "metadata.creationTimestamp" || w.Since == nil ||
			w.TimeoutSeconds != 900 || w.EndsAt == nil || !strings.Contains(w.Step, "bootstrap data") {
			t.Errorf("state %s, waiting on %+v; want the creation wait of 900s from creationTimestamp", rep.State, rep.WaitingOn)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		code, out, _ := krtt(t, "explain", "machine", "nope", "-n", "explain-running", "--kubeconfig", kubeconfig)
		if code != 1 || !strings.Contains(out, "not found") {
			t.Errorf("exit %d, want 1 and not found:\n%s", code, out)
		}
	})
}

func TestExplainTable(t *testing.T) {
	dir := t.TempDir()
	cov := write(t, dir, "coverage.json", `{"machine-deletion": {"D05": ["features/machine_deletion.feature:12 Drain blocked by a PDB"], "D99": ["x"]}}`)
	code, out, errOut := krtt(t, "explain", "table", "machine-deletion", "--coverage", cov)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	goldenCompare(t, "table-deletion-coverage.txt", out)

	code, out, _ = krtt(t, "explain", "table", "machine-deletion", "--coverage", filepath.Join(dir, "missing.json"))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	contains(t, "explain table without coverage", out, "coverage unknown (no coverage file)", "D05 (line ", "covered: coverage unknown")

	code, out, _ = krtt(t, "explain", "table", "machine-deletion", "-o", "json", "--coverage", cov)
	var rep krttexplain.TableReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.CoverageKnown || rep.Covered != 1 || len(rep.UnknownRows) != 1 {
		t.Errorf("explain table -o json: exit %d, %+v\n%s", code, rep, out)
	}

	code, _, errOut = krtt(t, "explain", "table", "nope")
	if code != 2 || !strings.Contains(errOut, "machine-deletion") {
		t.Errorf("unknown table: exit %d\n%s", code, errOut)
	}
	code, _, _ = krtt(t, "explain", "machine")
	if code != 2 {
		t.Errorf("explain machine without NAME: exit %d, want 2", code)
	}
}
