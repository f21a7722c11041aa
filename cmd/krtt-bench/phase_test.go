package main

import (
	"context"
	"errors"
	"testing"
)

// A phase whose profiles fail reports it once: from end, not again from the
// deferred stop; a phase that fails before end still has its profiles ended
// (and their error reported) by stop.
func TestRecordingReportsProfileErrorOnce(t *testing.T) {
	ctx := context.Background()
	failing := func() *phaseProfile {
		p := &phaseProfile{stop: make(chan struct{})}
		p.once.Do(func() { p.err = errors.New("profile failed") })
		return p
	}
	r := &recording{cpu: func() error { return nil }, prof: failing()}
	if err := r.end(ctx); err == nil {
		t.Fatal("end hid the profiles' error")
	}
	if err := r.stop(ctx); err != nil {
		t.Fatalf("stop after end reported again: %v", err)
	}
	early := &recording{cpu: func() error { return nil }, prof: failing()}
	if err := early.stop(ctx); err == nil {
		t.Fatal("stop before end hid the profiles' error")
	}
}
