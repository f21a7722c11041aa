package harness

import (
	"sync"
	"time"
)

// Clock is the operator's clock in tests: real time plus an offset that
// scenarios advance to let a timeout pass without waiting for it. Each jump
// is told to the operator's controllers (OnJump), whose timers then read
// the clock again: an object whose wait deadline the jump passed wakes at
// once, as it would have when real time got there.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
	jumps  []func()
}

// OnJump registers fn to be called after each Advance or Reset (the
// operator's reconciler.Options.ClockJumps).
func (c *Clock) OnJump(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jumps = append(c.jumps, fn)
}

func (c *Clock) jumped() {
	c.mu.Lock()
	jumps := append([]func(){}, c.jumps...)
	c.mu.Unlock()
	for _, fn := range jumps {
		fn()
	}
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
	c.offset += d
	c.mu.Unlock()
	c.jumped()
}

// Reset goes back to real time. Scenarios that advanced the clock reset it
// when they end, so timestamps the API server writes (a deletionTimestamp)
// and the operator's clock agree again for the scenarios after them.
func (c *Clock) Reset() {
	c.mu.Lock()
	c.offset = 0
	c.mu.Unlock()
	c.jumped()
}
