package machine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// wantTold checks the reasons and notes of what the scope's actions told
// ("" for nothing).
func wantTold(t *testing.T, s *Scope, want, why string) {
	t.Helper()
	var told []string
	for _, tell := range s.Told.Take() {
		told = append(told, tell.Reason+": "+tell.Note)
	}
	if got := strings.Join(told, "; "); got != want {
		t.Errorf("%s: told %q, want %q", why, got, want)
	}
}

func TestSetNodeRefTellsOnlyTheFirstTime(t *testing.T) {
	ctx := context.Background()
	node := newNode(t)
	m := testMachine(newNamespace(t), nil)

	s := scopeFor(t, m, node.Name)
	wantStatus(t, setNodeRef(ctx, s), engine.Done)
	wantTold(t, s, "SuccessfulSetNodeRef: "+node.Name, "the Node found")

	// Every later reconcile sets the same reference again: nothing to tell.
	s = scopeFor(t, m, node.Name)
	wantStatus(t, setNodeRef(ctx, s), engine.Done)
	wantTold(t, s, "", "a nodeRef already set")
}

func TestDrainTellsSuccessOnceNoPodIsLeft(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := newNode(t)
	m := testMachine(ns, nil)
	newPod(t, ns, "web", node.Name)

	s := scopeFor(t, m, node.Name)
	wantStatus(t, drainNode(ctx, s), engine.InProgress)
	wantTold(t, s, "", "a drain still waiting")
	if n := finishTermination(t, node.Name); n != 1 {
		t.Fatalf("%d Pods were terminating, want 1", n)
	}
	s = scopeFor(t, m, node.Name)
	wantStatus(t, drainNode(ctx, s), engine.Done)
	wantTold(t, s, `SuccessfulDrainNode: success draining Machine's node "`+node.Name+`"`, "the drain done")
}

func TestForcedDrainTellsNoSuccess(t *testing.T) {
	ctx := context.Background()
	node := newNode(t)
	s := scopeFor(t, testMachine(newNamespace(t), nil), node.Name)
	wantStatus(t, forceDrainNode(ctx, s), engine.Done)
	wantTold(t, s, "", "a forced drain (its row's Warning tells it)")
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
	wantTold(t, s, "", "a wait that started and ended in one reconcile")

	// The next reconcile finds the start time the first one left in m.
	if m.Status.Deletion.WaitForNodeVolumeDetachStartTime == nil {
		t.Fatal("the wait's start time was not recorded")
	}
	s = scopeFor(t, m, node.Name)
	wantStatus(t, markVolumeWaitStart(ctx, s), engine.Done)
	wantStatus(t, waitForVolumeDetach(ctx, s), engine.Done)
	wantTold(t, s, `NodeVolumesDetached: success waiting for node volumes detaching Machine's node "`+node.Name+`"`, "a wait that ended later")
}

// A Node deletion the API server refuses is told as Cluster API's
// reconcileDelete tells it; one that succeeds tells nothing.
func TestDeleteNodeTellsItsFailure(t *testing.T) {
	ctx := context.Background()
	node := newNode(t)
	m := testMachine(newNamespace(t), nil)

	s := scopeFor(t, m, node.Name)
	s.NodeClient = refusingDeletes{env.Client}
	wantStatus(t, deleteNode(ctx, s), engine.Failed)
	wantTold(t, s, "FailedDeleteNode: error deleting Machine's Node: the webhook refused it", "a refused Node deletion")

	s = scopeFor(t, m, node.Name)
	wantStatus(t, deleteNode(ctx, s), engine.Done)
	wantTold(t, s, "", "a Node deleted")
}

// refusingDeletes is a client whose deletions fail, as a webhook or an
// admission policy may make them.
type refusingDeletes struct{ client.Client }

func (refusingDeletes) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return errors.New("the webhook refused it")
}
