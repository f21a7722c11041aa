package harness

import (
	"sync"
	"time"
)

// Clock is the operator's clock in tests: real time plus an offset that
// scenarios advance to let a timeout pass without waiting for it.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now is the operator's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// Reset goes back to real time. Scenarios that advanced the clock reset it
// when they end, so timestamps the API server writes (a deletionTimestamp)
// and the operator's clock agree again for the scenarios after them.
func (c *Clock) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = 0
}
