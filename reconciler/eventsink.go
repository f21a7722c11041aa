package reconciler

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventSink writes the Events of a manager's controllers (events.k8s.io/v1)
// with a memory bound. client-go's events broadcaster keeps every Event it
// wrote for six to twelve minutes, to fold repeats into a series; with the
// regarding object's resourceVersion in the key, a controller that writes
// status on each state change almost never repeats one, so at 10,000
// Machines that cache held tens of thousands of Events (a tenth of the live
// heap) for nothing. The sink keeps only the last eventSinkRecent Events
// for the same folding: a repeat within eventSinkSeriesWindow is written
// as a series count on the first Event.
//
// Recording never blocks a reconcile: Events wait in queues of
// eventSinkQueue for the sink's workers, which run while the manager runs
// (Start); when a queue is full an Event is dropped and logged, as
// client-go does. The Events of one object go through one worker, in the
// order they were recorded, so a series count is never written back
// over a newer one.
type EventSink struct {
	client client.Client
	scheme *runtime.Scheme
	log    logr.Logger
	now    func() time.Time
	queues []chan *eventsv1.Event

	mu     sync.Mutex
	recent map[eventSinkKey]*list.Element
	order  *list.List // of *recentEvent, least recently seen first
	host   string
	seed   maphash.Seed
}

const (
	eventSinkQueue        = 1000
	eventSinkRecent       = 1024
	eventSinkSeriesWindow = 6 * time.Minute
	eventSinkWorkers      = 4
	eventSinkTries        = 5
)

// eventSinkKey is what makes two Events the same Event seen again (as
// client-go's series key).
type eventSinkKey struct {
	eventType, action, reason, controller string
	regarding, related                    corev1.ObjectReference
}

func keyOf(ev *eventsv1.Event) eventSinkKey {
	key := eventSinkKey{eventType: ev.Type, action: ev.Action, reason: ev.Reason, controller: ev.ReportingController, regarding: ev.Regarding}
	if ev.Related != nil {
		key.related = *ev.Related
	}
	return key
}

type recentEvent struct {
	key   eventSinkKey
	event *eventsv1.Event
}

// NewEventSink writes Events with c (create and patch of events.k8s.io/v1
// Events); scheme resolves the kinds of typed objects.
func NewEventSink(c client.Client, scheme *runtime.Scheme, log logr.Logger) *EventSink {
	host, _ := os.Hostname()
	s := &EventSink{client: c, scheme: scheme, log: log, now: time.Now,
		recent: map[eventSinkKey]*list.Element{}, order: list.New(), host: host, seed: maphash.MakeSeed()}
	for range eventSinkWorkers {
		s.queues = append(s.queues, make(chan *eventsv1.Event, eventSinkQueue/eventSinkWorkers))
	}
	return s
}

// Recorder is the EventRecorder of one controller: its Events carry the
// controller's name as reportingController.
func (s *EventSink) Recorder(controller string) events.EventRecorder {
	return eventSinkRecorder{sink: s, controller: controller, instance: controller + "-" + s.host}
}

// NeedLeaderElection is false: a replica that is not the leader records
// nothing, and the leader's Events must not wait for an election.
func (s *EventSink) NeedLeaderElection() bool { return false }

// Start writes queued Events until ctx ends; Events still queued then are
// dropped (the manager is stopping).
func (s *EventSink) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, q := range s.queues {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-q:
					s.write(ctx, ev)
				}
			}
		})
	}
	wg.Wait()
	n := 0
	for _, q := range s.queues {
		n += len(q)
	}
	if n > 0 {
		s.log.V(1).Info("manager stopping: Events not written", "count", n)
	}
	return nil
}

// record folds a repeat into the series of the Event it repeats, or keeps
// the Event as the newest of the recent ones, and queues what to write.
func (s *EventSink) record(ev *eventsv1.Event) {
	key := keyOf(ev)
	now := s.now()
	s.mu.Lock()
	if el, ok := s.recent[key]; ok {
		first := el.Value.(*recentEvent).event
		last := first.EventTime.Time
		if first.Series != nil {
			last = first.Series.LastObservedTime.Time
		}
		if now.Sub(last) < eventSinkSeriesWindow {
			if first.Series == nil {
				first.Series = &eventsv1.EventSeries{Count: 1}
			}
			first.Series.Count++
			first.Series.LastObservedTime = metav1.MicroTime{Time: now}
			s.order.MoveToBack(el)
			ev = first.DeepCopy()
			s.mu.Unlock()
			s.enqueue(ev)
			return
		}
		s.order.Remove(el)
		delete(s.recent, key)
	}
	s.recent[key] = s.order.PushBack(&recentEvent{key: key, event: ev.DeepCopy()})
	for s.order.Len() > eventSinkRecent {
		oldest := s.order.Front()
		s.order.Remove(oldest)
		delete(s.recent, oldest.Value.(*recentEvent).key)
	}
	s.mu.Unlock()
	s.enqueue(ev)
}

func (s *EventSink) enqueue(ev *eventsv1.Event) {
	q := maphash.String(s.seed, string(ev.Regarding.UID)+"/"+ev.Regarding.Namespace+"/"+ev.Regarding.Name) % uint64(len(s.queues))
	select {
	case s.queues[q] <- ev:
	default:
		s.log.Error(nil, "Event queue full: Event dropped", "object", ev.Regarding, "reason", ev.Reason, "note", ev.Note)
	}
}

// write creates an Event, or patches the series of one already written
// (creating it when it is gone), retrying what the API server may accept
// later.
func (s *EventSink) write(ctx context.Context, ev *eventsv1.Event) {
	for try := 1; ; try++ {
		err := s.writeOnce(ctx, ev)
		if err == nil {
			return
		}
		if apierrors.IsAlreadyExists(err) && ev.Series == nil || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) ||
			apierrors.IsBadRequest(err) || try >= eventSinkTries {
			s.log.Error(err, "Event not written", "object", ev.Regarding, "reason", ev.Reason, "note", ev.Note, "tries", try)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(try) * time.Second):
		}
	}
}

func (s *EventSink) writeOnce(ctx context.Context, ev *eventsv1.Event) error {
	if ev.Series != nil {
		patch, err := json.Marshal(map[string]any{"series": ev.Series})
		if err != nil {
			return err
		}
		cur := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ev.Namespace, Name: ev.Name}}
		err = s.client.Patch(ctx, cur, client.RawPatch(types.MergePatchType, patch))
		if !apierrors.IsNotFound(err) {
			return err
		}
	}
	c := ev.DeepCopy()
	c.ResourceVersion = ""
	return s.client.Create(ctx, c)
}

type eventSinkRecorder struct {
	sink                 *EventSink
	controller, instance string
}

// Eventf records an Event about regarding, as client-go's recorder does:
// the same name, namespace, time and references.
func (r eventSinkRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	s := r.sink
	ref, err := reference.GetReference(s.scheme, regarding)
	if err != nil {
		s.log.Error(err, "no reference to the object: Event not recorded", "reason", reason)
		return
	}
	var rel *corev1.ObjectReference
	if related != nil {
		if rel, err = reference.GetReference(s.scheme, related); err != nil {
			rel = nil
		}
	}
	if !util.ValidateEventType(eventtype) {
		s.log.Error(nil, "unsupported Event type: Event not recorded", "type", eventtype, "reason", reason)
		return
	}
	now := s.now()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: util.GenerateEventName(ref.Name, now.UnixNano()), Namespace: ns},
		EventTime:           metav1.MicroTime{Time: now},
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             rel,
		Note:                fmt.Sprintf(note, args...),
		Type:                eventtype,
	}
	s.log.V(1).Info(ev.Note, "type", ev.Type, "object", ev.Regarding, "reason", ev.Reason, "action", ev.Action, "controller", ev.ReportingController)
	s.record(ev)
}
