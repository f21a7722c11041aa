package cluster_test

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusteractions "github.com/krtt-dev/krtt/actions/cluster"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/observertest"
)

// FuzzClusterObservers builds a Scope from a fuzzed Cluster, connection
// state and reconnection times (zero, far past, far future, sub-second) and
// observes every fact of the shipped Cluster set through the registry: no
// observer may panic, and each must return one of its fact's declared values
// (Observe refuses anything else). The connection's state is one
// internal/remote can report; everything else is fuzzed freely.
func FuzzClusterObservers(f *testing.F) {
	_, runner, set := observertest.Shipped(f, clusteractions.RegistryName, clusteractions.Registry())

	// found, state (index into remote.States), flags (bit per: cluster deleting, paused, reconnect time recorded,
	// reachable again, apiError), reachableAgain offset, recorded reconnect offset.
	f.Add(true, uint8(0), uint8(0), int64(0), int64(0))
	f.Add(true, uint8(0), uint8(0x0c), int64(time.Minute), int64(0))
	f.Add(true, uint8(0), uint8(0x0c), int64(500*time.Millisecond), int64(0))
	f.Add(true, uint8(2), uint8(0x1f), int64(-1<<62), int64(1<<62))
	f.Add(false, uint8(3), uint8(0x10), int64(0), int64(0))
	f.Add(true, uint8(1), uint8(0x0b), int64(1<<62), int64(-1<<62))

	f.Fuzz(func(t *testing.T, found bool, state, flags uint8, reachableAgain, recorded int64) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		bit := func(i int) bool { return flags&(1<<i) != 0 }
		s := &clusteractions.Scope{Found: found, Workload: remote.Connection{State: remote.States[int(state)%len(remote.States)]}}
		if bit(4) {
			s.Err = errors.New("injected")
		}
		if bit(3) {
			s.Workload.ReachableAgain = now.Add(time.Duration(reachableAgain))
		}
		if found {
			c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
			if bit(0) {
				c.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			}
			c.Spec.Paused = bit(1)
			if bit(2) {
				// The recorded time is relative to the reconnection, so the
				// seeds reach "recorded just before", "same second" and "after".
				c.Status.WorkloadClusterReconnectTime = ptr.To(metav1.NewTime(now.Add(time.Duration(reachableAgain) + time.Duration(recorded))))
			}
			s.Cluster = c
		}

		observertest.Observe(t, runner, set, s)
	})
}
