package harness

import (
	"context"
	"testing"
	"time"

	"github.com/krtt-dev/krtt/test/framework/poll"
)

// Must ends the test at once when err is not nil: for setup steps that
// leave nothing to test when they fail. It is poll.Must, which the packages
// the harness imports (actions/machine) use in their own tests.
func Must(t testing.TB, err error) {
	t.Helper()
	poll.Must(t, err)
}

// Await polls cond (Eventually) until it holds, and ends the test naming
// what it waited for and cond's last error when timeout (Scaled to this
// machine) passes first: it is poll.Await.
func Await(t testing.TB, timeout time.Duration, what string, cond func(context.Context) error) {
	t.Helper()
	poll.Await(t, timeout, what, cond)
}
