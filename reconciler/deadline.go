package reconciler

import (
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
	now  func() time.Time
	mu   sync.Mutex
	at   map[client.ObjectKey]time.Time
	kick chan struct{}
}

func newDeadlines(now func() time.Time) *deadlines {
	return &deadlines{now: now, at: map[client.ObjectKey]time.Time{}, kick: make(chan struct{}, 1)}
}

// set replaces the object's deadline; a zero time removes it.
func (d *deadlines) set(key client.ObjectKey, at time.Time) {
	d.mu.Lock()
	prev, had := d.at[key]
	if at.IsZero() {
		delete(d.at, key)
	} else {
		d.at[key] = at
	}
	d.mu.Unlock()
	if !at.IsZero() && (!had || !prev.Equal(at)) {
		d.jumped()
	}
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
// and how long until the next one (0: none left).
func (d *deadlines) due() ([]client.ObjectKey, time.Duration) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	var keys []client.ObjectKey
	var next time.Duration
	for k, at := range d.at {
		if left := at.Sub(now); left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		keys = append(keys, k)
		delete(d.at, k)
	}
	return keys, next
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
