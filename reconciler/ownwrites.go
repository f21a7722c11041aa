package reconciler

import (
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownWritesMemory is how long the kit trusts that the watch event of its
// own write is still on its way: after it, a cache still showing a replaced
// version is decided on as usual (a lost event must not stall an object).
const ownWritesMemory = 10 * time.Second

// ownWrites remembers, per object, the resourceVersions the controller's
// own writes replaced. A reconcile that observes one of them sees the
// object from before its own write (the cache has not caught up yet): any
// patch it made would conflict, cost a re-read and a retry, and decide on
// a stale object; the write's own watch event brings the object back, so
// the kit skips it instead.
type ownWrites struct {
	mu       sync.Mutex
	replaced map[client.ObjectKey]replacedVersions
	now      func() time.Time
}

type replacedVersions struct {
	versions []string
	at       time.Time
}

func newOwnWrites(now func() time.Time) *ownWrites {
	return &ownWrites{replaced: map[client.ObjectKey]replacedVersions{}, now: now}
}

// wrote records that a write replaced resourceVersion rv of the object.
// A nil ownWrites records nothing.
func (w *ownWrites) wrote(key client.ObjectKey, rv string) {
	if w == nil || rv == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.replaced[key]
	if w.now().Sub(r.at) > ownWritesMemory {
		r.versions = r.versions[:0]
	}
	// A reconcile writes at most metadata then status: the last few
	// versions are all a lagging cache can show.
	if len(r.versions) >= 4 {
		r.versions = r.versions[1:]
	}
	r.versions = append(r.versions, rv)
	r.at = w.now()
	w.replaced[key] = r
}

// behind reports whether rv is a version of the object one of the
// controller's recent writes replaced.
func (w *ownWrites) behind(key client.ObjectKey, rv string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.replaced[key]
	if !ok {
		return false
	}
	if w.now().Sub(r.at) > ownWritesMemory {
		delete(w.replaced, key)
		return false
	}
	for _, v := range r.versions {
		if v == rv {
			return true
		}
	}
	return false
}

// forget drops what is known of an object that is gone.
func (w *ownWrites) forget(key client.ObjectKey) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.replaced, key)
}
