package remote

import (
	"testing"
	"time"
)

// ReachableAgain is set when a connection becomes usable after it could
// not be used, and only then: a first success, or a probe that stays
// Connected, leave it alone.
func TestReachableAgain(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name        string
		afterOutage bool
		states      []State
		want        time.Time // ReachableAgain after the last state (states set at 1s, 2s, ...)
	}{
		{"usable from the start", false, []State{Connected, Connected}, time.Time{}},
		{"first attempt unreachable", false, []State{Unreachable, Connected}, at(2)},
		{"outage and back", false, []State{Connected, Unreachable, Unreachable, Connected, Connected}, at(4)},
		{"refused, then accepted", false, []State{Connected, NoAccess, Connected}, at(3)},
		{"back, then gone again", false, []State{Connected, Unreachable, Connected, Unreachable}, at(3)},
		{"replaced a connection that could not be used", true, []State{Connected, Connected}, at(1)},
		{"replaced one, still unreachable", true, []State{Unreachable}, time.Time{}},
	} {
		cn := &conn{afterOutage: tc.afterOutage}
		for i, st := range tc.states {
			cn.setLocked(at(i+1), st, "", "")
		}
		if got := cn.snapshot().ReachableAgain; !got.Equal(tc.want) {
			t.Errorf("%s: ReachableAgain = %s, want %s", tc.name, got, tc.want)
		}
	}
}
