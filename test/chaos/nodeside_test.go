package chaos

import (
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/timeline"
)

// nodeSideRun is a Machine on Node n1 of a workload cluster whose
// VolumeAttachment goes around the time the Machine's infrastructure object
// is deleted (its DELETE received at infraAt, answered 5 ms later). vaRecv
// and vaStage bound the VolumeAttachment's DELETE in the workload cluster's
// audit log; seen is when the workload cluster's informers received its
// removal (zero: they did not).
func nodeSideRun(vaRecv, vaStage, seen time.Time) (mgmt, wl, watched *timeline.Timeline) {
	deleting := metav1.NewTime(infraAt.Add(-time.Second))
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "m1", DeletionTimestamp: &deleting},
		Spec:       clusterv1.MachineSpec{ClusterName: "c", InfrastructureRef: clusterv1.ObjectReference{Kind: "SimMachine", Name: "m1"}},
		Status:     clusterv1.MachineStatus{State: "Running", NodeRef: &clusterv1.MachineNodeReference{Name: "n1"}},
	}
	infra := &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "m1", DeletionTimestamp: &deleting}}
	mgmt = &timeline.Timeline{Events: []timeline.Event{
		{Kind: timeline.Machine, Op: timeline.Updated, Obj: m, Recv: infraAt.Add(-time.Second), Stage: infraAt.Add(-time.Second)},
		{Kind: timeline.SimMachine, Op: timeline.Updated, Obj: infra, Recv: infraAt, Stage: infraAt.Add(5 * time.Millisecond)},
	}}
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va1", UID: "va1-uid"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}}
	wl = &timeline.Timeline{Events: []timeline.Event{
		{Kind: timeline.VolumeAttachment, Op: timeline.Added, Obj: va, Recv: infraAt.Add(-time.Minute), Stage: infraAt.Add(-time.Minute)},
		{Kind: timeline.VolumeAttachment, Op: timeline.Deleted, Obj: va, Recv: vaRecv, Stage: vaStage},
	}}
	watched = &timeline.Timeline{}
	if !seen.IsZero() {
		watched.Events = append(watched.Events, timeline.Event{At: seen, Kind: timeline.VolumeAttachment, Op: timeline.Deleted, Obj: va})
	}
	return mgmt, wl, watched
}

var infraAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The infrastructure may go only after the Node's VolumeAttachments. A
// removal whose DELETE ran at the same time as the infrastructure's is
// ordered by when the workload cluster's informers saw it gone, and is
// unverifiable only when they saw it later.
func TestCheckNodeSideOrdersRemovalsInFlight(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name             string
		vaRecv, vaStage  time.Time
		seen             time.Time
		violation        bool
		unverifiable     int
		unverifiableNote string
	}{
		{name: "answered before the infrastructure's DELETE", vaRecv: infraAt.Add(-3 * ms), vaStage: infraAt.Add(-ms)},
		{name: "in flight, seen gone before", vaRecv: infraAt.Add(-3 * ms), vaStage: infraAt.Add(2 * ms), seen: infraAt.Add(-ms)},
		{name: "in flight, seen gone after", vaRecv: infraAt.Add(-3 * ms), vaStage: infraAt.Add(2 * ms), seen: infraAt.Add(ms),
			unverifiable: 1, unverifiableNote: "was removed while its infrastructure's deletion was in flight"},
		{name: "in flight, never seen", vaRecv: infraAt.Add(-3 * ms), vaStage: infraAt.Add(2 * ms),
			unverifiable: 1, unverifiableNote: "was removed while its infrastructure's deletion was in flight"},
		{name: "received after the infrastructure's DELETE was answered", vaRecv: infraAt.Add(6 * ms), vaStage: infraAt.Add(7 * ms), seen: infraAt.Add(8 * ms),
			violation: true},
		// The informers' clock orders only what the audit log cannot: a
		// DELETE received after the infrastructure's was answered came
		// after it, whenever a watch says it saw the object go.
		{name: "received after, seen gone before", vaRecv: infraAt.Add(6 * ms), vaStage: infraAt.Add(7 * ms), seen: infraAt.Add(-ms),
			violation: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mgmt, wl, watched := nodeSideRun(tc.vaRecv, tc.vaStage, tc.seen)
			rep := checkNodeSide(mgmt, wl, watched, shared.rules, map[string]bool{}, nil, "wl.example:6443")
			var broke []string
			for _, v := range rep.violations {
				if v.Invariant == timeline.InfraAfterVolumes {
					broke = append(broke, v.Message)
				}
			}
			if got := len(broke) > 0; got != tc.violation {
				t.Errorf("%q violated: %v, want %v (%v)", timeline.InfraAfterVolumes, got, tc.violation, broke)
			}
			if rep.unverifiable != tc.unverifiable {
				t.Errorf("unverifiable %d, want %d; notes %v", rep.unverifiable, tc.unverifiable, rep.notes)
			}
			if tc.unverifiableNote != "" && !strings.Contains(strings.Join(rep.notes, "\n"), tc.unverifiableNote) {
				t.Errorf("notes %v do not say %q", rep.notes, tc.unverifiableNote)
			}
		})
	}
}
