package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	krttpoll "github.com/krtt-dev/krtt/test/framework/poll"
)

func TestEnqueueCoalescedWakesOnceAfterTheDelay(t *testing.T) {
	// The queue's clock is a fake one: the delay runs out when the test
	// steps it, not when the machine gets round to it.
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	defer q.ShutDown()
	m1 := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "m1"}}
	h := EnqueueCoalesced(200*time.Millisecond, func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{m1}
	})
	ctx := context.Background()
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	h.Delete(ctx, event.DeleteEvent{Object: pod("p1")}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: pod("p2"), ObjectNew: pod("p2")}, q)
	h.Delete(ctx, event.DeleteEvent{Object: pod("p3")}, q)
	clk.Step(199 * time.Millisecond)
	if n := q.Len(); n != 0 {
		t.Fatalf("woken before the delay (%d in the queue)", n)
	}
	clk.Step(time.Millisecond)
	// The queue moves a request whose delay ran out on its own goroutine.
	if err := krttpoll.Until(ctx, 5*time.Second, func(context.Context) error {
		if q.Len() == 0 {
			return errors.New("nothing in the queue once the delay ran out")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := q.Len(); n != 1 {
		t.Fatalf("%d requests in the queue after the delay, want one for the three events", n)
	}
	if got, _ := q.Get(); got != m1 {
		t.Errorf("woke %v, want %v", got, m1)
	}
}

func TestOnlyStatusChanged(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 3, ResourceVersion: "10",
			Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}, Finalizers: []string{"f"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u"}}}}
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		change func(*corev1.Pod)
		want   bool
	}{
		{"status and resourceVersion", func(p *corev1.Pod) { p.ResourceVersion = "11"; p.Status.Phase = corev1.PodRunning }, true},
		{"managed fields", func(p *corev1.Pod) { p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}} }, true},
		{"generation", func(p *corev1.Pod) { p.Generation = 4 }, false},
		{"a label", func(p *corev1.Pod) { p.Labels["a"] = "2" }, false},
		{"an annotation", func(p *corev1.Pod) { p.Annotations = nil }, false},
		{"a finalizer", func(p *corev1.Pod) { p.Finalizers = append(p.Finalizers, "g") }, false},
		{"the controller flag of an owner", func(p *corev1.Pod) { p.OwnerReferences[0].Controller = ptr.To(true) }, false},
		{"deletion", func(p *corev1.Pod) { p.DeletionTimestamp = &now }, false},
	} {
		cur := base()
		tc.change(cur)
		if got := onlyStatusChanged(base(), cur); got != tc.want {
			t.Errorf("%s: onlyStatusChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The two watches Builder sets up with StatusUpdatesAfter split the
	// events between them: a status-only update goes to the coalesced one,
	// every other event to the immediate one.
	withStatus, withoutLabels := base(), base()
	withStatus.Status.Phase = corev1.PodRunning
	withoutLabels.Labels = nil
	immediate := predicate.Not[client.Object](statusOnly)
	for _, c := range []struct {
		name      string
		coalesced bool
		immediate bool
	}{
		{"status update", statusOnly.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withStatus}),
			immediate.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withStatus})},
		{"label update", statusOnly.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withoutLabels}),
			immediate.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: withoutLabels})},
		{"create", statusOnly.Create(event.CreateEvent{Object: base()}), immediate.Create(event.CreateEvent{Object: base()})},
		{"delete", statusOnly.Delete(event.DeleteEvent{Object: base()}), immediate.Delete(event.DeleteEvent{Object: base()})},
		{"generic", statusOnly.Generic(event.GenericEvent{Object: base()}), immediate.Generic(event.GenericEvent{Object: base()})},
	} {
		if want := c.name == "status update"; c.coalesced != want || c.immediate == want {
			t.Errorf("%s: coalesced %v, immediate %v; want coalesced %v only", c.name, c.coalesced, c.immediate, want)
		}
	}
}

// doorLook is what one reconcile of a Door observed: the test's step
// annotation and how many status-only writes of another writer it saw.
type doorLook struct {
	step    string
	painted string
}

// runDoors runs the Door controller on ns alone, built with opts, and
// returns what each of its reconciles observed so far.
func runDoors(t *testing.T, ns string, opts ...BuilderOption) func() []doorLook {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	spec := doorSpec(mgr.GetClient())
	var mu sync.Mutex
	var looks []doorLook
	observe := spec.Observe
	spec.Observe = func(ctx context.Context, key client.ObjectKey, now time.Time) Observation[*unstructured.Unstructured, *door] {
		o := observe(ctx, key, now)
		if o.Found {
			painted := ""
			if c := meta.FindStatusCondition(doorStatus(o.Object).GetConditions(), "Painted"); c != nil {
				painted = c.Message
			}
			mu.Lock()
			looks = append(looks, doorLook{step: o.Object.GetAnnotations()["step"], painted: painted})
			mu.Unlock()
		}
		return o
	}
	r, err := New(spec, Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Setup(mgr, r.Builder(mgr, opts...), 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-stopped })
	return func() []doorLook {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(looks)
	}
}

// changeDoor reads the Door and writes fn's change to it (its status when
// status is set), again on a conflict.
func changeDoor(ctx context.Context, t *testing.T, ns, name string, status bool, fn func(*unstructured.Unstructured)) {
	t.Helper()
	if err := poll(ctx, func(ctx context.Context) error {
		u, err := getDoor(ctx, ns, name)
		if err != nil {
			return err
		}
		fn(u)
		if status {
			return env.Client.Status().Update(ctx, u)
		}
		return env.Client.Update(ctx, u)
	}); err != nil {
		t.Fatal(err)
	}
}

func annotateStep(step string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["step"] = step
		u.SetAnnotations(a)
	}
}

func paint(message string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		conds := doorStatus(u).GetConditions()
		meta.SetStatusCondition(&conds, metav1.Condition{Type: "Painted", Status: metav1.ConditionTrue, Reason: "Coat", Message: message})
		doorStatus(u).SetConditions(conds)
	}
}

// waitForLook waits until a reconcile observed what want says.
func waitForLook(ctx context.Context, t *testing.T, looks func() []doorLook, what string, want func(doorLook) bool) {
	t.Helper()
	if err := poll(ctx, func(context.Context) error {
		if slices.ContainsFunc(looks(), want) {
			return nil
		}
		return fmt.Errorf("no reconcile observed %s; observed %v", what, looks())
	}); err != nil {
		t.Fatal(err)
	}
}

// TestStatusUpdatesAfterInAManager runs the Door controller built with
// StatusUpdatesAfter against kube-apiserver: another writer's status-only
// updates do not wake it before the delay, any other update wakes it at
// once, and a status-only update still wakes it once the delay is over.
func TestStatusUpdatesAfterInAManager(t *testing.T) {
	ctx := context.Background()
	newClosedDoor := func(ns string) {
		d := newDoor()
		d.SetNamespace(ns)
		d.SetName("back")
		if err := env.Client.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		// The kit's first status write: the Door is Closed.
		if err := poll(ctx, func(ctx context.Context) error {
			u, err := getDoor(ctx, ns, "back")
			if err != nil {
				return err
			}
			if st := doorStatus(u).GetRecord().State; st != "Closed" {
				return fmt.Errorf("state %q", st)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("status-only updates wait, others do not", func(t *testing.T) {
		ns := createNamespace(t, "door-status-later")
		// An hour is longer than any wait of this test: a reconcile that
		// saw the paint before the next step was woken by something else.
		looks := runDoors(t, ns, StatusUpdatesAfter(time.Hour))
		newClosedDoor(ns)
		// An annotation is not a status-only update: it wakes the Door
		// before the poll's deadline, an hour before the delay would.
		changeDoor(ctx, t, ns, "back", false, annotateStep("1"))
		waitForLook(ctx, t, looks, "step 1", func(l doorLook) bool { return l.step == "1" })
		const coats = 10
		for i := range coats {
			changeDoor(ctx, t, ns, "back", true, paint(fmt.Sprint("coat ", i+1)))
		}
		changeDoor(ctx, t, ns, "back", false, annotateStep("2"))
		waitForLook(ctx, t, looks, "step 2 and the last coat", func(l doorLook) bool {
			return l.step == "2" && l.painted == fmt.Sprint("coat ", coats)
		})
		// Step 1 was observed before the first coat, and nothing but the
		// coats changed the Door until step 2 (the Door's rows write
		// nothing once it is Closed, and have no timeouts): a reconcile
		// that saw step 1 and paint was woken by a coat. Woken by the
		// coats, there would be one per coat, less the few the queue
		// merges.
		var painted []doorLook
		for _, l := range looks() {
			if l.step == "1" && l.painted != "" {
				painted = append(painted, l)
			}
		}
		if len(painted) > 0 {
			t.Errorf("%d reconciles before step 2 observed paint, woken by status-only updates: %v", len(painted), painted)
		}
	})

	t.Run("a status-only update wakes it after the delay", func(t *testing.T) {
		ns := createNamespace(t, "door-status-woken")
		looks := runDoors(t, ns, StatusUpdatesAfter(200*time.Millisecond))
		newClosedDoor(ns)
		changeDoor(ctx, t, ns, "back", true, paint("first coat"))
		waitForLook(ctx, t, looks, "the first coat", func(l doorLook) bool { return l.painted == "first coat" })
	})
}
