package reconciler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/engine"
)

// jumpClock is a test clock that only moves when advanced, and says so.
type jumpClock struct {
	mu    sync.Mutex
	t     time.Time
	jumps []func()
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *jumpClock) OnJump(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jumps = append(c.jumps, fn)
}

func (c *jumpClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	jumps := append([]func(){}, c.jumps...)
	c.mu.Unlock()
	for _, fn := range jumps {
		fn()
	}
}

// The loop wakes an object once the clock reaches its deadline, not
// before, and a jump of the clock wakes it at once.
func TestDeadlinesWakeAtTheDeadline(t *testing.T) {
	clock := &jumpClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	d := newDeadlines(clock.Now)
	clock.OnJump(d.jumped)
	woke := make(chan client.ObjectKey, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.run(ctx, func(_ context.Context, k client.ObjectKey) { woke <- k })

	key := client.ObjectKey{Namespace: "ns", Name: "kettle"}
	d.set(key, clock.Now().Add(10*time.Minute))
	d.set(client.ObjectKey{Namespace: "ns", Name: "gone"}, clock.Now().Add(time.Minute))
	d.set(client.ObjectKey{Namespace: "ns", Name: "gone"}, time.Time{})
	clock.Advance(9 * time.Minute)
	if keys, next := d.due(); len(keys) != 0 || next != time.Minute {
		t.Fatalf("before the deadline: due %v, next in %v; want none, next in 1m", keys, next)
	}
	clock.Advance(time.Minute)
	select {
	case k := <-woke:
		if k != key {
			t.Fatalf("woke %v, want %v", k, key)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the object was not woken once the clock reached its deadline")
	}
	if !d.get(key).IsZero() {
		t.Fatal("a deadline that fired is still kept")
	}
}

// The kettle: a state whose wait has a timeout and a row that fires when
// it passed. Nothing but the kit's wake-up at the deadline decides the
// object again after it settled.
const kettleTables = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: kettle}
spec:
  registry: kettle
  initialState: Heating
  hitPolicy: first
  states:
    - name: Heating
      phase: Heating
      description: heating up
      wait: {step: heat, on: the water to boil, since: metadata.creationTimestamp, timeout: spec.seconds, timedOut: tooLong}
    - {name: Cold, phase: Cold, terminal: true, description: gave up}
  facts:
    - {name: found, type: bool, description: the object exists}
    - {name: tooLong, type: bool, description: spec.seconds passed since the creation}
  rows:
    - {id: K1, observed: "-", trigger: gone, action: nothing, resulting: "-", from: [Heating], when: {found: false}}
    - {id: K2, observed: "-", trigger: heating, action: nothing, resulting: "-", from: [Heating], when: {found: true, tooLong: false}}
    - {id: K3, observed: "-", trigger: too long, action: give up, resulting: Cold, from: [Heating], when: {found: true, tooLong: true}, then: {state: Cold}}
`

type kettle struct {
	obj *unstructured.Unstructured
	now time.Time
}

func kettleRegistry() *engine.Registry[*kettle] {
	r := engine.NewRegistry[*kettle]("kettle")
	r.Bool("found", func(k *kettle) bool { return k.obj != nil })
	r.WaitFields(func(k *kettle) engine.WaitFields {
		if k.obj == nil {
			return nil
		}
		return ObjectFields(k.obj, k.now)
	})
	return r
}

func TestTimedWaitWakesAtItsDeadline(t *testing.T) {
	lib, findings := engine.LoadBytes("kettle.yaml", []byte(kettleTables))
	if lib == nil || findings.HasErrors() {
		t.Fatalf("kettle tables: %v", findings)
	}
	if fs := engine.Check(lib, map[string]*engine.Catalog{"kettle": kettleRegistry().Catalog()}); len(fs) > 0 {
		t.Fatalf("kettle tables: %v", fs)
	}
	ns := createNamespace(t, "kettle")
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	c := mgr.GetClient()
	clock := &jumpClock{t: time.Now()}
	spec := Spec[*unstructured.Unstructured, *kettle]{
		Name: "kettle", Set: lib.TableSet("kettle"), Registry: kettleRegistry(), NewObject: newDoor,
		NewList: func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(doorGVK.GroupVersion().WithKind("DoorList"))
			return l
		},
		Status: doorStatus,
		Observe: func(ctx context.Context, key client.ObjectKey, now time.Time) Observation[*unstructured.Unstructured, *kettle] {
			u := newDoor()
			if err := c.Get(ctx, key, u); err != nil {
				return Observation[*unstructured.Unstructured, *kettle]{Env: &kettle{now: now}, Err: client.IgnoreNotFound(err)}
			}
			return Observation[*unstructured.Unstructured, *kettle]{Env: &kettle{obj: u, now: now}, Object: u, Found: true}
		},
	}
	r, err := New(spec, Options{Client: c, APIReader: mgr.GetAPIReader(), Now: clock.Now, ClockJumps: clock.OnJump})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Setup(mgr, r.Builder(mgr), 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	k := newDoor()
	k.SetNamespace(ns)
	k.SetName("kettle")
	_ = unstructured.SetNestedField(k.Object, int64(600), "spec", "seconds")
	if err := env.Client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(k)
	var deadline time.Time
	// Settled in its wait: K2 recorded and the wake-up set at the deadline
	// (creation + 600s), as the engine times the wait.
	if err := poll(ctx, func(ctx context.Context) error {
		u, err := getDoor(ctx, ns, "kettle")
		if err != nil {
			return err
		}
		rec := doorStatus(u).GetRecord()
		want := u.GetCreationTimestamp().Add(600 * time.Second)
		deadline = want
		if rec.State != "Heating" || rec.LastTransition == nil || rec.LastTransition.Row != "K2" || !r.deadlines.get(key).Equal(want) {
			return fmt.Errorf("state %s, last %v, wake-up %v; want Heating by K2, wake-up at %v", rec.State, rec.LastTransition, r.deadlines.get(key), want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(deadline.Sub(clock.Now()) + time.Second)
	if err := poll(ctx, func(ctx context.Context) error {
		u, err := getDoor(ctx, ns, "kettle")
		if apierrors.IsNotFound(err) {
			return err
		}
		if st := doorStatus(u).GetRecord().State; st != "Cold" {
			return fmt.Errorf("state %s, want Cold: the kit did not wake the object at its deadline", st)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A deadline later than the loop's next look does not wake the loop (with
// thousands of waiting objects every reconcile would otherwise make it look
// at all of them), one earlier does, and moved or removed deadlines neither
// fire nor pile up.
func TestDeadlinesSetIsCheapAndOrdered(t *testing.T) {
	clock := &jumpClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	d := newDeadlines(clock.Now)
	t0 := clock.Now()
	key := func(i int) client.ObjectKey { return client.ObjectKey{Namespace: "ns", Name: fmt.Sprint("m", i)} }
	for i := range 10_000 {
		d.set(key(i), t0.Add(time.Hour+time.Duration(i)*time.Second))
	}
	<-d.kick // the first one woke the loop
	if keys, next := d.due(); len(keys) != 0 || next != time.Hour {
		t.Fatalf("due %d, next in %v; want none, next in 1h", len(keys), next)
	}
	d.set(key(20_000), t0.Add(2*time.Hour))
	select {
	case <-d.kick:
		t.Fatal("a deadline after the loop's next look woke the loop")
	default:
	}
	d.set(key(20_001), t0.Add(time.Minute))
	select {
	case <-d.kick:
	default:
		t.Fatal("a deadline before the loop's next look did not wake the loop")
	}
	// Move every deadline many times: the heap keeps at most a bounded
	// number of stale entries.
	for round := range 5 {
		for i := range 10_000 {
			d.set(key(i), t0.Add(2*time.Hour+time.Duration(round*10_000+i)*time.Millisecond))
		}
	}
	if live := len(d.at); len(d.soonest) > 2*live+64 {
		t.Fatalf("%d heap entries for %d deadlines: stale entries pile up", len(d.soonest), live)
	}
	d.set(key(20_001), time.Time{})
	clock.Advance(2*time.Hour + time.Minute)
	keys, next := d.due()
	if next != 0 || len(keys) != 10_001 {
		t.Fatalf("after every deadline: %d due, next in %v; want 10001 (the removed one not among them), none left", len(keys), next)
	}
	seen := map[client.ObjectKey]bool{}
	for _, k := range keys {
		if seen[k] || k == key(20_001) {
			t.Fatalf("%v due twice or after its removal", k)
		}
		seen[k] = true
	}
}
