// Package poll is the one polling helper of krtt's tests and tools: wait
// for a condition with a deadline, never a fixed sleep in its place.
package poll

import (
	"context"
	"fmt"
	"time"
)

// Interval is how often Until asks.
const Interval = 100 * time.Millisecond

// Until calls cond every Interval until it returns nil or timeout passes;
// the error then wraps cond's last answer, which says what was still missing.
func Until(ctx context.Context, timeout time.Duration, cond func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		last := cond(ctx)
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s: %w", timeout, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-tick.C:
		}
	}
}
