package machine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	"github.com/krtt-dev/krtt/transitions"
)

// These tests run the Node actions against a real kube-apiserver (envtest).
// There is no kubelet, scheduler or controller: the tests play their parts
// (binding Pods, setting statuses, finishing terminations) by hand.

var (
	env *localcp.ControlPlane
	seq atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error { env = cp; return nil }))
}

func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, seq.Add(1)) }

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := localcp.UniqueName("actions")
	poll.Must(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	// Pods need the default ServiceAccount when its admission plugin runs;
	// no controller creates it here.
	err := env.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return ns
}

func newNode(t *testing.T) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: uniq("node")}}
	poll.Must(t, env.Client.Create(context.Background(), n))
	return n
}

// createNode creates a Node with a unique name and the given taints.
func createNode(t *testing.T, taints ...corev1.Taint) *corev1.Node {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: uniq("node")}, Spec: corev1.NodeSpec{Taints: taints}}
	poll.Must(t, env.Client.Create(context.Background(), node))
	return node
}

func getNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	poll.Must(t, env.Client.Get(context.Background(), client.ObjectKey{Name: name}, n))
	return n
}

func testMachine(ns string, labels map[string]string) *clusterv1.Machine {
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uniq("m"), Labels: labels, UID: "machine-uid"},
		Spec:       clusterv1.MachineSpec{ClusterName: "c1"},
	}
}

var (
	podVerdictsOnce sync.Once
	podVerdicts     *engine.Decider[*PodItem]
	podVerdictsErr  error
)

// shippedPodVerdicts binds the shipped Pod verdict table, as the operator does.
func shippedPodVerdicts(t *testing.T) *engine.Decider[*PodItem] {
	t.Helper()
	podVerdictsOnce.Do(func() {
		lib, fs := engine.LoadFS(transitions.FS(), ".")
		if fs.HasErrors() {
			podVerdictsErr = fs.AsError()
			return
		}
		podVerdicts, podVerdictsErr = PodVerdicts(lib.TableSet("machine"))
	})
	poll.Must(t, podVerdictsErr)
	return podVerdicts
}

// scopeFor builds the Scope one reconcile would see: the Machine in memory
// and its Node as the API server has it now.
func scopeFor(t *testing.T, m *clusterv1.Machine, node string) *Scope {
	t.Helper()
	s := &Scope{Client: env.Client, NodeClient: env.Client, Now: time.Now(), MachineFound: true, Machine: m, PodVerdicts: shippedPodVerdicts(t)}
	if m != nil {
		s.Key = client.ObjectKeyFromObject(m)
	}
	if node != "" {
		s.Nodes = []corev1.Node{*getNode(t, node)}
	}
	return s
}

type podOpt func(*corev1.Pod)

func newPod(t *testing.T, ns, name, node string, opts ...podOpt) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "c", Image: "busybox"}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	poll.Must(t, env.Client.Create(context.Background(), p))
	return p
}

func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withAnnotation(k, v string) podOpt {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{k: v} }
}

func ownedBy(ds *appsv1.DaemonSet) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true),
		}}
	}
}

func withClaim(claim string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		}})
	}
}

// setPodStatus plays the kubelet.
func setPodStatus(t *testing.T, p *corev1.Pod, phase corev1.PodPhase, ready bool) {
	t.Helper()
	poll.Must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), p))
	p.Status.Phase = phase
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	poll.Must(t, env.Client.Status().Update(context.Background(), p))
}

func newDaemonSet(t *testing.T, ns string) *appsv1.DaemonSet {
	t.Helper()
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uniq("ds")},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	poll.Must(t, env.Client.Create(context.Background(), ds))
	return ds
}

func getPod(t *testing.T, ns, name string) (*corev1.Pod, bool) {
	t.Helper()
	p := &corev1.Pod{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	poll.Must(t, err)
	return p, true
}

// finishTermination plays the kubelet for Pods the drain evicted: it
// force-deletes every terminating Pod on the Node and waits until they are gone.
func finishTermination(t *testing.T, node string) int {
	t.Helper()
	ctx := context.Background()
	pods, err := podsOnNode(ctx, env.Client, node)
	poll.Must(t, err)
	n := 0
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp.IsZero() {
			continue
		}
		n++
		if err := env.Client.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		poll.Await(t, poll.DefaultTimeout, "Pod "+p.Name+" gone", func(ctx context.Context) error {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{})
			if err == nil {
				return errors.New("still there")
			}
			return client.IgnoreNotFound(err)
		})
	}
	return n
}

func wantStatus(t *testing.T, o engine.Outcome, want engine.OutcomeStatus, contains ...string) {
	t.Helper()
	t.Logf("%s: %s", o.Status, o.Message)
	if o.Status != want {
		t.Fatalf("outcome %s (%q, err %v), want %s", o.Status, o.Message, o.Err, want)
	}
	for _, c := range contains {
		if !strings.Contains(o.Message, c) {
			t.Errorf("message %q does not contain %q", o.Message, c)
		}
	}
}

func TestNodeActionsWithoutNode(t *testing.T) {
	ctx := context.Background()
	s := scopeFor(t, testMachine("default", nil), "")
	for name, fn := range map[string]engine.ActionFunc[*Scope]{
		"drainNode": drainNode, "waitForVolumeDetach": waitForVolumeDetach, "syncNode": syncNode,
	} {
		if o := fn(ctx, s); o.Status != engine.Done {
			t.Errorf("%s without a Node: %s %q, want Done", name, o.Status, o.Message)
		}
	}
}

func TestDrainEvictsAndSkips(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	other := newNode(t)
	m := testMachine(ns, nil)

	ds := newDaemonSet(t, ns)
	newPod(t, ns, "web-a", node.Name)
	newPod(t, ns, "web-b", node.Name)
	newPod(t, ns, "agent", node.Name, ownedBy(ds))
	// Its DaemonSet is found by name, as Cluster API's daemonSetFilter
	// finds it: an owner reference with another UID (a DaemonSet made
	// again) still makes the Pod a DaemonSet's, skipped.
	newPod(t, ns, "agent-old", node.Name, ownedBy(&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: ds.Name, UID: "before"}}))
	// An orphan: its DaemonSet is gone, nothing recreates it, so it is evicted.
	newPod(t, ns, "orphan", node.Name, ownedBy(&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "gone-ds", UID: "gone"}}))
	newPod(t, ns, "static", node.Name, withAnnotation(corev1.MirrorPodAnnotationKey, "hash"))
	newPod(t, ns, "keep", node.Name, withLabels(clusterv1.PodDrainLabel, clusterv1.PodDrainLabelValueSkip))
	done := newPod(t, ns, "job-done", node.Name)
	setPodStatus(t, done, corev1.PodSucceeded, false)
	newPod(t, ns, "elsewhere", other.Name)

	// Pass 1: cordon, evict. Without a kubelet evicted Pods stay Terminating.
	o := drainNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.InProgress,
		"Drain not completed yet",
		":\n* Pods "+ns+"/orphan, "+ns+"/web-a, "+ns+"/web-b: deletionTimestamp set, but still not removed from the Node")
	if strings.Contains(o.Message, "agent") || strings.Contains(o.Message, "static") || strings.Contains(o.Message, "keep") {
		t.Errorf("skipped Pods named in %q: Cluster API's message leaves them out", o.Message)
	}
	cordoned := getNode(t, node.Name)
	if !cordoned.Spec.Unschedulable {
		t.Fatal("Node not cordoned")
	}
	// A finished Pod is removed too (it would stay behind on a Node that is
	// going), but it is never waited for: the message does not name it.
	for _, name := range []string{"web-a", "web-b", "orphan", "job-done"} {
		if p, ok := getPod(t, ns, name); ok && p.DeletionTimestamp.IsZero() {
			t.Errorf("Pod %s was not evicted", name)
		}
	}
	for _, name := range []string{"agent", "static", "keep", "elsewhere"} {
		if p, ok := getPod(t, ns, name); !ok || !p.DeletionTimestamp.IsZero() {
			t.Errorf("Pod %s should have been left alone", name)
		}
	}
	if u := getNode(t, other.Name); u.Spec.Unschedulable {
		t.Error("the other Node was cordoned")
	}

	// Pass 2: nothing new to evict; the Node is not written again, and the
	// Pods the drain evicted (DisruptionTarget) are told as in pass 1, so
	// the message does not change until one goes.
	o = drainNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.InProgress, "* Pods "+ns+"/orphan, "+ns+"/web-a, "+ns+"/web-b: deletionTimestamp set, but still not removed from the Node")
	if rv := getNode(t, node.Name).ResourceVersion; rv != cordoned.ResourceVersion {
		t.Errorf("Node written again (resourceVersion %s -> %s): cordon must happen once", cordoned.ResourceVersion, rv)
	}

	if n := finishTermination(t, node.Name); n != 3 {
		t.Fatalf("%d Pods were terminating, want 3", n)
	}
	o = drainNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.Done, "all Pods evicted (4 skipped: ")
	if !o.WroteNothing {
		t.Error("the last pass wrote nothing (Node cordoned, no Pod to evict) but does not say so: run to completion would stop")
	}

	skipped, err := skippedPods(ctx, scopeFor(t, m, node.Name), getNode(t, node.Name))
	poll.Must(t, err)
	var names []string
	for _, p := range skipped {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, ","); got != "agent,agent-old,keep,static" {
		t.Errorf("skippedPods = %s, want agent,agent-old,keep,static", got)
	}
}

func TestDrainMessageNamesAFewPerClass(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	for i := 1; i <= 5; i++ {
		newPod(t, ns, fmt.Sprintf("p%d", i), node.Name)
	}
	o := drainNode(ctx, scopeFor(t, testMachine(ns, nil), node.Name))
	wantStatus(t, o, engine.InProgress,
		"* Pods "+ns+"/p1, "+ns+"/p2, "+ns+"/p3, ... (2 more): deletionTimestamp set, but still not removed from the Node")
	finishTermination(t, node.Name)
	wantStatus(t, drainNode(ctx, scopeFor(t, testMachine(ns, nil), node.Name)), engine.Done, "all Pods evicted")
}

func setPDBStatus(t *testing.T, pdb *policyv1.PodDisruptionBudget, allowed int32) {
	t.Helper()
	poll.Must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(pdb), pdb))
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		DisruptionsAllowed: allowed,
		CurrentHealthy:     1,
		DesiredHealthy:     1 - allowed,
		ExpectedPods:       1,
	}
	poll.Must(t, env.Client.Status().Update(context.Background(), pdb))
}

// A Pod the drain waits to complete, in order group 0, comes after a Drain
// rule's lower group: the message says so on Cluster API's last line.
func TestDrainWaitsForCompletionAfterLowerGroups(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	m := testMachine(ns, nil)
	rule := &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}, Spec: clusterv1.MachineDrainRuleSpec{
		Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: clusterv1.DrainBehaviorDrain, Order: ptr.To(int32(-1))},
		Pods:  []clusterv1.MachineDrainRulePodSelector{{Selector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{"app": "first"}}}}}}
	poll.Must(t, env.Client.Create(ctx, rule))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), rule) })
	newPod(t, ns, "first", node.Name, withLabels("app", "first"))
	newPod(t, ns, "batch", node.Name, withLabels(clusterv1.PodDrainLabel, "wait-completed"))
	newPod(t, ns, "web", node.Name)

	o := drainNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.InProgress,
		":\n* Pod "+ns+"/first: deletionTimestamp set, but still not removed from the Node"+
			"\nAfter above Pods have been removed from the Node, the following Pods will be evicted: "+ns+"/web"+
			"\nAfter above Pods have been removed from the Node, waiting for the following Pods to complete without eviction: "+ns+"/batch")
	if p, ok := getPod(t, ns, "batch"); !ok || !p.DeletionTimestamp.IsZero() {
		t.Fatal("a wait-completed Pod was evicted")
	}
}

func TestDrainBlockedByPodDisruptionBudget(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	m := testMachine(ns, nil)

	// The Eviction API lets Pending Pods go regardless of budgets, so the
	// Pod must be running and ready for its budget to count.
	db := newPod(t, ns, "db-0", node.Name, withLabels("app", "db"))
	setPodStatus(t, db, corev1.PodRunning, true)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
	}
	poll.Must(t, env.Client.Create(ctx, pdb))
	// There is no disruption controller: write the status it would.
	setPDBStatus(t, pdb, 0)
	newPod(t, ns, "web", node.Name)

	o := drainNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.InProgress,
		"* Pod "+ns+"/db-0: cannot evict pod as it would violate the pod's disruption budget.", "db-pdb",
		"* Pod "+ns+"/web: deletionTimestamp set, but still not removed from the Node")
	if p, ok := getPod(t, ns, "db-0"); !ok || !p.DeletionTimestamp.IsZero() {
		t.Fatal("the Pod behind the budget was evicted")
	}
	if i, j := strings.Index(o.Message, "cannot evict"), strings.Index(o.Message, "deletionTimestamp set"); i < j {
		t.Errorf("classes out of order in %q", o.Message)
	}

	// Still blocked on the next pass (no retry loop inside one pass).
	finishTermination(t, node.Name)
	o = drainNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.InProgress, "* Pod "+ns+"/db-0: cannot evict pod")

	// The budget relaxes: the eviction goes through.
	setPDBStatus(t, pdb, 1)
	o = drainNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.InProgress, "* Pod "+ns+"/db-0: deletionTimestamp set, but still not removed from the Node")
	if n := finishTermination(t, node.Name); n != 1 {
		t.Fatalf("%d Pods terminating, want 1", n)
	}
	wantStatus(t, drainNode(ctx, scopeFor(t, m, node.Name)), engine.Done, "all Pods evicted")
}

// noFieldSelectors is a client that, like a cache without the index,
// refuses field selectors on lists.
type noFieldSelectors struct{ client.Client }

func (c noFieldSelectors) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		return errors.New("index with name field:spec.nodeName does not exist")
	}
	return c.Client.List(ctx, list, opts...)
}

func TestDrainFallsBackWithoutFieldSelector(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	other := newNode(t)
	newPod(t, ns, "mine", node.Name)
	newPod(t, ns, "theirs", other.Name)

	s := scopeFor(t, testMachine(ns, nil), node.Name)
	s.NodeClient = noFieldSelectors{env.Client}
	wantStatus(t, drainNode(ctx, s), engine.InProgress, "* Pod "+ns+"/mine: deletionTimestamp set, but still not removed from the Node")
	if p, _ := getPod(t, ns, "theirs"); p == nil || !p.DeletionTimestamp.IsZero() {
		t.Error("a Pod on another Node was evicted")
	}
	if got := PodNodeNameIndexer(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}}); len(got) != 1 || got[0] != "n" {
		t.Errorf("PodNodeNameIndexer = %v", got)
	}
	if got := PodNodeNameIndexer(&corev1.Pod{}); got != nil {
		t.Errorf("PodNodeNameIndexer of an unbound Pod = %v, want nil", got)
	}
}

const testDriver = "csi.example.com"

func newCSIVolume(t *testing.T, ns, handle, claim string) string {
	t.Helper()
	ctx := context.Background()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: uniq("pv")},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: testDriver, VolumeHandle: handle}},
		},
	}
	poll.Must(t, env.Client.Create(ctx, pv))
	if claim != "" {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: claim},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				VolumeName:  pv.Name,
			},
		}
		poll.Must(t, env.Client.Create(ctx, pvc))
	}
	return pv.Name
}

func newAttachment(t *testing.T, node, pv string) *storagev1.VolumeAttachment {
	t.Helper()
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: uniq("va")},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: testDriver, NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(pv)},
		},
	}
	poll.Must(t, env.Client.Create(context.Background(), va))
	setAttached(t, va, true)
	return va
}

func setAttached(t *testing.T, va *storagev1.VolumeAttachment, attached bool) {
	t.Helper()
	poll.Must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(va), va))
	va.Status.Attached = attached
	poll.Must(t, env.Client.Status().Update(context.Background(), va))
}

func setVolumesAttached(t *testing.T, node string, names ...string) {
	t.Helper()
	n := getNode(t, node)
	n.Status.VolumesAttached = nil
	for _, name := range names {
		n.Status.VolumesAttached = append(n.Status.VolumesAttached, corev1.AttachedVolume{Name: corev1.UniqueVolumeName(name), DevicePath: "/dev/x"})
	}
	poll.Must(t, env.Client.Status().Update(context.Background(), n))
}

func csiName(handle string) string { return csiUniqueVolumePrefix + testDriver + "^" + handle }

func TestWaitForVolumeDetach(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	other := newNode(t)
	m := testMachine(ns, nil)

	// Nothing attached.
	wantStatus(t, waitForVolumeDetach(ctx, scopeFor(t, m, node.Name)), engine.Done)

	// pv-a, bound to the claim data-a, is attached through a
	// VolumeAttachment and also listed in volumesAttached (one volume, named
	// once, by its claim); h-c only in volumesAttached, with no
	// PersistentVolume; pv-u is bound to no claim; ghost has a
	// VolumeAttachment but no PersistentVolume.
	pvA := newCSIVolume(t, ns, uniq("h-a"), "")
	bindTo(t, pvA, ns, "data-a")
	vaA := newAttachment(t, node.Name, pvA)
	handleA := getPV(t, pvA).Spec.CSI.VolumeHandle
	handleC := uniq("h-c")
	pvU := newCSIVolume(t, ns, uniq("h-u"), "")
	vaU := newAttachment(t, node.Name, pvU)
	ghost := uniq("ghost")
	vaGhost := newAttachment(t, node.Name, ghost)
	// A volume on another Node, and one that is not attached (yet).
	newAttachment(t, other.Name, newCSIVolume(t, ns, uniq("h-o"), ""))
	vaPending := newAttachment(t, node.Name, newCSIVolume(t, ns, uniq("h-p"), ""))
	setAttached(t, vaPending, false)

	// The volume of a Pod the drain skipped is ignored in both places.
	handleS := uniq("h-s")
	pvS := newCSIVolume(t, ns, handleS, "keep-data")
	newPod(t, ns, "keep", node.Name, withLabels(clusterv1.PodDrainLabel, clusterv1.PodDrainLabelValueSkip), withClaim("keep-data"))
	newAttachment(t, node.Name, pvS)

	setVolumesAttached(t, node.Name, csiName(handleA), csiName(handleC), csiName(handleS))

	// Cluster API's lines (attachedVolumeInformation.conditionMessage).
	o := waitForVolumeDetach(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.InProgress)
	if want := "Waiting for Node volumes to be detached" +
		"\n* PersistentVolumeClaims: " + ns + "/data-a" +
		"\n* PersistentVolumes without a .spec.claimRef to a PersistentVolumeClaim: " + pvU +
		"\n* Node with .status.volumesAttached entries not matching a PersistentVolume: " + csiName(handleC) +
		"\n* VolumeAttachment with .spec.source.persistentVolumeName not matching a PersistentVolume: " + ghost; o.Message != want {
		t.Errorf("message\n%s\nwant\n%s", o.Message, want)
	}
	if strings.Contains(o.Message, handleS) || strings.Contains(o.Message, pvS) {
		t.Errorf("message %q names the skipped Pod's volume", o.Message)
	}
	setAttached(t, vaU, false)
	setAttached(t, vaGhost, false)

	// Detached: the VolumeAttachment reports attached=false and the Node
	// lists only the skipped Pod's volume.
	setAttached(t, vaA, false)
	setVolumesAttached(t, node.Name, csiName(handleS))
	wantStatus(t, waitForVolumeDetach(ctx, scopeFor(t, m, node.Name)), engine.Done)
}

func TestWaitForVolumeDetachNamesAFew(t *testing.T) {
	ctx := context.Background()
	node := newNode(t)
	setVolumesAttached(t, node.Name, "kubernetes.io/e", "kubernetes.io/d", "kubernetes.io/c", "kubernetes.io/b", "kubernetes.io/a")
	o := waitForVolumeDetach(ctx, scopeFor(t, testMachine("default", nil), node.Name))
	wantStatus(t, o, engine.InProgress,
		"Waiting for Node volumes to be detached\n* Node with .status.volumesAttached entries not matching a PersistentVolume: kubernetes.io/a, kubernetes.io/b, kubernetes.io/c, kubernetes.io/d, kubernetes.io/e")
	setVolumesAttached(t, node.Name, "kubernetes.io/f", "kubernetes.io/e", "kubernetes.io/d", "kubernetes.io/c", "kubernetes.io/b", "kubernetes.io/a")
	wantStatus(t, waitForVolumeDetach(ctx, scopeFor(t, testMachine("default", nil), node.Name)), engine.InProgress,
		": kubernetes.io/a, kubernetes.io/b, kubernetes.io/c, kubernetes.io/d, kubernetes.io/e, ... (1 more)")
}

// bindTo records the claim of a PersistentVolume, as the volume binder
// does (envtest runs none).
func bindTo(t *testing.T, pv, ns, claim string) {
	t.Helper()
	p := getPV(t, pv)
	p.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim}
	poll.Must(t, env.Client.Update(context.Background(), p))
}

func getPV(t *testing.T, name string) *corev1.PersistentVolume {
	t.Helper()
	pv := &corev1.PersistentVolume{}
	poll.Must(t, env.Client.Get(context.Background(), client.ObjectKey{Name: name}, pv))
	return pv
}

func TestSyncNode(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: uniq("node"), Labels: map[string]string{
		"kubernetes.io/hostname": "h1",
		// A managed-prefix label krtt did not set: never removed by krtt.
		"node-role.kubernetes.io/gpu": "",
	}}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{
		{Key: clusterv1.NodeUninitializedTaint, Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
	}}}
	poll.Must(t, env.Client.Create(ctx, node))

	// Keys are synced by domain, subdomains included, as Cluster API's
	// GetManagedLabels: node-role.kubernetes.io itself only.
	worker, pool := clusterv1.NodeRoleLabelPrefix+"worker", clusterv1.ManagedNodeLabelPrefix+"pool"
	zone := clusterv1.NodeRestrictionLabelPrefix + "zone"
	rack := "dc1.node-restriction.kubernetes.io/rack"
	tier := "custom.node.cluster.krtt.dev/tier"
	note := clusterv1.ManagedNodeLabelPrefix + "note"
	m := testMachine(ns, map[string]string{worker: "", pool: "blue", zone: "a", rack: "r1", tier: "gold", "team": "x",
		"sub.node-role.kubernetes.io/x": "", clusterv1.ClusterNameLabel: "c1"})
	m.Annotations = map[string]string{note: "hello", "team": "x"}
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: "ms1", UID: "ms-uid", Controller: ptr.To(true)}}

	sc := scopeFor(t, m, node.Name)
	o := syncNode(ctx, sc)
	wantStatus(t, o, engine.Done, "updated Node "+node.Name+": labels "+tier+","+rack+","+zone+","+worker+","+pool, "removed taint "+clusterv1.NodeUninitializedTaint)
	n := getNode(t, node.Name)
	// The observed Node is the one written (write-through).
	if seen := sc.Node(); seen.ResourceVersion != n.ResourceVersion || seen.Labels[pool] != "blue" || seen.Annotations[clusterv1.MachineAnnotation] != m.Name {
		t.Errorf("observed Node after the sync: resourceVersion %s (want %s), labels %v, annotations %v", seen.ResourceVersion, n.ResourceVersion, seen.Labels, seen.Annotations)
	}
	for k, v := range map[string]string{worker: "", pool: "blue", zone: "a", rack: "r1", tier: "gold", "kubernetes.io/hostname": "h1", "node-role.kubernetes.io/gpu": ""} {
		if got, ok := n.Labels[k]; !ok || got != v {
			t.Errorf("Node label %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	for _, k := range []string{"team", clusterv1.ClusterNameLabel, "sub.node-role.kubernetes.io/x"} {
		if _, ok := n.Labels[k]; ok {
			t.Errorf("Node got unmanaged Machine label %s", k)
		}
	}
	for k, v := range map[string]string{
		clusterv1.MachineAnnotation:          m.Name,
		clusterv1.ClusterNameAnnotation:      "c1",
		clusterv1.ClusterNamespaceAnnotation: ns,
		clusterv1.OwnerKindAnnotation:        "MachineSet",
		clusterv1.OwnerNameAnnotation:        "ms1",
		note:                                 "hello",
		LabelsFromMachineAnnotation:          tier + "," + rack + "," + zone + "," + worker + "," + pool,
		AnnotationsFromMachineAnnotation:     note,
	} {
		if got := n.Annotations[k]; got != v {
			t.Errorf("Node annotation %s = %q, want %q", k, got, v)
		}
	}
	if _, ok := n.Annotations["team"]; ok {
		t.Error("Node got an unmanaged Machine annotation")
	}
	// The uninitialized taint goes; the others (ours, and the API server's
	// not-ready one) stay.
	var kept []string
	for _, taint := range n.Spec.Taints {
		kept = append(kept, taint.Key)
	}
	if slices.Contains(kept, clusterv1.NodeUninitializedTaint) || !slices.Contains(kept, "dedicated") {
		t.Errorf("taints after the sync: %v, want the dedicated one and not %s", kept, clusterv1.NodeUninitializedTaint)
	}

	// In sync: no write at all.
	o = syncNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.Done, "Node "+node.Name+" in sync")
	if rv := getNode(t, node.Name).ResourceVersion; rv != n.ResourceVersion {
		t.Errorf("in-sync Node was written (resourceVersion %s -> %s)", n.ResourceVersion, rv)
	}

	// A label removed from the Machine is removed from the Node; a changed
	// value is updated; labels krtt never set stay.
	delete(m.Labels, pool)
	delete(m.Labels, rack)
	delete(m.Labels, tier)
	m.Labels[zone] = "b"
	o = syncNode(ctx, scopeFor(t, m, node.Name))
	wantStatus(t, o, engine.Done, "labels "+zone, "removed labels "+tier+","+rack+","+pool)
	n = getNode(t, node.Name)
	if _, ok := n.Labels[pool]; ok {
		t.Errorf("label %s removed from the Machine is still on the Node", pool)
	}
	if n.Labels[zone] != "b" || n.Labels["kubernetes.io/hostname"] != "h1" {
		t.Errorf("Node labels after update: %v", n.Labels)
	}
	if _, ok := n.Labels["node-role.kubernetes.io/gpu"]; !ok {
		t.Error("a managed-prefix label krtt did not set was removed")
	}
	if got := n.Annotations[LabelsFromMachineAnnotation]; got != zone+","+worker {
		t.Errorf("%s = %q", LabelsFromMachineAnnotation, got)
	}

	// No managed labels or annotations left, and no controller: they and
	// the owner annotations go; the bookkeeping annotations stay, empty.
	m.Labels = map[string]string{"team": "x"}
	m.Annotations = nil
	m.OwnerReferences = nil
	wantStatus(t, syncNode(ctx, scopeFor(t, m, node.Name)), engine.Done, "removed labels "+zone+","+worker)
	n = getNode(t, node.Name)
	for _, k := range []string{LabelsFromMachineAnnotation, AnnotationsFromMachineAnnotation} {
		if v, ok := n.Annotations[k]; !ok || v != "" {
			t.Errorf("%s = %q (present %v), want empty", k, v, ok)
		}
	}
	for _, k := range []string{note, clusterv1.OwnerKindAnnotation, clusterv1.OwnerNameAnnotation} {
		if _, ok := n.Annotations[k]; ok {
			t.Errorf("annotation %s kept after the Machine lost it", k)
		}
	}
	if n.Annotations[clusterv1.MachineAnnotation] != m.Name {
		t.Error("Machine annotation lost")
	}
	rv := n.ResourceVersion
	wantStatus(t, syncNode(ctx, scopeFor(t, m, node.Name)), engine.Done, "in sync")
	if got := getNode(t, node.Name).ResourceVersion; got != rv {
		t.Error("in-sync Node was written")
	}
}

// The Node of a Machine whose MachineSet is of an older revision than its
// MachineDeployment gets the outdated-revision taint, and loses it when the
// set is the newest again (Cluster API shouldNodeHaveOutdatedTaint); an
// interruptible instance's Node gets the interruptible label, which goes
// with the instance's status.interruptible (Cluster API reconcileNode).
func TestSyncNodeRevisionTaintAndInterruptible(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := createNode(t, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
	m := testMachine(ns, map[string]string{clusterv1.ClusterNameLabel: "c1"})
	revision := func(n string) map[string]string { return map[string]string{clusterv1.RevisionAnnotation: n} }
	set := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms1", Annotations: revision("1")}}
	deployment := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", Annotations: revision("2")}}
	infra := &unstructured.Unstructured{Object: map[string]any{"kind": "SimMachine", "metadata": map[string]any{"name": "sm1"},
		"status": map[string]any{"interruptible": true}}}
	scope := func() *Scope {
		s := scopeFor(t, m, node.Name)
		s.Set, s.Deployment, s.Infrastructure = set, deployment, infra
		return s
	}
	taints := func() []string {
		var out []string
		for _, tn := range getNode(t, node.Name).Spec.Taints {
			out = append(out, tn.Key+":"+string(tn.Effect))
		}
		return out
	}
	outdated := clusterv1.NodeOutdatedRevisionTaint + ":PreferNoSchedule"

	first := scope()
	wantStatus(t, syncNode(ctx, first), engine.Done, "labels "+clusterv1.InterruptibleLabel)
	wantTold(t, first, "SuccessfulSetInterruptibleNodeLabel: "+node.Name, "the interruptible label set")
	// The API server's not-ready taint may be there too; it stays.
	if got := taints(); !slices.Contains(got, "dedicated:NoSchedule") || !slices.Contains(got, outdated) {
		t.Errorf("taints of an older revision's Node: %v", got)
	}
	n := getNode(t, node.Name)
	if v, ok := n.Labels[clusterv1.InterruptibleLabel]; !ok || v != "" {
		t.Errorf("interruptible label = %q (present %v), want empty and present", v, ok)
	}
	if got := n.Annotations[LabelsFromMachineAnnotation]; got != clusterv1.InterruptibleLabel {
		t.Errorf("%s = %q: the interruptible label must be tracked so it can go", LabelsFromMachineAnnotation, got)
	}
	again := scope()
	wantStatus(t, syncNode(ctx, again), engine.Done, "in sync")
	wantTold(t, again, "", "the interruptible label already there")
	// Owners that could not be read leave the taint as it is.
	unread := scope()
	unread.Set, unread.Deployment, unread.OwnersErr = nil, nil, errors.New("cache not synced")
	wantStatus(t, syncNode(ctx, unread), engine.Done, "in sync")

	// A rollback makes the set the newest revision; the instance stops
	// being interruptible.
	set.Annotations = revision("3")
	deployment.Annotations = revision("3")
	infra.Object["status"] = map[string]any{"interruptible": false}
	wantStatus(t, syncNode(ctx, scope()), engine.Done, "removed labels "+clusterv1.InterruptibleLabel)
	if got := taints(); !slices.Contains(got, "dedicated:NoSchedule") || slices.Contains(got, outdated) {
		t.Errorf("taints of the newest revision's Node: %v", got)
	}
	if _, ok := getNode(t, node.Name).Labels[clusterv1.InterruptibleLabel]; ok {
		t.Error("interruptible label kept after the instance stopped reporting it")
	}

	// A write of the taint alone reads "in sync": the Machine's
	// lastTransition does not follow the deployment's revision.
	deployment.Annotations = revision("4")
	wantStatus(t, syncNode(ctx, scope()), engine.Done, "Node "+node.Name+" in sync")
	if got := taints(); !slices.Contains(got, outdated) {
		t.Errorf("taints after a new revision: %v", got)
	}
	deployment.Annotations = revision("3")
	wantStatus(t, syncNode(ctx, scope()), engine.Done, "Node "+node.Name+" in sync")
	if got := taints(); slices.Contains(got, outdated) {
		t.Errorf("taints once the set is current again: %v", got)
	}

	// A stand-alone MachineSet has no revision to be behind.
	set.Annotations, deployment = revision("1"), nil
	wantStatus(t, syncNode(ctx, scope()), engine.Done, "in sync")

	// status.interruptible that is not a bool is the provider's mistake,
	// named.
	infra.Object["status"] = map[string]any{"interruptible": "yes"}
	wantStatus(t, syncNode(ctx, scope()), engine.Failed, "read status.interruptible of SimMachine sm1")
}

// --additional-sync-machine-labels and -annotations add keys to those
// synced; they are tracked like the others, so one the Machine loses goes.
func TestSyncNodeAdditionalKeys(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := createNode(t)
	m := testMachine(ns, map[string]string{"tier": "gold", "team": "blue", clusterv1.ClusterNameLabel: "c1"})
	m.Annotations = map[string]string{"example.com/owner": "ops", "other": "x"}
	sync, err := controller.CompileNodeSync([]string{"^tier$"}, []string{"^example\\.com/"})
	if err != nil {
		t.Fatal(err)
	}
	scope := func() *Scope {
		s := scopeFor(t, m, node.Name)
		s.NodeSync = sync
		return s
	}
	wantStatus(t, syncNode(ctx, scope()), engine.Done, "labels tier")
	n := getNode(t, node.Name)
	if n.Labels["tier"] != "gold" || n.Annotations["example.com/owner"] != "ops" {
		t.Errorf("Node labels %v annotations %v: the selected keys are missing", n.Labels, n.Annotations)
	}
	if _, ok := n.Labels["team"]; ok {
		t.Error("a label no expression selects was synced")
	}
	if _, ok := n.Annotations["other"]; ok {
		t.Error("an annotation no expression selects was synced")
	}
	if n.Annotations[LabelsFromMachineAnnotation] != "tier" || n.Annotations[AnnotationsFromMachineAnnotation] != "example.com/owner" {
		t.Errorf("bookkeeping %q, %q", n.Annotations[LabelsFromMachineAnnotation], n.Annotations[AnnotationsFromMachineAnnotation])
	}
	delete(m.Labels, "tier")
	delete(m.Annotations, "example.com/owner")
	wantStatus(t, syncNode(ctx, scope()), engine.Done, "removed labels tier")
	n = getNode(t, node.Name)
	if _, ok := n.Labels["tier"]; ok {
		t.Error("label tier kept after the Machine lost it")
	}
	if _, ok := n.Annotations["example.com/owner"]; ok {
		t.Error("annotation example.com/owner kept after the Machine lost it")
	}
}
