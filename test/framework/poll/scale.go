package poll

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

// ScaleEnv names a factor every test deadline is multiplied by: a slow or
// shared CI machine sets it (say 3) rather than have tests fail there.
const ScaleEnv = "KRTT_TEST_TIMEOUT_SCALE"

// DefaultTimeout is the deadline of a test waiting on the system under test
// when it has no reason for another one, before Scaled.
const DefaultTimeout = 60 * time.Second

// Timeout is DefaultTimeout scaled to this machine: the one default deadline
// of tests' waits.
func Timeout() time.Duration { return Scaled(DefaultTimeout) }

// Scaled is d stretched for this machine: times $KRTT_TEST_TIMEOUT_SCALE
// (1 when unset), and times 4/GOMAXPROCS below 4 processors, since the
// control planes and the controllers under test then share fewer cores than
// the deadlines were chosen on. A starved machine makes tests slower, not
// red; a wait that succeeds returns as soon as it does, so a longer
// deadline costs only failing tests time.
func Scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * scale)
}

var scale = factor(os.Getenv(ScaleEnv), runtime.GOMAXPROCS(0))

func factor(env string, procs int) float64 {
	f := 1.0
	if env != "" {
		v, err := strconv.ParseFloat(env, 64)
		if err != nil || v <= 0 {
			// A typo must not quietly shorten every deadline.
			panic(fmt.Sprintf("$%s=%q: want a positive number", ScaleEnv, env))
		}
		f = v
	}
	if procs > 0 && procs < 4 {
		f *= 4 / float64(procs)
	}
	return f
}
