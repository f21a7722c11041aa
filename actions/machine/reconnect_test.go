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

// A Node-side timeout counts from the later of its own start and the last
// time the workload cluster came back, whether the connection saw it come
// back or only the Cluster's status remembers it (after a restart).
func TestTimeoutsCountFromTheWorkloadClusterComingBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := metav1.NewTime(t0)
	back := t0.Add(20 * time.Minute)
	now := t0.Add(25 * time.Minute) // 25 minutes after every start, 5 after the cluster came back
	machine := func() *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: start, DeletionTimestamp: &start}}
		m.Spec.ProviderID = ptr.To("sim://ns/m1")
		m.Spec.Health.HealthTimeoutSeconds = ptr.To[int32](600)
		m.Spec.Health.CreationTimeoutSeconds = ptr.To[int32](600)
		m.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](600)
		m.Spec.Deletion.NodeVolumeDetachTimeoutSeconds = ptr.To[int32](600)
		m.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](600)
		m.Status.Health.UnhealthySince = &start
		m.Status.Deletion.NodeDrainStartTime = &start
		m.Status.Deletion.WaitForNodeVolumeDetachStartTime = &start
		m.Status.Deletion.NodeDeletionStartTime = &start
		return m
	}
	timeouts := []string{"healthTimedOut", "creationTimedOut", "drainTimedOut", "volumeWaitTimedOut", "nodeDeletionTimedOut"}
	for _, tc := range []struct {
		name       string
		workload   remote.Connection
		cluster    *clusterv1.Cluster
		providerID bool
		want       string // every timeout fact
	}{
		{"no outage: every timeout ran out", remote.Connection{State: remote.Connected}, &clusterv1.Cluster{}, true, "true"},
		{"back 5 minutes ago (the connection saw it)", remote.Connection{State: remote.Connected, ReachableAgain: back}, &clusterv1.Cluster{}, true, "false"},
		{"back 5 minutes ago (the Cluster's status says so)", remote.Connection{State: remote.Connected},
			&clusterv1.Cluster{Status: clusterv1.ClusterStatus{WorkloadClusterReconnectTime: ptr.To(metav1.NewTime(back))}}, true, "false"},
		{"back before the waits started", remote.Connection{State: remote.Connected, ReachableAgain: t0.Add(-time.Hour)}, &clusterv1.Cluster{}, true, "true"},
	} {
		m := machine()
		s := &Scope{MachineFound: true, Machine: m, Cluster: tc.cluster, Workload: tc.workload, Now: now}
		f := observe(t, s)
		for _, fact := range timeouts {
			if got := f.Get(fact); got != tc.want {
				t.Errorf("%s: %s = %s, want %s", tc.name, fact, got, tc.want)
			}
		}
	}
	// Before the providerID is known the creation wait is on the providers,
	// which an outage of the workload cluster does not hold up.
	m := machine()
	m.Spec.ProviderID = nil
	s := &Scope{MachineFound: true, Machine: m, Cluster: &clusterv1.Cluster{}, Workload: remote.Connection{State: remote.Connected, ReachableAgain: back}, Now: now}
	if got := observe(t, s).Get("creationTimedOut"); got != "true" {
		t.Errorf("without a providerID creationTimedOut = %s, want true: the outage does not restart it", got)
	}
}

// The forced deletion's 5 minutes of an unhealthy Node restart when the
// workload cluster comes back, as every other Node-side timeout does: a
// Node that looked unhealthy across an outage is not force-deleted the
// moment the cluster is reachable again.
func TestForceDeletionCountsFromTheWorkloadClusterComingBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(25 * time.Minute)
	node := func(typ corev1.NodeConditionType, status corev1.ConditionStatus) corev1.Node {
		return corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: typ, Status: status, LastTransitionTime: metav1.NewTime(t0)},
		}}}
	}
	backAt := func(d time.Duration) *clusterv1.Cluster {
		return &clusterv1.Cluster{Status: clusterv1.ClusterStatus{WorkloadClusterReconnectTime: ptr.To(metav1.NewTime(now.Add(-d)))}}
	}
	for _, tc := range []struct {
		name     string
		node     corev1.Node
		label    bool
		workload remote.Connection
		cluster  *clusterv1.Cluster
		want     string
	}{
		{"Ready=False for 25m, no outage", node(corev1.NodeReady, corev1.ConditionFalse), false,
			remote.Connection{State: remote.Connected}, &clusterv1.Cluster{}, "NodeUnhealthy"},
		{"Ready=Unknown for 25m, back 2m ago (the connection saw it)", node(corev1.NodeReady, corev1.ConditionUnknown), false,
			remote.Connection{State: remote.Connected, ReachableAgain: now.Add(-2 * time.Minute)}, &clusterv1.Cluster{}, "No"},
		{"ReadonlyFilesystem=True for 25m, back 2m ago (the Cluster's status says so)", node("ReadonlyFilesystem", corev1.ConditionTrue), false,
			remote.Connection{State: remote.Connected}, backAt(2 * time.Minute), "No"},
		{"Ready=False for 25m, back 6m ago", node(corev1.NodeReady, corev1.ConditionFalse), false,
			remote.Connection{State: remote.Connected}, backAt(6 * time.Minute), "NodeUnhealthy"},
		{"Ready=True, back long ago", node(corev1.NodeReady, corev1.ConditionTrue), false,
			remote.Connection{State: remote.Connected}, backAt(time.Hour), "No"},
		{"the label does not wait for the cluster", node(corev1.NodeReady, corev1.ConditionFalse), true,
			remote.Connection{State: remote.Connected, ReachableAgain: now.Add(-time.Minute)}, &clusterv1.Cluster{}, "Label"},
	} {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0), DeletionTimestamp: ptr.To(metav1.NewTime(t0))}}
		if tc.label {
			m.Labels = map[string]string{clusterv1.ForceDeletionLabel: clusterv1.ForceDeletionLabelValue}
		}
		s := &Scope{MachineFound: true, Machine: m, Cluster: tc.cluster, Workload: tc.workload, Nodes: []corev1.Node{tc.node}, Now: now}
		if got := observe(t, s).Get("forceDeletion"); got != tc.want {
			t.Errorf("%s: forceDeletion = %s, want %s", tc.name, got, tc.want)
		}
	}
}
