package reconciler

import (
	"context"

	"github.com/krtt-dev/krtt/engine"
)

// ObserveError is embedded in a controller's scope: the first API error met
// while observing. Facts read what could be observed; a row that must not
// decide on a partial picture fails with this error (ReportObserveError), so
// its onFailure names it.
type ObserveError struct {
	// Err is the first API error met while observing.
	Err error
}

// Keep records err unless an earlier one is kept: the first error is the one
// the rest of the observation went wrong from.
func (o *ObserveError) Keep(err error) {
	if o.Err == nil {
		o.Err = err
	}
}

// ObservedError returns the kept error.
func (o *ObserveError) ObservedError() error { return o.Err }

// ReportObserveError is the action that fails with the kept error. A scope
// without one is a wiring mistake (a row called it without the fact that
// says an error was kept), and fails saying so rather than succeeding.
func ReportObserveError[S interface{ ObservedError() error }](_ context.Context, s S) engine.Outcome {
	if err := s.ObservedError(); err != nil {
		return engine.Fail(err)
	}
	return engine.Failf("an API error was observed but not kept")
}
