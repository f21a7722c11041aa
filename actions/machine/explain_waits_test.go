package machine

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/transitions"
)

// explainedSet is the shipped Machine table set, as krtt explain loads it.
func explainedSet(t *testing.T) *engine.TableSet {
	t.Helper()
	lib, fs := engine.LoadFS(transitions.FS(), ".")
	if fs.HasErrors() {
		t.Fatalf("load tables: %v", fs.Errors())
	}
	return lib.TableSet("machine")
}

// waitingMachine is a Machine with every start time and every timeout the
// Machine tables' waits name set, an hour ago and to an hour.
func waitingMachine(now time.Time) *clusterv1.Machine {
	ago := metav1.NewTime(now.Add(-time.Hour))
	hour := ptr.To[int32](3600)
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", CreationTimestamp: ago, DeletionTimestamp: &ago}}
	m.Spec.Health = clusterv1.MachineHealthSpec{HealthTimeoutSeconds: hour, CreationTimeoutSeconds: hour}
	m.Spec.Deletion = clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: hour, NodeVolumeDetachTimeoutSeconds: hour, NodeDeletionTimeoutSeconds: hour}
	m.Status.Health.UnhealthySince = &ago
	m.Status.Deletion = clusterv1.MachineDeletionStatus{WaitForPreDrainHookStartTime: &ago, NodeDrainStartTime: &ago,
		WaitForNodeVolumeDetachStartTime: &ago, WaitForPreTerminateHookStartTime: &ago, NodeDeletionStartTime: &ago}
	return m
}

// Every wait the Machine tables declare is shown with since when (read from
// the path it names) and the timeout that ends it (or why there is none),
// so a new wait: with a path explain cannot read fails here.
func TestEveryDeclaredWaitIsShown(t *testing.T) {
	set := explainedSet(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	deleting := metav1.NewTime(now.Add(-time.Minute))
	provider := func(kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind(kind)
		u.SetName("m1")
		u.SetDeletionTimestamp(&deleting)
		return u
	}
	// The workload cluster has been unreachable for an hour, so the wait of
	// a Running Machine (its Node conditions' grace) runs too.
	s := &Scope{Machine: waitingMachine(now), Infrastructure: provider("SimMachine"), Bootstrap: provider("SimBootstrapConfig"),
		Workload: remote.Connection{State: remote.Unreachable, Since: now.Add(-time.Hour)}}
	s.Machine.Spec.Bootstrap.ConfigRef = &clusterv1.ObjectReference{Kind: "SimBootstrapConfig", Name: "m1"}
	waits := 0
	for _, st := range set.States {
		if st.Wait == nil {
			continue
		}
		waits++
		w := waitingOn(s, st, now)
		if w == nil || w.Step == "" || w.On == "" || w.Timeout == "" {
			t.Errorf("state %s: wait %+v, want its step, what it waits on and its timeout", st.Name, w)
			continue
		}
		if st.Wait.Since != "" || st.Wait.Object != "" {
			if w.Since == nil || w.For == "" {
				t.Errorf("state %s: since %v (%s) not read", st.Name, w.Since, st.Wait.Since)
			}
		}
		want := int32(3600)
		if d, fixed := st.Wait.FixedTimeout(); fixed {
			want = int32(d / time.Second)
		}
		if st.Wait.Timeout != "" && (w.EndsAt == nil || w.TimeoutSeconds != want || !strings.Contains(w.Timeout, st.Wait.Timeout)) {
			t.Errorf("state %s: timeout %q ends %v, want %ds from %s", st.Name, w.Timeout, w.EndsAt, want, st.Wait.Timeout)
		}
		if st.Wait.Timeout == "" && !strings.HasPrefix(w.Timeout, "no timeout: ") {
			t.Errorf("state %s: timeout %q, want why there is none", st.Name, w.Timeout)
		}
	}
	if waits < 10 {
		t.Errorf("only %d states declare a wait; the Machine tables have at least 10", waits)
	}
}

// The states where a row reads forceDeletion=NodeUnhealthy show since when
// the Node is unhealthy and when its 5 minutes end; the others do not.
func TestForcedEndOfTheWait(t *testing.T) {
	set := explainedSet(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-2 * time.Minute))},
		{Type: "ReadonlyFilesystem", Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-3 * time.Minute))},
	}}}
	s := &Scope{Machine: waitingMachine(now), Nodes: []corev1.Node{node}}
	for state, row := range map[string]string{"DrainingNode": "D22", "WaitingForVolumeDetach": "D23"} {
		f := forcedEnd(set, set.State(state), s, now)
		if f == nil || f.Row != row || f.Condition != "ReadonlyFilesystem=True" || f.Since == nil ||
			!f.EndsAt.Equal(now.Add(2*time.Minute)) || f.EndsIn != "2m" || f.Overdue {
			t.Errorf("%s: forced %+v; want row %s, since the ReadonlyFilesystem condition 3m ago, ending in 2m", state, f, row)
		}
	}
	for _, state := range []string{"WaitingForPreDrainHook", "WaitingForPreTerminateHook", "Unhealthy", "DeletingNode"} {
		if f := forcedEnd(set, set.State(state), s, now); f != nil {
			t.Errorf("%s: forced %+v; no row of this state reads forceDeletion=NodeUnhealthy", state, f)
		}
	}
	healthy := &Scope{Machine: waitingMachine(now), Nodes: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}}
	if f := forcedEnd(set, set.State("DrainingNode"), healthy, now); f == nil || f.Since != nil || f.Row != "D22" {
		t.Errorf("healthy Node: forced %+v; want the row and no start", f)
	}
}
