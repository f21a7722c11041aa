package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const pollEvery = 250 * time.Millisecond

// parallel runs fn(0..n-1) on workers goroutines; the first error wins.
func parallel(workers, n int, fn func(int) error) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errOnce.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// poll describes one wait: which objects of which kind, and what each must
// reach. done gets the listed object, or nil when it is not listed.
type poll struct {
	gvk       schema.GroupVersionKind
	namespace string
	names     []string
	what      string // "Running", "gone", … for messages
	timeout   time.Duration
	done      func(*unstructured.Unstructured) bool
	// describe sums up an object still waited for (its phase, state …) for
	// the progress and timeout messages.
	describe func(*unstructured.Unstructured) string
}

// wait lists the objects once, then follows them with a watch, until each
// name satisfied done once, and returns when each was first seen so. On
// timeout it says how many made it and what the rest look like.
//
// It watches rather than lists every pollEvery: at N = 5,000 a full list of
// the Machines is tens of MB, and listing it four times a second loaded the
// API server more than the controller under test. A failed list or watch
// (an API server busy at this scale) is retried until the deadline, not
// taken for the end of the run.
func (p poll) wait(ctx context.Context, c client.WithWatch) (map[string]time.Time, error) {
	t := newTracker(p)
	deadline := time.Now().Add(p.timeout)
	lastLog := time.Now()
	rv := ""
	for {
		if rv == "" {
			list := p.newList()
			if err := c.List(ctx, list, client.InNamespace(p.namespace)); err != nil {
				if ctx.Err() != nil {
					return t.seen, ctx.Err()
				}
				logf("listing %ss failed, retrying: %v", p.gvk.Kind, err)
			} else {
				t.replace(list.Items, time.Now())
				rv = list.GetResourceVersion()
			}
		}
		if t.done() {
			return t.seen, nil
		}
		if rv != "" {
			var err error
			rv, err = p.follow(ctx, c, rv, deadline, t, &lastLog)
			if err != nil {
				return t.seen, err
			}
			if t.done() {
				return t.seen, nil
			}
		}
		if time.Now().After(deadline) {
			return t.seen, fmt.Errorf("only %d of %d %ss %s within %s (the others: %s)",
				len(t.seen), len(p.names), p.gvk.Kind, p.what, p.timeout, summary(t.pending()))
		}
		if rv == "" {
			if err := sleep(ctx, pollEvery); err != nil {
				return t.seen, err
			}
		}
	}
}

func (p poll) newList() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(p.gvk.GroupVersion().WithKind(p.gvk.Kind + "List"))
	return list
}

// follow watches from rv until every name is done, the deadline passes or
// the watch ends; it returns the resourceVersion to go on from ("" when the
// watch cannot resume and the objects must be listed again).
func (p poll) follow(ctx context.Context, c client.WithWatch, rv string, deadline time.Time, t *tracker, lastLog *time.Time) (string, error) {
	w, err := c.Watch(ctx, p.newList(), client.InNamespace(p.namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
	if err != nil {
		if ctx.Err() != nil {
			return rv, ctx.Err()
		}
		logf("watching %ss failed, listing again: %v", p.gvk.Kind, err)
		return "", nil
	}
	defer w.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !t.done() {
		select {
		case <-ctx.Done():
			return rv, ctx.Err()
		case <-tick.C:
			if time.Now().After(deadline) {
				return rv, nil
			}
			if time.Since(*lastLog) > 10*time.Second {
				logf("%d/%d %ss %s (the others: %s)", len(t.seen), len(p.names), p.gvk.Kind, p.what, summary(t.pending()))
				*lastLog = time.Now()
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil
			}
			switch ev.Type {
			case watch.Error:
				// Mostly "too old resource version": list again.
				return "", nil
			case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					return "", nil
				}
				rv = u.GetResourceVersion()
				if ev.Type == watch.Bookmark {
					continue
				}
				if ev.Type == watch.Deleted {
					t.update(u.GetName(), nil, time.Now())
				} else {
					t.update(u.GetName(), u, time.Now())
				}
			}
		}
	}
	return rv, nil
}

// tracker holds the latest view of every object waited for and when each
// was first seen done.
type tracker struct {
	p       poll
	wanted  map[string]bool
	objects map[string]*unstructured.Unstructured
	seen    map[string]time.Time
}

func newTracker(p poll) *tracker {
	t := &tracker{p: p, wanted: make(map[string]bool, len(p.names)),
		objects: map[string]*unstructured.Unstructured{}, seen: make(map[string]time.Time, len(p.names))}
	for _, n := range p.names {
		t.wanted[n] = true
	}
	return t
}

// replace takes a full list as the new view.
func (t *tracker) replace(items []unstructured.Unstructured, now time.Time) {
	t.objects = make(map[string]*unstructured.Unstructured, len(items))
	for i := range items {
		if t.wanted[items[i].GetName()] {
			t.objects[items[i].GetName()] = &items[i]
		}
	}
	for name := range t.wanted {
		t.check(name, now)
	}
}

// update applies one watch event (obj nil: deleted).
func (t *tracker) update(name string, obj *unstructured.Unstructured, now time.Time) {
	if !t.wanted[name] {
		return
	}
	if obj == nil {
		delete(t.objects, name)
	} else {
		t.objects[name] = obj
	}
	t.check(name, now)
}

func (t *tracker) check(name string, now time.Time) {
	if _, ok := t.seen[name]; ok {
		return
	}
	if t.p.done(t.objects[name]) {
		t.seen[name] = now
	}
}

func (t *tracker) done() bool { return len(t.seen) == len(t.wanted) }

// pending sums up the objects still waited for by describe.
func (t *tracker) pending() map[string]int {
	out := map[string]int{}
	for name := range t.wanted {
		if _, ok := t.seen[name]; !ok {
			out[t.p.describe(t.objects[name])]++
		}
	}
	return out
}

// summary renders counts as "a: 3, b: 1", largest first.
func summary(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// phaseIs is a poll.done that wants status.phase == phase.
func phaseIs(phase string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		if u == nil {
			return false
		}
		p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return p == phase
	}
}

// absent is a poll.done that wants the object gone.
func absent(u *unstructured.Unstructured) bool { return u == nil }

// phaseOf is a poll.describe by status.phase.
func phaseOf(u *unstructured.Unstructured) string {
	if u == nil {
		return "not found"
	}
	p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	if p == "" {
		return "no phase yet"
	}
	return p
}
