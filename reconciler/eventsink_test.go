package reconciler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func configMap(ns, name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv}}
}

func sinkScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Events reach the API server as client-go's recorder writes them; the
// same Event again (same object version, type, reason and row) becomes a
// series count on the first rather than a second Event.
func TestEventSinkWritesEventsAndFoldsRepeats(t *testing.T) {
	ns := createNamespace(t, "events")
	sink := NewEventSink(env.Client, sinkScheme(t), logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = sink.Start(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	rec := sink.Recorder("krtt-test-controller")
	cm := configMap(ns, "a", "7")
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "DrainFailed", "D09", "evicting %d Pods failed", 2)
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "DrainFailed", "D09", "evicting %d Pods failed", 2)
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "DrainFailed", "D09", "evicting %d Pods failed", 3)
	rec.Eventf(configMap(ns, "a", "8"), nil, corev1.EventTypeNormal, "Running", "N31", "Provisioned → Running")

	var got []eventsv1.Event
	err := poll(ctx, func(ctx context.Context) error {
		l := &eventsv1.EventList{}
		if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			return err
		}
		got = l.Items
		if len(got) != 2 {
			return fmt.Errorf("%d Events, want 2", len(got))
		}
		for _, e := range got {
			if e.Reason == "DrainFailed" && (e.Series == nil || e.Series.Count != 3) {
				return fmt.Errorf("DrainFailed series %+v, want count 3", e.Series)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v: %+v", err, got)
	}
	for _, e := range got {
		if e.ReportingController != "krtt-test-controller" || e.Regarding.Name != "a" || e.Regarding.Kind != "ConfigMap" || e.EventTime.IsZero() {
			t.Errorf("Event %s: controller %q regarding %+v time %v", e.Name, e.ReportingController, e.Regarding, e.EventTime)
		}
		switch e.Reason {
		case "DrainFailed":
			// A series keeps the first Event's words.
			if e.Type != corev1.EventTypeWarning || e.Action != "D09" || e.Note != "evicting 2 Pods failed" {
				t.Errorf("DrainFailed Event %+v", e)
			}
		case "Running":
			if e.Type != corev1.EventTypeNormal || e.Action != "N31" || e.Series != nil {
				t.Errorf("Running Event %+v", e)
			}
		default:
			t.Errorf("unexpected Event %+v", e)
		}
	}
}

// The sink's memory is bounded whatever the number of Events: it keeps the
// last eventSinkRecent for folding repeats, and a repeat of one it no
// longer keeps, or older than the series window, is a new Event.
func TestEventSinkKeepsOnlyRecentEvents(t *testing.T) {
	sink := NewEventSink(nil, sinkScheme(t), logr.Discard())
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sink.now = func() time.Time { return now }
	rec := sink.Recorder("krtt-test-controller")
	drain := func() (n int, series int32) {
		for _, q := range sink.queues {
			for len(q) > 0 {
				e := <-q
				n++
				if e.Series != nil {
					series = e.Series.Count
				}
			}
		}
		return n, series
	}
	for i := range 3 * eventSinkRecent {
		rec.Eventf(configMap("ns", fmt.Sprintf("m%d", i), "1"), nil, corev1.EventTypeNormal, "Running", "N31", "up")
		now = now.Add(time.Millisecond)
		if i%100 == 99 {
			drain()
		}
	}
	drain()
	if len(sink.recent) != eventSinkRecent || sink.order.Len() != eventSinkRecent {
		t.Fatalf("kept %d (%d in order), want %d", len(sink.recent), sink.order.Len(), eventSinkRecent)
	}
	// The newest is still kept: its repeat is a series.
	rec.Eventf(configMap("ns", fmt.Sprintf("m%d", 3*eventSinkRecent-1), "1"), nil, corev1.EventTypeNormal, "Running", "N31", "up")
	if n, series := drain(); n != 1 || series != 2 {
		t.Errorf("repeat of the newest: %d written, series count %d; want 1 with count 2", n, series)
	}
	// The first was let go: its repeat is a new Event.
	rec.Eventf(configMap("ns", "m0", "1"), nil, corev1.EventTypeNormal, "Running", "N31", "up")
	if n, series := drain(); n != 1 || series != 0 {
		t.Errorf("repeat of the oldest: %d written, series count %d; want 1 without series", n, series)
	}
	// A repeat after the series window is a new Event too.
	now = now.Add(eventSinkSeriesWindow)
	rec.Eventf(configMap("ns", "m0", "1"), nil, corev1.EventTypeNormal, "Running", "N31", "up")
	if n, series := drain(); n != 1 || series != 0 {
		t.Errorf("repeat after the window: %d written, series count %d; want 1 without series", n, series)
	}
	if len(sink.recent) != eventSinkRecent {
		t.Errorf("kept %d, want %d", len(sink.recent), eventSinkRecent)
	}
}

// A full queue drops the Event rather than block the reconcile that
// records it.
func TestEventSinkNeverBlocksARecord(t *testing.T) {
	sink := NewEventSink(nil, sinkScheme(t), logr.Discard())
	rec := sink.Recorder("krtt-test-controller")
	for i := range 2 * eventSinkQueue {
		rec.Eventf(configMap("ns", fmt.Sprintf("m%d", i), "1"), nil, corev1.EventTypeNormal, "Running", "N31", "up")
	}
	queued := 0
	for _, q := range sink.queues {
		if len(q) != cap(q) {
			t.Errorf("a queue holds %d of %d", len(q), cap(q))
		}
		queued += len(q)
	}
	if queued != eventSinkQueue {
		t.Errorf("queued %d, want %d", queued, eventSinkQueue)
	}
}
