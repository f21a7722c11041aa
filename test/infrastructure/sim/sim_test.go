package sim_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/leakcheck"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

var (
	env *localcp.ControlPlane
	c   client.Client
)

const (
	wait      = poll.DefaultTimeout // Await scales it
	graceCap  = 2 * time.Second
	heartbeat = 2 * time.Second
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.UseDevMode(false), zap.Level(zapLevel())))
	var err error
	env, err = localcp.ForTest()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	c = env.Client
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The sim acts only on what carries harness.Filter (the helpers below
	// label what they create), as other packages' sims may share the
	// control plane.
	mgr, err := harness.NewSimManager(ctx, env.Config, sim.Options{KubeletGracePeriodCap: graceCap, HeartbeatInterval: heartbeat, WorkloadClusters: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	// The per-test leak checks (workloadCluster) must not count the rest of
	// this manager's start as theirs.
	if err := leakcheck.Started(ctx, mgr); err != nil {
		fmt.Fprintln(os.Stderr, "sim manager:", err)
		return 1
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	if err := leakcheck.AfterAll(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

func zapLevel() zapcore.Level {
	if os.Getenv("KRTT_TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// namespace creates a fresh namespace per test run (so -count=N works on
// one control plane) and returns its name.
func namespace(t *testing.T, base string) string {
	t.Helper()
	name := localcp.UniqueName(base)
	harness.Must(t, c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	return name
}

func simMachine(t *testing.T, ns, name string, mutate ...func(*simv1.SimMachine)) *simv1.SimMachine {
	t.Helper()
	// The cluster-name label is what a Machine sets when it adopts the
	// SimMachine; the cloud joins the Node to that Cluster's cluster (here
	// the management cluster: the Cluster has no kubeconfig Secret).
	sm := &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{clusterv1.ClusterNameLabel: "self-hosted"}}}
	for _, fn := range mutate {
		fn(sm)
	}
	harness.Must(t, c.Create(context.Background(), harness.Label(sm)))
	return sm
}

func getSM(ctx context.Context, ns, name string) (*simv1.SimMachine, error) {
	sm := &simv1.SimMachine{}
	return sm, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sm)
}

func provisioned(t *testing.T, ns, name string) *simv1.SimMachine {
	t.Helper()
	var out *simv1.SimMachine
	harness.Await(t, wait, "SimMachine "+name+" provisioned", func(ctx context.Context) error {
		sm, err := getSM(ctx, ns, name)
		if err != nil {
			return err
		}
		if !ptr.Deref(sm.Status.Initialization.Provisioned, false) || !meta.IsStatusConditionTrue(sm.Status.Conditions, "Ready") {
			return fmt.Errorf("status %+v", sm.Status)
		}
		out = sm
		return nil
	})
	return out
}

// readyNode waits until the sim registered the SimMachine's Node with the
// given Ready status.
func readyNode(t *testing.T, ns, name string, status corev1.ConditionStatus) *corev1.Node {
	t.Helper()
	return nodeWithCondition(t, ns, name, corev1.NodeReady, status)
}

// nodeWithCondition waits until the Node of the SimMachine reports the
// condition with the status.
func nodeWithCondition(t *testing.T, ns, name string, ctype corev1.NodeConditionType, status corev1.ConditionStatus) *corev1.Node {
	t.Helper()
	var out *corev1.Node
	harness.Await(t, wait, "Node of "+name+" "+string(ctype)+"="+string(status), func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: sim.NodeName(ns, name)}, n); err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == ctype && cond.Status == status {
				out = n
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", n.Status.Conditions)
	})
	return out
}

func pod(ns, name, node string, labels map[string]string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}
	for _, fn := range mutate {
		fn(p)
	}
	return p
}

func runningPod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	harness.Await(t, wait, "Pod "+p.Name+" Running and Ready", func(ctx context.Context) error {
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if got.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %q", got.Status.Phase)
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Ready: %+v", got.Status.Conditions)
	})
}

func gone(t *testing.T, what string, obj client.Object) {
	t.Helper()
	harness.Await(t, wait, what+" gone", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there (deletionTimestamp %v, finalizers %v)", obj.GetDeletionTimestamp(), obj.GetFinalizers())
	})
}

func TestBootstrapWritesSecretAndStatus(t *testing.T) {
	ns := namespace(t, "sim-bootstrap")
	ctx := context.Background()
	cfg := harness.Label(&simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b1"}})
	harness.Must(t, c.Create(ctx, cfg))
	harness.Await(t, wait, "bootstrap status", func(ctx context.Context) error {
		got := &simv1.SimBootstrapConfig{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cfg), got); err != nil {
			return err
		}
		if ptr.Deref(got.Status.DataSecretName, "") != "b1-bootstrap" || !ptr.Deref(got.Status.Initialization.DataSecretCreated, false) ||
			!meta.IsStatusConditionTrue(got.Status.Conditions, "Ready") {
			return fmt.Errorf("status %+v", got.Status)
		}
		cfg = got
		return nil
	})
	s := &corev1.Secret{}
	harness.Must(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b1-bootstrap"}, s))
	if !strings.Contains(string(s.Data["value"]), "#cloud-config") {
		t.Errorf("secret value = %q", s.Data["value"])
	}
	if owner := metav1.GetControllerOf(s); owner == nil || owner.UID != cfg.UID || owner.Kind != "SimBootstrapConfig" {
		t.Errorf("secret owner = %+v", owner)
	}
}

// A deleted data Secret is written again: the bootstrap reconciler wakes on
// its Secret's deletion (and on nothing else of it).
func TestBootstrapRewritesADeletedSecret(t *testing.T) {
	ns := namespace(t, "sim-bootstrap-rewrite")
	ctx := context.Background()
	cfg := harness.Label(&simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b2"}})
	harness.Must(t, c.Create(ctx, cfg))
	key := client.ObjectKey{Namespace: ns, Name: "b2-bootstrap"}
	first := &corev1.Secret{}
	harness.Await(t, wait, "data secret", func(ctx context.Context) error { return c.Get(ctx, key, first) })
	harness.Must(t, c.Delete(ctx, first))
	harness.Await(t, wait, "data secret written again", func(ctx context.Context) error {
		s := &corev1.Secret{}
		if err := c.Get(ctx, key, s); err != nil {
			return err
		}
		if s.UID == first.UID {
			return fmt.Errorf("still the first secret (deletionTimestamp %v)", s.DeletionTimestamp)
		}
		return nil
	})
}

// The simulated control plane reports by the contract whether it is managed
// outside the Cluster's Machines, and an externally managed one reports
// itself initialized at once; one made of Machines leaves that to the test.
func TestControlPlaneReportsItsKindAndInitialization(t *testing.T) {
	ns := namespace(t, "sim-control-plane")
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		external bool
	}{{"external", true}, {"machines", false}} {
		cp := harness.Label(&simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name},
			Spec: simv1.SimControlPlaneSpec{ExternallyManaged: ptr.To(tc.external)}})
		harness.Must(t, c.Create(ctx, cp))
		harness.Await(t, wait, "control plane status "+tc.name, func(ctx context.Context) error {
			got := &simv1.SimControlPlane{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cp), got); err != nil {
				return err
			}
			st := got.Status
			if st.ExternalManagedControlPlane == nil || *st.ExternalManagedControlPlane != tc.external || !meta.IsStatusConditionTrue(st.Conditions, "Ready") {
				return fmt.Errorf("status %+v", st)
			}
			if initialized := ptr.Deref(st.Initialization.ControlPlaneInitialized, false); initialized != tc.external {
				return fmt.Errorf("controlPlaneInitialized %v, want %v", initialized, tc.external)
			}
			return nil
		})
	}
}

// TestInfraClusterProvisions: the sim gives a SimCluster an endpoint and
// reports it provisioned by the contract; holdProvisioning keeps it
// unprovisioned until released, noEndpoint provisions it without one.
func TestInfraClusterProvisions(t *testing.T) {
	ns := namespace(t, "sim-infra-cluster")
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		knobs         simv1.SimClusterKnobs
		wantEndpoint  simv1.SimAPIEndpoint
		wantProvision bool
	}{
		{"plain", simv1.SimClusterKnobs{}, simv1.SimAPIEndpoint{Host: "plain." + ns + ".sim.krtt.dev", Port: sim.SimEndpointPort}, true},
		{"no-endpoint", simv1.SimClusterKnobs{NoEndpoint: true}, simv1.SimAPIEndpoint{}, true},
		{"held", simv1.SimClusterKnobs{HoldProvisioning: true}, simv1.SimAPIEndpoint{}, false},
	} {
		sc := harness.Label(&simv1.SimCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}, Spec: simv1.SimClusterSpec{Sim: tc.knobs}})
		harness.Must(t, c.Create(ctx, sc))
		expect := func(what string, endpoint simv1.SimAPIEndpoint, provisioned bool) {
			harness.Await(t, wait, "SimCluster "+tc.name+" "+what, func(ctx context.Context) error {
				got := &simv1.SimCluster{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(sc), got); err != nil {
					return err
				}
				p := got.Status.Initialization.Provisioned
				if p == nil || *p != provisioned || meta.IsStatusConditionTrue(got.Status.Conditions, "Ready") != provisioned {
					return fmt.Errorf("status %+v, want provisioned %v", got.Status, provisioned)
				}
				if got.Spec.ControlPlaneEndpoint != endpoint {
					return fmt.Errorf("endpoint %+v, want %+v", got.Spec.ControlPlaneEndpoint, endpoint)
				}
				if n := len(got.Status.FailureDomains); (n == 3) != provisioned {
					return fmt.Errorf("%d failure domains, provisioned %v", n, provisioned)
				}
				return nil
			})
		}
		expect("first", tc.wantEndpoint, tc.wantProvision)
		if tc.knobs.HoldProvisioning {
			harness.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
				got := &simv1.SimCluster{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(sc), got); err != nil {
					return err
				}
				got.Spec.Sim.HoldProvisioning = false
				return c.Update(ctx, got)
			}))
			expect("released", simv1.SimAPIEndpoint{Host: "held." + ns + ".sim.krtt.dev", Port: sim.SimEndpointPort}, true)
		}
	}
}

func TestCloudProvisionsAndRegistersNode(t *testing.T) {
	ns := namespace(t, "sim-cloud")
	for _, tc := range []struct {
		name  string
		delay int32
		fd    string
	}{{"fast", 0, ""}, {"slow", 1, "zone-b"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			created := simMachine(t, ns, tc.name, func(sm *simv1.SimMachine) {
				sm.Spec.Sim.ProvisionDelaySeconds = tc.delay
				sm.Spec.FailureDomain = tc.fd
			})
			sm := provisioned(t, ns, tc.name)
			ready := meta.FindStatusCondition(sm.Status.Conditions, "Ready")
			if earliest := created.CreationTimestamp.Add(time.Duration(tc.delay) * time.Second); ready.LastTransitionTime.Time.Before(earliest) {
				t.Errorf("provisioned at %s, before creation %s + %ds", ready.LastTransitionTime, created.CreationTimestamp, tc.delay)
			}
			if got := ptr.Deref(sm.Spec.ProviderID, ""); got != "sim://"+ns+"/"+tc.name {
				t.Errorf("providerID = %q", got)
			}
			wantFD := tc.fd
			if wantFD == "" {
				wantFD = "sim-zone-a"
			}
			if sm.Status.FailureDomain != wantFD {
				t.Errorf("failureDomain = %q, want %q", sm.Status.FailureDomain, wantFD)
			}
			if len(sm.Status.Addresses) != 2 || sm.Status.Addresses[0].Type != "InternalIP" || !strings.HasPrefix(sm.Status.Addresses[0].Address, "10.") ||
				sm.Status.Addresses[1].Type != "Hostname" || sm.Status.Addresses[1].Address != tc.name {
				t.Errorf("addresses = %+v", sm.Status.Addresses)
			}
			if !strings.Contains(strings.Join(sm.Finalizers, ","), sim.CloudFinalizer) {
				t.Errorf("finalizers = %v", sm.Finalizers)
			}
			n := readyNode(t, ns, tc.name, corev1.ConditionTrue)
			if n.Name != ns+"-"+tc.name || n.Spec.ProviderID != "sim://"+ns+"/"+tc.name ||
				n.Labels[corev1.LabelHostname] != n.Name || n.Labels[sim.NodeLabel] != "true" {
				t.Errorf("node %s providerID %q labels %v", n.Name, n.Spec.ProviderID, n.Labels)
			}
			// A SimMachine without a Machine.
			awaitKubeletVersion(t, ns, tc.name, sim.DefaultKubeletVersion)
		})
	}
}

// The simulated kubelet reports the spec.version of the Machine that owns
// its SimMachine, as a real Node runs what its Machine asked for.
func TestKubeletReportsTheMachineVersion(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "sim-version")
	// No operator runs here: the Machine is only read.
	m := harness.Label(&clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "versioned"},
		Spec: clusterv1.MachineSpec{ClusterName: "self-hosted", Version: "v1.36.2",
			Bootstrap:         clusterv1.MachineBootstrap{DataSecretName: ptr.To("versioned")},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: "versioned"}},
	})
	harness.Must(t, c.Create(ctx, m))
	simMachine(t, ns, "versioned", func(sm *simv1.SimMachine) {
		sm.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}}
	})
	readyNode(t, ns, "versioned", corev1.ConditionTrue)
	awaitKubeletVersion(t, ns, "versioned", "v1.36.2")
}

// awaitKubeletVersion waits until the Node of the SimMachine reports the
// kubelet version. The kubelet's own heartbeat may report Ready before the
// cloud's registration has written the Node's info, so Ready alone does not
// mean the version is there; once written it never changes.
func awaitKubeletVersion(t *testing.T, ns, name, want string) {
	t.Helper()
	harness.Await(t, wait, "kubelet version "+want, func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: sim.NodeName(ns, name)}, n); err != nil {
			return err
		}
		if v := n.Status.NodeInfo.KubeletVersion; v != want {
			return fmt.Errorf("kubelet version %q, want %q", v, want)
		}
		return nil
	})
}

func TestCloudFailProvisioning(t *testing.T) {
	ns := namespace(t, "sim-fail")
	simMachine(t, ns, "f1", func(sm *simv1.SimMachine) {
		sm.Spec.Sim.FailProvisioning = true
		sm.Spec.Sim.FailReason = "NoCapacity"
	})
	simMachine(t, ns, "f2", func(sm *simv1.SimMachine) { sm.Spec.Sim.FailProvisioning = true })
	for name, reason := range map[string]string{"f1": "NoCapacity", "f2": "ProvisioningFailed"} {
		harness.Await(t, wait, name+" Ready=False", func(ctx context.Context) error {
			sm, err := getSM(ctx, ns, name)
			if err != nil {
				return err
			}
			cond := meta.FindStatusCondition(sm.Status.Conditions, "Ready")
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reason {
				return fmt.Errorf("Ready = %+v", cond)
			}
			if sm.Status.Initialization.Provisioned != nil || sm.Spec.ProviderID != nil {
				return fmt.Errorf("provisioned anyway: %+v", sm)
			}
			return nil
		})
		if err := c.Get(context.Background(), client.ObjectKey{Name: sim.NodeName(ns, name)}, &corev1.Node{}); !apierrors.IsNotFound(err) {
			t.Errorf("Node registered for a failed machine: %v", err)
		}
	}
}

func TestCloudDeletionWaitsDeleteDelay(t *testing.T) {
	ns := namespace(t, "sim-delete")
	ctx := context.Background()
	simMachine(t, ns, "d1", func(sm *simv1.SimMachine) { sm.Spec.Sim.DeleteDelaySeconds = 2 })
	sm := provisioned(t, ns, "d1")
	readyNode(t, ns, "d1", corev1.ConditionTrue)
	harness.Must(t, c.Delete(ctx, sm))
	harness.Must(t, c.Get(ctx, client.ObjectKeyFromObject(sm), sm))
	if sm.DeletionTimestamp.IsZero() {
		t.Fatal("no deletionTimestamp: the cloud finalizer is missing")
	}
	// How long the cloud holds it is TestReleaseWait's (a clock-free unit
	// test); here: the cloud releases it once the delay has run out.
	gone(t, "SimMachine d1", sm)
	if err := c.Get(ctx, client.ObjectKey{Name: sim.NodeName(ns, "d1")}, &corev1.Node{}); err != nil {
		t.Errorf("the cloud must leave the Node to the operator: %v", err)
	}
}

func TestKubeletRunsAndFinishesPods(t *testing.T) {
	ns := namespace(t, "sim-kubelet")
	ctx := context.Background()
	simMachine(t, ns, "k1")
	node := readyNode(t, ns, "k1", corev1.ConditionTrue)

	p30 := pod(ns, "grace30", node.Name, nil)
	p1 := pod(ns, "grace1", node.Name, nil, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1) })
	for _, p := range []*corev1.Pod{p30, p1} {
		harness.Must(t, c.Create(ctx, p))
	}
	for _, p := range []*corev1.Pod{p30, p1} {
		runningPod(t, p)
	}
	for _, p := range []*corev1.Pod{p30, p1} {
		harness.Must(t, c.Delete(ctx, p))
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(p30), got); err == nil && got.DeletionTimestamp.IsZero() {
		t.Fatal("a Pod on a Node is deleted gracefully")
	}
	// The cap (graceCap) ends a 30s grace period early: the Pod must be gone
	// well before its own 30s would have run out. Not Scaled: the bound is
	// that grace period, which a slow machine does not stretch.
	if err := poll.Until(ctx, 25*time.Second, func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(p30), got)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still terminating (err %v); the grace period cap is %s", err, graceCap)
	}); err != nil {
		t.Fatalf("Pod grace30 not gone before its grace period ran out: %v", err)
	}
	gone(t, "Pod grace1", p1)

	// The heartbeat moves on.
	first := readyNode(t, ns, "k1", corev1.ConditionTrue)
	hb := func(n *corev1.Node) metav1.Time {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.LastHeartbeatTime
			}
		}
		return metav1.Time{}
	}
	harness.Await(t, wait, "heartbeat", func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(first), n); err != nil {
			return err
		}
		if !hb(n).After(hb(first).Time) {
			return fmt.Errorf("lastHeartbeatTime still %s", hb(n))
		}
		return nil
	})
}

func TestKubeletNodeNotReadyKnob(t *testing.T) {
	ns := namespace(t, "sim-notready")
	ctx := context.Background()
	simMachine(t, ns, "n1", func(sm *simv1.SimMachine) { sm.Spec.Sim.NodeNotReady = true })
	n := readyNode(t, ns, "n1", corev1.ConditionFalse)
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Reason != "KubeletNotReady" {
			t.Errorf("reason = %q", cond.Reason)
		}
	}
	harness.Await(t, wait, "clear nodeNotReady", func(ctx context.Context) error {
		sm, err := getSM(ctx, ns, "n1")
		if err != nil {
			return err
		}
		sm.Spec.Sim.NodeNotReady = false
		return c.Update(ctx, sm)
	})
	readyNode(t, ns, "n1", corev1.ConditionTrue)
	_ = ctx
}

// spec.sim.nodeConditions plays node-problem-detector: listed types are
// True, a type taken off the list turns False again.
func TestKubeletNodeConditionsKnob(t *testing.T) {
	ns := namespace(t, "sim-conditions")
	simMachine(t, ns, "n1", func(sm *simv1.SimMachine) { sm.Spec.Sim.NodeConditions = []string{"KernelDeadlock"} })
	readyNode(t, ns, "n1", corev1.ConditionTrue)
	nodeWithCondition(t, ns, "n1", "KernelDeadlock", corev1.ConditionTrue)
	harness.Await(t, wait, "clear nodeConditions", func(ctx context.Context) error {
		sm, err := getSM(ctx, ns, "n1")
		if err != nil {
			return err
		}
		sm.Spec.Sim.NodeConditions = nil
		return c.Update(ctx, sm)
	})
	n := nodeWithCondition(t, ns, "n1", "KernelDeadlock", corev1.ConditionFalse)
	if ready := readyNode(t, ns, "n1", corev1.ConditionTrue); len(n.Status.Conditions) != 5 || ready == nil {
		t.Errorf("conditions %+v, want Ready, the three pressures and KernelDeadlock", n.Status.Conditions)
	}
}

func TestCSIAttachesAndDetaches(t *testing.T) {
	ns := namespace(t, "sim-csi")
	ctx := context.Background()
	simMachine(t, ns, "v1")
	node := readyNode(t, ns, "v1", corev1.ConditionTrue)
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}}}
	harness.Must(t, c.Create(ctx, pvc))
	p := pod(ns, "db", node.Name, nil, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	})
	harness.Must(t, c.Create(ctx, p))

	pvName := "pv-" + ns + "-data"
	vaName := sim.VolumeAttachmentName(pvName, node.Name)
	unique := corev1.UniqueVolumeName("kubernetes.io/csi/sim.csi.krtt.dev^" + ns + "-data")
	harness.Await(t, wait, "volume attached", func(ctx context.Context) error {
		got := &corev1.PersistentVolumeClaim{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pvc), got); err != nil {
			return err
		}
		if got.Spec.VolumeName != pvName || got.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("PVC volumeName %q phase %q", got.Spec.VolumeName, got.Status.Phase)
		}
		pv := &corev1.PersistentVolume{}
		if err := c.Get(ctx, client.ObjectKey{Name: pvName}, pv); err != nil {
			return err
		}
		if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != sim.CSIDriver || pv.Spec.CSI.VolumeHandle != ns+"-data" ||
			pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "data" {
			return fmt.Errorf("PV spec %+v", pv.Spec)
		}
		va := &storagev1.VolumeAttachment{}
		if err := c.Get(ctx, client.ObjectKey{Name: vaName}, va); err != nil {
			return err
		}
		if !va.Status.Attached || va.Spec.Attacher != sim.CSIDriver || va.Spec.NodeName != node.Name || ptr.Deref(va.Spec.Source.PersistentVolumeName, "") != pvName {
			return fmt.Errorf("VolumeAttachment %+v", va)
		}
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
			return err
		}
		if len(n.Status.VolumesAttached) != 1 || n.Status.VolumesAttached[0].Name != unique {
			return fmt.Errorf("volumesAttached %+v", n.Status.VolumesAttached)
		}
		return nil
	})

	harness.Must(t, c.Delete(ctx, p))
	gone(t, "Pod db", p)
	harness.Await(t, wait, "volume detached", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Name: vaName}, &storagev1.VolumeAttachment{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("VolumeAttachment still there: %v", err)
		}
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
			return err
		}
		if len(n.Status.VolumesAttached) != 0 {
			return fmt.Errorf("volumesAttached %+v", n.Status.VolumesAttached)
		}
		return nil
	})
}

func TestDisruptionComputesAllowed(t *testing.T) {
	ns := namespace(t, "sim-pdb")
	ctx := context.Background()
	simMachine(t, ns, "p1")
	node := readyNode(t, ns, "p1", corev1.ConditionTrue)
	minAvailable := intstr.FromInt32(1)
	pdb := harness.Label(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}})
	harness.Must(t, c.Create(ctx, pdb))
	expect := func(expected, healthy, desired, allowed int32) {
		t.Helper()
		harness.Await(t, wait, fmt.Sprintf("PDB %d/%d/%d/%d", expected, healthy, desired, allowed), func(ctx context.Context) error {
			got := &policyv1.PodDisruptionBudget{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(pdb), got); err != nil {
				return err
			}
			st := got.Status
			if st.ObservedGeneration != got.Generation || st.ExpectedPods != expected || st.CurrentHealthy != healthy ||
				st.DesiredHealthy != desired || st.DisruptionsAllowed != allowed {
				return fmt.Errorf("status %+v (generation %d)", st, got.Generation)
			}
			return nil
		})
	}
	expect(0, 0, 1, 0)
	db1 := pod(ns, "db-1", node.Name, map[string]string{"app": "db"})
	harness.Must(t, c.Create(ctx, db1))
	runningPod(t, db1)
	expect(1, 1, 1, 0)

	// The Eviction API refuses while no disruption is allowed.
	evict := func(p *corev1.Pod) error {
		return c.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name}})
	}
	if err := evict(db1); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("eviction with disruptionsAllowed=0: %v", err)
	}

	db2 := pod(ns, "db-2", node.Name, map[string]string{"app": "db"})
	harness.Must(t, c.Create(ctx, db2))
	runningPod(t, db2)
	expect(2, 2, 1, 1)

	harness.Must(t, evict(db1))
	gone(t, "evicted Pod db-1", db1)
	expect(1, 1, 1, 0)
}

// setSim edits spec.sim of a SimMachine, retrying on conflicts.
func setSim(t *testing.T, ns, name string, mutate func(*simv1.SimBehavior)) {
	t.Helper()
	harness.Await(t, wait, "edit spec.sim of "+name, func(ctx context.Context) error {
		sm, err := getSM(ctx, ns, name)
		if err != nil {
			return err
		}
		mutate(&sm.Spec.Sim)
		return c.Update(ctx, sm)
	})
}

func readyCond(n *corev1.Node) corev1.NodeCondition {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond
		}
	}
	return corev1.NodeCondition{}
}

func unreachableTaints(n *corev1.Node) []string {
	var out []string
	for _, taint := range n.Spec.Taints {
		if taint.Key == corev1.TaintNodeUnreachable {
			out = append(out, string(taint.Effect))
		}
	}
	sort.Strings(out)
	return out
}

// TestKubeletNodeUnreachable: a dead kubelet stops heartbeating, its Node
// goes Ready=Unknown with the unreachable taints, a Pod deleted on it keeps
// its deletionTimestamp while the same Pod on a live Node finishes; clearing
// the knob brings the Node back and finishes the Pod.
func TestKubeletNodeUnreachable(t *testing.T) {
	ns := namespace(t, "sim-unreachable")
	ctx := context.Background()
	simMachine(t, ns, "dead")
	simMachine(t, ns, "alive")
	deadNode := readyNode(t, ns, "dead", corev1.ConditionTrue)
	aliveNode := readyNode(t, ns, "alive", corev1.ConditionTrue)
	stuck := pod(ns, "stuck", deadNode.Name, nil, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1) })
	control := pod(ns, "control", aliveNode.Name, nil, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1) })
	for _, p := range []*corev1.Pod{stuck, control} {
		harness.Must(t, c.Create(ctx, p))
		runningPod(t, p)
	}

	setSim(t, ns, "dead", func(b *simv1.SimBehavior) { b.NodeUnreachable = true })
	var lastBeat metav1.Time
	harness.Await(t, wait, "Node Ready=Unknown with the unreachable taints", func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(deadNode), n); err != nil {
			return err
		}
		ready := readyCond(n)
		if ready.Status != corev1.ConditionUnknown || ready.Reason != "NodeStatusUnknown" {
			return fmt.Errorf("Ready = %+v", ready)
		}
		if got := unreachableTaints(n); strings.Join(got, ",") != "NoExecute,NoSchedule" {
			return fmt.Errorf("unreachable taints %v (all: %+v)", got, n.Spec.Taints)
		}
		lastBeat = ready.LastHeartbeatTime
		return nil
	})

	harness.Must(t, c.Delete(ctx, stuck))
	harness.Must(t, c.Delete(ctx, control))
	// The live kubelet finishing its Pod shows the grace period (and the
	// cap) is over, and the heartbeat of the live Node moving past the last
	// one of the dead Node shows heartbeats are being sent.
	gone(t, "Pod control on the live Node", control)
	harness.Await(t, wait, "a heartbeat of the live Node after the dead Node's last", func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(aliveNode), n); err != nil {
			return err
		}
		if hb := readyCond(n).LastHeartbeatTime; !hb.After(lastBeat.Add(heartbeat)) {
			return fmt.Errorf("live heartbeat %s, dead Node's last %s", hb, lastBeat)
		}
		return nil
	})
	got := &corev1.Pod{}
	harness.Must(t, c.Get(ctx, client.ObjectKeyFromObject(stuck), got))
	if got.DeletionTimestamp.IsZero() {
		t.Fatal("the Pod on the unreachable Node has no deletionTimestamp")
	}
	n := &corev1.Node{}
	harness.Must(t, c.Get(ctx, client.ObjectKeyFromObject(deadNode), n))
	if ready := readyCond(n); !ready.LastHeartbeatTime.Equal(&lastBeat) || ready.Status != corev1.ConditionUnknown {
		t.Errorf("the dead kubelet posted status: %+v (last heartbeat was %s)", ready, lastBeat)
	}

	setSim(t, ns, "dead", func(b *simv1.SimBehavior) { b.NodeUnreachable = false })
	harness.Await(t, wait, "Node Ready again without the unreachable taints", func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(deadNode), n); err != nil {
			return err
		}
		if ready := readyCond(n); ready.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready = %+v", ready)
		}
		if got := unreachableTaints(n); len(got) > 0 {
			return fmt.Errorf("unreachable taints %v", got)
		}
		return nil
	})
	gone(t, "Pod stuck, once the kubelet is back", stuck)
}

// TestCloudVMGone: the VM vanishes behind a provisioned SimMachine: the
// Node goes, the failure is reported by the provider contract, provisioned
// stays true, and deletion releases at once (no VM to wait for).
func TestCloudVMGone(t *testing.T) {
	ns := namespace(t, "sim-vmgone")
	ctx := context.Background()
	simMachine(t, ns, "g1", func(sm *simv1.SimMachine) { sm.Spec.Sim.DeleteDelaySeconds = 3600 })
	provisioned(t, ns, "g1")
	node := readyNode(t, ns, "g1", corev1.ConditionTrue)

	setSim(t, ns, "g1", func(b *simv1.SimBehavior) { b.VMGone = true })
	gone(t, "Node of the vanished VM", node)
	var sm *simv1.SimMachine
	harness.Await(t, wait, "failureReason VMNotFound", func(ctx context.Context) error {
		got, err := getSM(ctx, ns, "g1")
		if err != nil {
			return err
		}
		if ptr.Deref(got.Status.FailureReason, "") != sim.VMNotFoundReason || !strings.Contains(ptr.Deref(got.Status.FailureMessage, ""), "no longer exists") {
			return fmt.Errorf("failureReason %v failureMessage %v", got.Status.FailureReason, got.Status.FailureMessage)
		}
		sm = got
		return nil
	})
	if !ptr.Deref(sm.Status.Initialization.Provisioned, false) {
		t.Errorf("provisioned = %v, want true", sm.Status.Initialization.Provisioned)
	}
	if ready := meta.FindStatusCondition(sm.Status.Conditions, "Ready"); ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != sim.VMNotFoundReason {
		t.Errorf("Ready = %+v", ready)
	}

	// Clearing the knob does not bring the VM back: the next reconcile
	// (made visible by the spec change being observed) registers no Node.
	setSim(t, ns, "g1", func(b *simv1.SimBehavior) { b.VMGone = false; b.ProvisionDelaySeconds = 1 })
	harness.Await(t, wait, "the cleared knob observed", func(ctx context.Context) error {
		got, err := getSM(ctx, ns, "g1")
		if err != nil {
			return err
		}
		if ready := meta.FindStatusCondition(got.Status.Conditions, "Ready"); ready == nil || ready.ObservedGeneration != got.Generation {
			return fmt.Errorf("Ready %+v, generation %d", ready, got.Generation)
		}
		if ptr.Deref(got.Status.FailureReason, "") != sim.VMNotFoundReason {
			return fmt.Errorf("failureReason cleared: %v", got.Status.FailureReason)
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Node came back for a vanished VM: %v", err)
	}

	harness.Must(t, c.Delete(ctx, sm))
	gone(t, "SimMachine g1 (deleteDelaySeconds 3600, but no VM left)", sm)
}

// spec.sim.interruptible makes a spot instance: status.interruptible once
// provisioned, following the knob after.
func TestCloudInterruptibleKnob(t *testing.T) {
	ns := namespace(t, "sim-spot")
	simMachine(t, ns, "s1", func(sm *simv1.SimMachine) { sm.Spec.Sim.Interruptible = true })
	if sm := provisioned(t, ns, "s1"); !sm.Status.Interruptible {
		// Provisioning reports it in the same write.
		t.Errorf("status.interruptible = false once provisioned, want true")
	}
	setSim(t, ns, "s1", func(b *simv1.SimBehavior) { b.Interruptible = false })
	harness.Await(t, wait, "status.interruptible false", func(ctx context.Context) error {
		got, err := getSM(ctx, ns, "s1")
		if err != nil {
			return err
		}
		if got.Status.Interruptible {
			return fmt.Errorf("status.interruptible still true")
		}
		return nil
	})
}
