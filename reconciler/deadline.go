package reconciler

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deadlines wakes each object when the timeout of its state's wait ends:
// one deadline per object (the last reconcile's), kept in memory and
// timed by the kit's clock. A row that waits says nothing about when to
// look again; without this an object whose timeout passed with nothing
// else happening would never be decided again, and its timeout row would
// never fire.
//
// The loop sleeps until the earliest deadline as the clock reads it. A
// clock that can jump (a test clock a scenario advances) says so through
// jumped, and the loop reads it again at once; the real clock only
// passes, so production and tests wake objects the same way: when the
// kit's clock reaches the deadline.
type deadlines struct {
	now func() time.Time
	mu  sync.Mutex
	at  map[client.ObjectKey]time.Time
	// soonest orders the deadlines; an entry whose time is no longer the
	// object's (replaced or removed) is skipped when it comes up, so a set
	// costs O(log n) whatever the fleet, never a scan of every object.
	soonest deadlineHeap
	// planned is when the loop means to look next: only a deadline before
	// it needs the loop woken early.
	planned time.Time
	kick    chan struct{}
}

type deadlineEntry struct {
	key client.ObjectKey
	at  time.Time
}

// deadlineHeap is a min-heap of deadlines (container/heap).
type deadlineHeap []deadlineEntry

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(deadlineEntry)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newDeadlines(now func() time.Time) *deadlines {
	return &deadlines{now: now, at: map[client.ObjectKey]time.Time{}, kick: make(chan struct{}, 1)}
}

// set replaces the object's deadline; a zero time removes it.
func (d *deadlines) set(key client.ObjectKey, at time.Time) {
	d.mu.Lock()
	prev, had := d.at[key]
	changed := !at.IsZero() && (!had || !prev.Equal(at))
	early := false
	if at.IsZero() {
		delete(d.at, key)
	} else if changed {
		d.at[key] = at
		heap.Push(&d.soonest, deadlineEntry{key: key, at: at})
		early = d.planned.IsZero() || at.Before(d.planned)
		d.compact()
	}
	d.mu.Unlock()
	if early {
		d.jumped()
	}
}

// compact drops the stale entries once they outnumber the live ones, so
// deadlines that keep moving cannot grow the heap without bound.
func (d *deadlines) compact() {
	if len(d.soonest) <= 2*len(d.at)+64 {
		return
	}
	d.soonest = d.soonest[:0]
	for k, at := range d.at {
		d.soonest = append(d.soonest, deadlineEntry{key: k, at: at})
	}
	heap.Init(&d.soonest)
}

// get returns the object's deadline, zero when it has none.
func (d *deadlines) get(key client.ObjectKey) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at[key]
}

// jumped makes the loop read the clock and the deadlines again.
func (d *deadlines) jumped() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// due removes and returns the objects whose deadline the clock reached,
// and how long until the next one (0: none left). It plans the loop's
// next look at that deadline.
func (d *deadlines) due() ([]client.ObjectKey, time.Duration) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	var keys []client.ObjectKey
	for len(d.soonest) > 0 {
		e := d.soonest[0]
		if cur, ok := d.at[e.key]; !ok || !cur.Equal(e.at) {
			heap.Pop(&d.soonest)
			continue
		}
		if e.at.After(now) {
			d.planned = e.at
			return keys, e.at.Sub(now)
		}
		heap.Pop(&d.soonest)
		keys = append(keys, e.key)
		delete(d.at, e.key)
	}
	d.planned = time.Time{}
	return keys, 0
}

// run wakes objects through wake until ctx ends.
func (d *deadlines) run(ctx context.Context, wake func(context.Context, client.ObjectKey)) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		keys, next := d.due()
		for _, k := range keys {
			wake(ctx, k)
		}
		if next == 0 {
			next = time.Hour
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-d.kick:
		}
	}
}
