package sim

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// TestReleaseWait: the cloud holds a deleted SimMachine for its delete delay,
// counted from the deletionTimestamp, and not at all once its VM is gone.
func TestReleaseWait(t *testing.T) {
	deleted := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sm := func(delay int32, gone bool) *simv1.SimMachine {
		m := &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: deleted}}}
		m.Spec.Sim.DeleteDelaySeconds = delay
		m.Spec.Sim.VMGone = gone
		return m
	}
	for _, tc := range []struct {
		name string
		m    *simv1.SimMachine
		now  time.Time
		want time.Duration
	}{
		{"no delay", sm(0, false), deleted, 0},
		{"delay just begun", sm(2, false), deleted, 2 * time.Second},
		{"delay half run", sm(2, false), deleted.Add(1500 * time.Millisecond), 500 * time.Millisecond},
		{"delay run out", sm(2, false), deleted.Add(2 * time.Second), 0},
		{"long past", sm(2, false), deleted.Add(time.Hour), 0},
		{"VM gone releases at once", sm(60, true), deleted, 0},
	} {
		if got := releaseWait(tc.m, tc.now); got != tc.want {
			t.Errorf("%s: releaseWait = %s, want %s", tc.name, got, tc.want)
		}
	}
}
