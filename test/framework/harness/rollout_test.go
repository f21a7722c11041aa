package harness

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func rolloutMachine(name, set string, ready, deleting bool) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name,
		OwnerReferences: []metav1.OwnerReference{{Kind: "MachineSet", Name: set, Controller: ptr.To(true)}}}}
	if ready {
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue}}
	}
	if deleting {
		m.DeletionTimestamp = &metav1.Time{Time: time.Unix(1000, 0)}
	}
	return m
}

// A rolling update of 2 with maxSurge 1: the tracker keeps the most
// Machines and the fewest available seen after any event once armed, and
// ignores what happened before (the deployment coming up).
func TestRolloutTrackerKeepsTheExtremesSinceArmed(t *testing.T) {
	tr := NewRolloutTracker()
	tr.Replace(nil)
	tr.Apply(watch.Added, rolloutMachine("old-a", "old", false, false))
	tr.Apply(watch.Added, rolloutMachine("old-b", "old", false, false))
	tr.Apply(watch.Modified, rolloutMachine("old-a", "old", true, false))
	tr.Apply(watch.Modified, rolloutMachine("old-b", "old", true, false))
	tr.Arm()
	if tr.PeakMachines != 2 || tr.MinAvailable != 2 || tr.Events != 0 {
		t.Fatalf("armed with 2 available: peak %d, min %d, %d events", tr.PeakMachines, tr.MinAvailable, tr.Events)
	}

	tr.Apply(watch.Added, rolloutMachine("new-a", "new", false, false))
	// old-a is deleted before new-a is Ready (a rollout breaking
	// maxUnavailable 0): being deleted it is no longer available, but it
	// still counts as a Machine until its Deleted event.
	tr.Apply(watch.Modified, rolloutMachine("old-a", "old", true, true))
	tr.Apply(watch.Modified, rolloutMachine("new-a", "new", true, false))
	tr.Apply(watch.Added, rolloutMachine("new-b", "new", false, false))
	tr.Apply(watch.Bookmark, rolloutMachine("ignored", "new", true, false))
	tr.Apply(watch.Deleted, rolloutMachine("old-a", "old", true, true))
	tr.Apply(watch.Modified, rolloutMachine("new-b", "new", true, false))
	tr.Apply(watch.Modified, rolloutMachine("old-b", "old", true, true))
	tr.Apply(watch.Deleted, rolloutMachine("old-b", "old", true, true))

	if tr.PeakMachines != 4 {
		t.Errorf("peak %d Machines, want 4 (old-a deleting, old-b, new-a, new-b): %s", tr.PeakMachines, tr.PeakAt)
	}
	if tr.MinAvailable != 1 {
		t.Errorf("min available %d, want 1 (old-a deleting, new-a not yet Ready): %s", tr.MinAvailable, tr.MinAt)
	}
	if tr.Events != 8 {
		t.Errorf("%d events counted, want 8 (the bookmark is not one)", tr.Events)
	}
	if total, avail := tr.Counts(); total != 2 || avail != 2 {
		t.Errorf("counts %d/%d, want 2 Machines, 2 available", total, avail)
	}
	if by := tr.BySet(); len(by) != 1 || by["new"] != 2 {
		t.Errorf("by set %v, want new: 2", by)
	}

	// A relist replaces the view and is measured too.
	tr.Replace([]clusterv1.Machine{*rolloutMachine("new-a", "new", false, false)})
	if tr.MinAvailable != 0 {
		t.Errorf("after a relist with nothing available: min %d, want 0", tr.MinAvailable)
	}
}
