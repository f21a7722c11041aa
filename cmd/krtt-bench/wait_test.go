package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func machine(name, phase string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{}}
	u.SetName(name)
	if phase != "" {
		_ = unstructured.SetNestedField(u.Object, phase, "status", "phase")
	}
	return u
}

// The tracker records when each waited-for object was first seen done, from
// a list and then from watch events, and ignores objects it does not wait for.
func TestTrackerFollowsListAndEvents(t *testing.T) {
	t0 := time.Unix(1000, 0)
	running := newTracker(poll{names: []string{"a", "b"}, done: phaseIs("Running"), describe: phaseOf})
	running.replace([]unstructured.Unstructured{machine("a", "Running"), machine("b", "Pending"), machine("x", "Running")}, t0)
	if running.done() || running.seen["a"] != t0 || len(running.seen) != 1 {
		t.Fatalf("after the list: seen %v", running.seen)
	}
	if got := running.pending(); got["Pending"] != 1 || len(got) != 1 {
		t.Errorf("pending %v, want Pending: 1", got)
	}
	b := machine("b", "Running")
	running.update("b", &b, t0.Add(time.Second))
	if !running.done() || running.seen["b"] != t0.Add(time.Second) {
		t.Fatalf("after b ran: seen %v", running.seen)
	}
	// A later event does not move the first time seen.
	running.update("a", &b, t0.Add(time.Minute))
	if running.seen["a"] != t0 {
		t.Errorf("a first seen %v, want %v", running.seen["a"], t0)
	}

	gone := newTracker(poll{names: []string{"a", "b"}, done: absent, describe: phaseOf})
	gone.replace([]unstructured.Unstructured{machine("a", "Deleting")}, t0)
	if gone.seen["b"] != t0 || gone.done() {
		t.Fatalf("b was never listed, so it is gone from the start: seen %v", gone.seen)
	}
	gone.update("a", nil, t0.Add(2*time.Second))
	if !gone.done() || gone.seen["a"] != t0.Add(2*time.Second) {
		t.Fatalf("after a was deleted: seen %v", gone.seen)
	}
}
