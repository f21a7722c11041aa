package poll

import (
	"context"
	"time"
)

// T is the part of testing.TB that Must and Await use; an interface, so
// this package (which the operator's own code imports) does not link the
// testing package into binaries.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Must ends the test at once when err is not nil: for setup steps that
// leave nothing to test when they fail.
func Must(t T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// Await polls cond (Until) until it holds, and ends the test naming what it
// waited for and cond's last error when timeout, Scaled to this machine,
// passes first. Timeout is the right deadline for most waits.
func Await(t T, timeout time.Duration, what string, cond func(context.Context) error) {
	t.Helper()
	if err := Until(context.Background(), Scaled(timeout), cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
