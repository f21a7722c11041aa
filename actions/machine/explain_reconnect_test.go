package machine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
)

// After an outage of the workload cluster the time left of every Node-side
// wait, and of the forced deletion's 5 minutes, counts from when the
// cluster came back, as the facts that end them count it; the creation
// wait before the providerID is known does not restart.
func TestTimeLeftFollowsTheWorkloadClusterComingBack(t *testing.T) {
	set := explainedSet(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	back := now.Add(-10 * time.Minute) // every wait started an hour ago, with a timeout of an hour
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))},
	}}}
	for _, tc := range []struct {
		name     string
		workload remote.Connection
		cluster  *clusterv1.Cluster
	}{
		{"the connection saw it come back", remote.Connection{State: remote.Connected, ReachableAgain: back}, &clusterv1.Cluster{}},
		{"the Cluster's status says so", remote.Connection{State: remote.Connected},
			&clusterv1.Cluster{Status: clusterv1.ClusterStatus{WorkloadClusterReconnectTime: ptr.To(metav1.NewTime(back))}}},
	} {
		m := waitingMachine(now)
		m.Spec.ProviderID = ptr.To("sim://ns/m1")
		s := &Scope{Machine: m, Nodes: []corev1.Node{node}, Workload: tc.workload, Cluster: tc.cluster}
		for _, state := range []string{"Provisioned", "Unhealthy", "DrainingNode", "WaitingForVolumeDetach", "DeletingNode"} {
			w := waitingOn(s, set.State(state), now)
			if w.CountsFrom == nil || !w.CountsFrom.Equal(back) || !w.EndsAt.Equal(back.Add(time.Hour)) || w.EndsIn != "50m" || w.Overdue {
				t.Errorf("%s, %s: counts from %v, ends %v in %q (overdue %v); want from %s, 50m left", tc.name, state, w.CountsFrom, w.EndsAt, w.EndsIn, w.Overdue, back)
			}
		}
		f := forcedEnd(set, set.State("DrainingNode"), s, now)
		if f == nil || f.CountsFrom == nil || !f.CountsFrom.Equal(back) || !f.Since.Equal(now.Add(-time.Hour)) ||
			!f.EndsAt.Equal(back.Add(NodeUnhealthyForce)) || !f.Overdue {
			t.Errorf("%s: forced %+v; want the Node's 1h as since, 5m from %s, overdue", tc.name, f, back)
		}
		// Before the providerID the creation wait is on the providers.
		m.Spec.ProviderID = nil
		if w := waitingOn(s, set.State("Pending"), now); w.CountsFrom != nil || !w.Overdue {
			t.Errorf("%s, Pending without a providerID: counts from %v, overdue %v; want the creation timestamp, overdue", tc.name, w.CountsFrom, w.Overdue)
		}
	}
}

// While the workload cluster cannot be used, the deletion steps' waits
// count from their own start, as Cluster API counts them (an earlier
// outage's reconnection gives nothing back during the next one), so their
// timeouts end them meanwhile; a Running Machine shows the grace of its
// Node conditions, 5 minutes from when the connection became unusable, and
// no wait while the cluster is usable.
func TestWaitsWhileTheWorkloadClusterIsDark(t *testing.T) {
	set := explainedSet(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	back := now.Add(-10 * time.Minute) // an earlier outage ended then
	darkSince := now.Add(-2 * time.Minute)
	for _, st := range []remote.State{remote.Unreachable, remote.NoAccess} {
		s := &Scope{Machine: waitingMachine(now), Cluster: &clusterv1.Cluster{Status: clusterv1.ClusterStatus{WorkloadClusterReconnectTime: ptr.To(metav1.NewTime(back))}},
			Workload: remote.Connection{State: st, Since: darkSince, ReachableAgain: back}}
		for _, state := range []string{"DrainingNode", "WaitingForVolumeDetach", "DeletingNode"} {
			w := waitingOn(s, set.State(state), now)
			if w.CountsFrom != nil || !w.EndsAt.Equal(now) || !w.Overdue && w.EndsIn != "0s" {
				t.Errorf("%s, %s: counts from %v, ends %v in %q (overdue %v); want its own start, ending now", st, state, w.CountsFrom, w.EndsAt, w.EndsIn, w.Overdue)
			}
		}
		w := waitingOn(s, set.State("Running"), now)
		if w == nil || w.Since == nil || !w.Since.Equal(darkSince) || !w.EndsAt.Equal(darkSince.Add(5*time.Minute)) || w.EndsIn != "3m" {
			t.Errorf("%s, Running: %+v; want the grace since %s, 3m left", st, w, darkSince)
		}
	}
	s := &Scope{Machine: waitingMachine(now), Workload: remote.Connection{State: remote.Connected, ReachableAgain: back}}
	if w := waitingOn(s, set.State("Running"), now); w != nil {
		t.Errorf("Running, connected: %+v; want no wait", w)
	}
}
