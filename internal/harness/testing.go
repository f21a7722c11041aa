package harness

import (
	"context"
	"testing"
	"time"
)

// Must ends the test at once when err is not nil: for setup steps that
// leave nothing to test when they fail.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Await polls cond (Eventually) until it holds, and ends the test naming
// what it waited for and cond's last error when timeout passes first.
func Await(t testing.TB, timeout time.Duration, what string, cond func(context.Context) error) {
	t.Helper()
	if err := Eventually(context.Background(), timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
