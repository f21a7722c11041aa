package main

import (
	"context"
	"errors"
)

// recording is what the bench records over one phase: each process's CPU
// and the API server's requests (measurePhase) and, with -profile, the
// controller's profiles (startPhaseProfile).
type recording struct {
	cpu   func() error
	prof  *phaseProfile
	ended bool
}

// record starts recording a phase of the controller; profile names the
// phase's profile files (create, delete), phase its line in the report.
func record(ctx context.Context, b *bench, ps procs, controller, profile, phase string, res *Result) (*recording, error) {
	prof, err := startPhaseProfile(ctx, b, ps, profile, res)
	if err != nil {
		return nil, err
	}
	cpu, err := measurePhase(ctx, b, ps, controller, phase, res)
	if err != nil {
		return nil, errors.Join(err, prof.end(ctx))
	}
	return &recording{cpu: cpu, prof: prof}, nil
}

// end adds the phase's CPU and requests to the result and writes its
// profiles.
func (r *recording) end(ctx context.Context) error {
	r.ended = true
	return errors.Join(r.cpu(), r.prof.end(ctx))
}

// stop ends the profiles of a phase that failed before end. After end it
// does nothing: end already returned the profiles' error, which the
// caller's deferred stop would otherwise report a second time.
func (r *recording) stop(ctx context.Context) error {
	if r.ended {
		return nil
	}
	return r.prof.end(ctx)
}
