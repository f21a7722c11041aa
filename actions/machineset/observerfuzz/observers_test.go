// Package observerfuzz fuzzes the MachineSet fact observers. It lives apart
// from actions/machineset so the fuzzing workers do not each start the
// control plane that package's TestMain needs.
package observerfuzz_test

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	machinesetactions "github.com/krtt-dev/krtt/actions/machineset"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/observertest"
)

// FuzzMachineSetObservers builds a Scope from fuzzed MachineSet fields,
// remediation limits and Machine counts (negative and absurd ones too) and
// observes every fact of the shipped MachineSet set through the registry:
// no observer may panic, and each must return one of its fact's declared
// values (Observe refuses anything else).
func FuzzMachineSetObservers(f *testing.F) {
	_, runner, set := observertest.Shipped(f, machinesetactions.RegistryName, machinesetactions.Registry())

	// found, flags (bit per: deleting, finalizer, paused annotation, replicas set, maxInFlight set, maxUnhealthy set,
	// apiError), cluster (0 none, 1 found, 2 paused), replicas, maxUnhealthy, maxInFlight,
	// counts live, active, failed, deleting, inFlight, lists (owned, orphans, strays, missing templates; 2 bits each).
	f.Add(true, uint8(0x0a), uint8(1), int32(3), "", int32(0), int32(3), int32(3), int32(0), int32(0), int32(0), uint8(0))
	f.Add(true, uint8(0x3f), uint8(2), int32(0), "50%", int32(2), int32(20), int32(1), int32(19), int32(4), int32(3), uint8(0xff))
	f.Add(true, uint8(0x38), uint8(0), int32(-1), "abc%", int32(-5), int32(-1), int32(-7), int32(1<<30), int32(-1), int32(-2147483648), uint8(0x55))
	f.Add(true, uint8(0x28), uint8(1), int32(2147483647), "99999999999999999999%", int32(2147483647), int32(2147483647), int32(0), int32(2147483647), int32(0), int32(2147483647), uint8(0x0f))
	f.Add(false, uint8(0x40), uint8(3), int32(1), "\u00e9", int32(1), int32(0), int32(0), int32(0), int32(0), int32(0), uint8(0xf0))
	f.Add(true, uint8(0x28), uint8(1), int32(10), "7", int32(1), int32(10), int32(2), int32(8), int32(0), int32(1), uint8(0))

	f.Fuzz(func(t *testing.T, found bool, flags, cluster uint8, replicas int32, maxUnhealthy string, maxInFlight int32,
		live, active, failed, deleting, inFlight int32, lists uint8) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		bit := func(i int) bool { return flags&(1<<i) != 0 }
		s := &machinesetactions.Scope{Now: now, Found: found}
		if bit(6) {
			s.Err = errors.New("injected")
		}
		if found {
			ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ms", Annotations: map[string]string{}}}
			if bit(0) {
				ms.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			}
			if bit(1) {
				ms.Finalizers = []string{clusterv1.MachineSetFinalizer}
			}
			if bit(2) {
				ms.Annotations[clusterv1.PausedAnnotation] = ""
			}
			if bit(3) {
				ms.Spec.Replicas = ptr.To(replicas)
			}
			if bit(4) {
				ms.Spec.Remediation.MaxInFlight = ptr.To(intstr.FromInt32(maxInFlight))
			}
			if bit(5) {
				ms.Spec.Remediation.MaxUnhealthy = ptr.To(intstr.Parse(maxUnhealthy))
			}
			s.Set = ms
		}
		switch cluster % 3 {
		case 1:
			s.Cluster = &clusterv1.Cluster{}
		case 2:
			s.Cluster = &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: true}}
		}
		s.Counts = machinesetactions.Counts{Live: int(live), Active: int(active), Failed: int(failed),
			Deleting: int(deleting), InFlight: int(inFlight)}
		machines := func(shift uint) []*clusterv1.Machine {
			out := make([]*clusterv1.Machine, int(lists>>shift)&3)
			for i := range out {
				out[i] = &clusterv1.Machine{}
			}
			return out
		}
		s.Owned, s.Orphans, s.Strays = machines(0), machines(2), machines(4)
		for range int(lists>>6) & 3 {
			s.MissingTemplates = append(s.MissingTemplates, "SimMachineTemplate ns/t")
		}

		observertest.Observe(t, runner, set, s)
	})
}
