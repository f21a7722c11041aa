package reconciler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/engine"
)

// A row whose patch meets a newer version of the object still acted (its
// actions ran): its trace is published, saying the result was not written,
// so a row that acted is never missing from the traces (the Gherkin row
// coverage, a test waiting for a row); no Event is recorded, since the
// object does not show the change; and the object is decided again soon.
func TestRowThatActedIsTracedWhenItsPatchIsStale(t *testing.T) {
	ns := createNamespace(t, "unwritten")
	ctx := context.Background()
	createOpenDoor(t, ns)

	spec := doorSpec(env.Client)
	observe := spec.Observe
	// Another writer changes the Door right after it was read: the
	// reconcile decides and acts on an outdated copy.
	spec.Observe = func(ctx context.Context, key client.ObjectKey, now time.Time) Observation[*unstructured.Unstructured, *door] {
		obs := observe(ctx, key, now)
		other := obs.Object.DeepCopy()
		other.SetAnnotations(map[string]string{"example.com/other": "writer"})
		if err := env.Client.Update(ctx, other); err != nil {
			t.Errorf("the other writer: %v", err)
		}
		return obs
	}
	unwrittenBefore := unwrittenCount(t, "door", "T02")
	rec := events.NewFakeRecorder(10)
	r, err := New(spec, Options{Client: env.Client, APIReader: env.Client, Recorder: rec, Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	var traces []engine.Trace
	r.Runner().Subscribe(func(tr engine.Trace) { traces = append(traces, tr) })

	res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "d"}})
	if err != nil || res.RequeueAfter != staleRequeue {
		t.Fatalf("Reconcile = %+v, %v; want a requeue after %s and no error", res, err, staleRequeue)
	}
	if len(traces) != 1 || traces[0].Row != "T02" || traces[0].Action != "Label" {
		t.Fatalf("traces %+v, want the one of row T02 that ran Label", traces)
	}
	if !strings.Contains(traces[0].Unwritten, "changed meanwhile") || !strings.Contains(traces[0].Unwritten, "has been modified") {
		t.Errorf("Unwritten = %q, want the conflict that kept the result from the Door", traces[0].Unwritten)
	}
	// The metric counts the row apart: its transition did not happen.
	if got := unwrittenCount(t, traces[0].Table, "T02"); got != unwrittenBefore+1 {
		t.Errorf("krtt_transitions_total{row=T02,outcome=Unwritten} = %v, want %v", got, unwrittenBefore+1)
	}
	select {
	case e := <-rec.Events:
		t.Errorf("Event recorded for a result the Door does not show: %s", e)
	default:
	}
	got, err := getDoor(ctx, ns, "d")
	if err != nil {
		t.Fatal(err)
	}
	if st := doorStatus(got).GetRecord().State; st != "" || got.GetLabels()["toy.krtt.dev/opened"] != "" {
		t.Errorf("the stale patch reached the Door: state %q labels %v", st, got.GetLabels())
	}

	// Decided again on the newer version, the row's result is written and
	// its trace says nothing is missing.
	traces = nil
	spec.Observe = observe
	r, err = New(spec, Options{Client: env.Client, APIReader: env.Client, Recorder: rec, Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	r.Runner().Subscribe(func(tr engine.Trace) { traces = append(traces, tr) })
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "d"}}); err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || traces[0].Row != "T02" || traces[0].Unwritten != "" {
		t.Fatalf("traces %+v, want T02 written", traces)
	}
	if e := <-rec.Events; !strings.Contains(e, "T02") {
		t.Errorf("Event %q, want one for T02", e)
	}
}

// A write whose answer is lost (the operator stopped while the status patch
// was in flight: the API server applied it, the client saw its context
// canceled) fails the reconcile, yet the row acted and its result may even
// be on the object: its trace is published with the error, so a test that
// saw the result also finds the row. No Event: the write is not known to
// have landed.
func TestRowThatActedIsTracedWhenItsWriteFails(t *testing.T) {
	ns := createNamespace(t, "unwritten-fail")
	ctx := context.Background()
	createOpenDoor(t, ns)
	lost := errors.New("context canceled")
	ww, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(ww, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			return lost
		},
	})
	rec := events.NewFakeRecorder(10)
	r, err := New(doorSpec(env.Client), Options{Client: c, APIReader: env.Client, Recorder: rec, Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	var traces []engine.Trace
	r.Runner().Subscribe(func(tr engine.Trace) { traces = append(traces, tr) })
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "d"}}); !errors.Is(err, lost) {
		t.Fatalf("Reconcile error %v, want the lost answer", err)
	}
	if len(traces) != 1 || traces[0].Row != "T02" || !strings.Contains(traces[0].Unwritten, "context canceled") {
		t.Fatalf("traces %+v, want T02 with the failed write", traces)
	}
	select {
	case e := <-rec.Events:
		t.Errorf("Event recorded for a write not known to have landed: %s", e)
	default:
	}
	got, err := getDoor(ctx, ns, "d")
	if err != nil {
		t.Fatal(err)
	}
	if st := doorStatus(got).GetRecord().State; st != "Open" {
		t.Errorf("state %q: the write was meant to land", st)
	}
}

// createOpenDoor creates Door "d" asking to be open, never reconciled yet:
// its first reconcile fires T02 (label it, state Open).
func createOpenDoor(t *testing.T, ns string) {
	t.Helper()
	d := newDoor()
	d.SetNamespace(ns)
	d.SetName("d")
	_ = unstructured.SetNestedField(d.Object, true, "spec", "open")
	if err := env.Client.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// unwrittenCount reads krtt_transitions_total for a door row whose result
// was not written.
func unwrittenCount(t *testing.T, table, row string) float64 {
	t.Helper()
	var m dto.Metric
	if err := transitionsTotal.WithLabelValues("door", table, row, unwrittenOutcome).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
