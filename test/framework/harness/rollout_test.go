package harness

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func rolloutMachine(name, set string, ready, deleting bool) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name,
		OwnerReferences: []metav1.OwnerReference{{Kind: "MachineSet", Name: set, Controller: ptr.To(true)}}}}
	if ready {
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue},
			{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue}}
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

func revisionSet(name, tpl string, revision string) clusterv1.MachineSet {
	ms := clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		Annotations: map[string]string{clusterv1.RevisionAnnotation: revision}}}
	ms.Spec.Template.Spec.InfrastructureRef.Name = tpl
	return ms
}

func setMachine(name string, ms clusterv1.MachineSet, ready, deleting bool) clusterv1.Machine {
	m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name,
		OwnerReferences: []metav1.OwnerReference{{Kind: "MachineSet", Name: ms.Name, UID: ms.UID, Controller: ptr.To(true)}}}}
	if ready {
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue},
			{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue}}
	}
	if deleting {
		m.DeletionTimestamp = &metav1.Time{Time: time.Unix(1000, 0)}
	}
	return m
}

func reporting(replicas, updated, available int32, observed bool) *clusterv1.MachineDeployment {
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", Generation: 2}}
	md.Status = clusterv1.MachineDeploymentStatus{Replicas: replicas, UpdatedReplicas: updated, AvailableReplicas: available, ObservedGeneration: 1}
	if observed {
		md.Status.ObservedGeneration = 2
	}
	return md
}

// A rollout of 2 is done only when both Machines are of the newest set of
// the new templates and available and the deployment says so of its
// latest spec; every way to fall short keeps it waiting.
func TestRolledOut(t *testing.T) {
	old, cur := revisionSet("md-old", "v1", "1"), revisionSet("md-new", "v2", "2")
	sets := []clusterv1.MachineSet{old, cur}
	done := []clusterv1.Machine{setMachine("n1", cur, true, false), setMachine("n2", cur, true, false)}

	if ok, where := RolledOut(reporting(2, 2, 2, true), sets, done, "v2", 2); !ok {
		t.Fatalf("rolled out: %s", where)
	}
	for name, tc := range map[string]struct {
		md       *clusterv1.MachineDeployment
		sets     []clusterv1.MachineSet
		machines []clusterv1.Machine
	}{
		"no set of the new templates yet": {reporting(2, 2, 2, true), []clusterv1.MachineSet{old}, done},
		"an old Machine is left":          {reporting(2, 2, 2, true), sets, append(done[:1:1], setMachine("o1", old, true, false))},
		"an old Machine is being deleted": {reporting(2, 2, 2, true), sets, append(done[:2:2], setMachine("o1", old, false, true))},
		"a new Machine is not Ready":      {reporting(2, 2, 2, true), sets, []clusterv1.Machine{done[0], setMachine("n2", cur, false, false)}},
		"too few Machines":                {reporting(2, 2, 2, true), sets, done[:1]},
		"the spec is not observed yet":    {reporting(2, 2, 2, false), sets, done},
		"the status lags":                 {reporting(2, 1, 2, true), sets, done},
	} {
		if ok, where := RolledOut(tc.md, tc.sets, tc.machines, "v2", 2); ok {
			t.Errorf("%s: rolled out (%s)", name, where)
		}
	}
	_, where := RolledOut(reporting(3, 1, 2, true), sets, append(done[:1:1], setMachine("o1", old, true, false), setMachine("o2", old, false, true)), "v2", 2)
	if !strings.Contains(where, "revision 1: 2 (1 deleting), revision 2: 1") || !strings.Contains(where, "2 available") {
		t.Errorf("where = %q, want the Machines per revision and the available count", where)
	}
	if got := SetReplicas([]clusterv1.MachineSet{withReplicas(old, 1), withReplicas(cur, 2)}); got != "revision 1 → 1, revision 2 → 2" {
		t.Errorf("SetReplicas = %q", got)
	}
}

func withReplicas(ms clusterv1.MachineSet, n int32) clusterv1.MachineSet {
	ms.Spec.Replicas = ptr.To(n)
	return ms
}
