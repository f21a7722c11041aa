package engine

import "context"

// RunningAction describes the action a context was handed to: which set
// and object it acts for and what it promised about its writes. A test may
// audit the requests an action sends against its markers (a Pure action
// that writes, a WritesThrough action that writes the object it is
// reconciling) without the action's help.
type RunningAction struct {
	Set    string
	Object string
	Action string
	// Pure and WritesThrough are the action's markers (Entry).
	Pure, WritesThrough bool
}

type runningKey struct{}

// RunningActionOf returns the action that ctx was handed to, if any.
func RunningActionOf(ctx context.Context) (RunningAction, bool) {
	a, ok := ctx.Value(runningKey{}).(RunningAction)
	return a, ok
}

// WithRunningAction returns ctx naming a as the running action; the Runner
// hands every action such a context.
func WithRunningAction(ctx context.Context, a RunningAction) context.Context {
	return context.WithValue(ctx, runningKey{}, a)
}
