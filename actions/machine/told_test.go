package machine

import (
	"context"
	"strings"
	"testing"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// reasons lists the reasons and notes of what the scope's actions told.
func reasons(s *Scope) string {
	var out []string
	for _, t := range s.Told.Take() {
		out = append(out, t.Reason+": "+t.Note)
	}
	return strings.Join(out, "; ")
}

func TestSetNodeRefTellsOnlyTheFirstTime(t *testing.T) {
	ctx := context.Background()
	node := newNode(t)
	m := testMachine(newNamespace(t), nil)

	s := scopeFor(t, m, node.Name)
	wantStatus(t, setNodeRef(ctx, s), engine.Done)
	if got, want := reasons(s), "SuccessfulSetNodeRef: "+node.Name; got != want {
		t.Errorf("told %q, want %q (Cluster API's reason, the Node's name)", got, want)
	}

	// Every later reconcile sets the same reference again: nothing to tell.
	s = scopeFor(t, m, node.Name)
	wantStatus(t, setNodeRef(ctx, s), engine.Done)
	if got := reasons(s); got != "" {
		t.Errorf("told %q for a nodeRef already set", got)
	}
}

func TestDrainTellsSuccessOnceNoPodIsLeft(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	m := testMachine(ns, nil)
	newPod(t, ns, "web", node.Name)

	s := scopeFor(t, m, node.Name)
	wantStatus(t, drainNode(ctx, s), engine.InProgress)
	if got := reasons(s); got != "" {
		t.Errorf("a drain still waiting told %q", got)
	}
	if n := finishTermination(t, node.Name); n != 1 {
		t.Fatalf("%d Pods were terminating, want 1", n)
	}
	s = scopeFor(t, m, node.Name)
	wantStatus(t, drainNode(ctx, s), engine.Done)
	if got, want := reasons(s), `SuccessfulDrainNode: success draining Machine's node "`+node.Name+`"`; got != want {
		t.Errorf("told %q, want %q", got, want)
	}
}

func TestForcedDrainTellsNoSuccess(t *testing.T) {
	ctx := context.Background()
	node := newNode(t)
	s := scopeFor(t, testMachine(newNamespace(t), nil), node.Name)
	wantStatus(t, forceDrainNode(ctx, s), engine.Done)
	if got := reasons(s); got != "" {
		t.Errorf("a forced drain told %q; its row's Warning tells it", got)
	}
}

// The volume wait tells NodeVolumesDetached only when it waited: ended in a
// later reconcile than the one that started it.
func TestVolumeWaitTellsDetachedOnlyAfterAWait(t *testing.T) {
	ctx := context.Background()
	node := newNode(t)
	m := testMachine(newNamespace(t), nil)

	s := scopeFor(t, m, node.Name)
	wantStatus(t, markVolumeWaitStart(ctx, s), engine.Done)
	wantStatus(t, waitForVolumeDetach(ctx, s), engine.Done)
	if got := reasons(s); got != "" {
		t.Errorf("a wait that started and ended in one reconcile told %q", got)
	}

	// The start time is in the status from an earlier reconcile.
	m.Status.Deletion = clusterv1.MachineDeletionStatus{WaitForNodeVolumeDetachStartTime: s.Machine.Status.Deletion.WaitForNodeVolumeDetachStartTime}
	s = scopeFor(t, m, node.Name)
	wantStatus(t, markVolumeWaitStart(ctx, s), engine.Done)
	wantStatus(t, waitForVolumeDetach(ctx, s), engine.Done)
	if got, want := reasons(s), `NodeVolumesDetached: success waiting for node volumes detaching Machine's node "`+node.Name+`"`; got != want {
		t.Errorf("told %q, want %q", got, want)
	}
}
