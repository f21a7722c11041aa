package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// wait lists the objects every pollEvery until each name satisfied done
// once, and returns when each was first seen so. On timeout it says how
// many made it and what the rest look like.
func (p poll) wait(ctx context.Context, c client.Reader) (map[string]time.Time, error) {
	seen := make(map[string]time.Time, len(p.names))
	deadline := time.Now().Add(p.timeout)
	lastLog := time.Now()
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(p.gvk.GroupVersion().WithKind(p.gvk.Kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(p.namespace)); err != nil {
			return nil, err
		}
		now := time.Now()
		listed := make(map[string]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			listed[list.Items[i].GetName()] = &list.Items[i]
		}
		pending := map[string]int{}
		for _, name := range p.names {
			if _, ok := seen[name]; ok {
				continue
			}
			obj := listed[name]
			if p.done(obj) {
				seen[name] = now
				continue
			}
			pending[p.describe(obj)]++
		}
		if len(seen) == len(p.names) {
			return seen, nil
		}
		if now.After(deadline) {
			return seen, fmt.Errorf("only %d of %d %ss %s within %s (the others: %s)",
				len(seen), len(p.names), p.gvk.Kind, p.what, p.timeout, summary(pending))
		}
		if time.Since(lastLog) > 10*time.Second {
			logf("%d/%d %ss %s (the others: %s)", len(seen), len(p.names), p.gvk.Kind, p.what, summary(pending))
			lastLog = time.Now()
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return seen, err
		}
	}
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
