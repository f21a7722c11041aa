package machine

import (
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/transitions"
)

// These tests need no API server: the observers read a hand-built Scope.

func deletingNow() *metav1.Time { return ptr.To(metav1.Now()) }

// The reasons deletion leaves the Node alone are plain facts now; the
// order Cluster API checks them in is the order of the machine-node-guard
// rows.
func TestNodeGuardFacts(t *testing.T) {
	cluster := func(deleting bool, cpRef bool) *clusterv1.Cluster {
		c := &clusterv1.Cluster{}
		if deleting {
			c.DeletionTimestamp = deletingNow()
		}
		if cpRef {
			c.Spec.ControlPlaneRef = &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "X", Name: "cp"}
		}
		return c
	}
	deletingCP := &unstructured.Unstructured{}
	deletingCP.SetDeletionTimestamp(deletingNow())
	cpMachine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "m", Labels: map[string]string{clusterv1.ControlPlaneLabel: ""}}}
	worker := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "m"}}
	for _, tc := range []struct {
		name string
		s    *Scope
		want map[string]string
	}{
		{"no control plane ref", &Scope{Cluster: cluster(false, false), Machine: worker},
			map[string]string{"controlPlane": "NotUsed", "controlPlaneMachine": "false", "otherControlPlaneMachines": "false"}},
		{"control plane missing", &Scope{Cluster: cluster(false, true), Machine: worker},
			map[string]string{"controlPlane": "Missing"}},
		{"control plane deleting", &Scope{Cluster: cluster(false, true), Machine: worker, ControlPlane: deletingCP},
			map[string]string{"controlPlane": "Deleting"}},
		{"control plane found", &Scope{Cluster: cluster(false, true), Machine: worker, ControlPlane: &unstructured.Unstructured{}},
			map[string]string{"controlPlane": "Found"}},
		{"control-plane Machine labelled with an empty value", &Scope{Cluster: cluster(false, false), Machine: cpMachine, ControlPlaneMachines: 2},
			map[string]string{"controlPlaneMachine": "true", "otherControlPlaneMachines": "true"}},
		{"last control-plane Machine", &Scope{Cluster: cluster(false, false), Machine: cpMachine},
			map[string]string{"controlPlaneMachine": "true", "otherControlPlaneMachines": "false"}},
	} {
		f := observe(t, tc.s)
		for fact, want := range tc.want {
			if got := f.Get(fact); got != want {
				t.Errorf("%s: %s = %s, want %s", tc.name, fact, got, want)
			}
		}
	}
}

func TestOwnershipAndProviderIDFacts(t *testing.T) {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "mine"}, Spec: clusterv1.MachineSpec{ProviderID: ptr.To("sim://a")}}
	owned := func(uid string, id string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"providerID": id}}}
		u.SetOwnerReferences([]metav1.OwnerReference{{Kind: "X", Name: "x", UID: types.UID(uid), Controller: ptr.To(true)}})
		return u
	}
	// The observer fills the claims (no MachineSet names these objects).
	claimed := func(s *Scope) *Scope {
		s.BootstrapClaim, s.InfrastructureClaim = claimOf(s, s.Bootstrap, nil), claimOf(s, s.Infrastructure, nil)
		return s
	}
	f := observe(t, claimed(&Scope{Machine: m, Bootstrap: owned("other", ""), Infrastructure: owned("mine", "sim://b")}))
	if f.Get("bootstrapControlledByOther") != "true" || f.Get("infrastructureControlledByOther") != "false" || f.Get("providerIDMismatch") != "true" {
		t.Errorf("facts: %s", f)
	}
	f = observe(t, claimed(&Scope{Machine: m, Infrastructure: owned("mine", "sim://a")}))
	if f.Get("bootstrapControlledByOther") != "false" || f.Get("providerIDMismatch") != "false" {
		t.Errorf("facts: %s", f)
	}
}

// observe computes every fact of the shipped machine set for a Scope,
// through the registry, as the controller does.
func observe(t *testing.T, s *Scope) engine.Facts {
	t.Helper()
	lib, findings := engine.LoadFS(transitions.FS(), ".")
	if findings.HasErrors() {
		t.Fatalf("load tables: %v", findings.Errors())
	}
	set := lib.TableSet("machine")
	if set == nil {
		t.Fatal("no machine table set")
	}
	r, err := engine.NewRunner(set, Registry())
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Observe(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestNodeFact(t *testing.T) {
	withRef := &clusterv1.Machine{Spec: clusterv1.MachineSpec{ProviderID: ptr.To("sim://n1")}, Status: clusterv1.MachineStatus{NodeRef: &clusterv1.MachineNodeReference{Name: "n1"}}}
	noRef := &clusterv1.Machine{Spec: clusterv1.MachineSpec{ProviderID: ptr.To("sim://n1")}}
	noProviderID := &clusterv1.Machine{}
	one := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}
	two := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n2"}}}
	read := fake.NewClientBuilder().Build()
	for _, tc := range []struct {
		name string
		s    *Scope
		want string
	}{
		{"nodeRef, Node gone", &Scope{MachineFound: true, Machine: withRef, NodeClient: read}, "Gone"},
		{"nodeRef, Node found", &Scope{MachineFound: true, Machine: withRef, Nodes: one, NodeClient: read}, "Found"},
		{"no nodeRef, one Node by providerID", &Scope{MachineFound: true, Machine: noRef, Nodes: one, NodeClient: read}, "Found"},
		{"no nodeRef, two Nodes by providerID", &Scope{MachineFound: true, Machine: noRef, Nodes: two, NodeClient: read}, "Multiple"},
		{"no nodeRef, no Node", &Scope{MachineFound: true, Machine: noRef, NodeClient: read}, "None"},
		// Without a usable connection (closed, unreachable, no Cluster)
		// the Node side is not read: never Gone.
		{"nodeRef, Node side not read", &Scope{MachineFound: true, Machine: withRef}, "Unknown"},
		{"no nodeRef, Node side not read", &Scope{MachineFound: true, Machine: noRef}, "Unknown"},
		{"no Machine", &Scope{}, "Unknown"},
		// Without a nodeRef or a providerID there is nothing to look up,
		// read or not.
		{"no providerID, Node side read", &Scope{MachineFound: true, Machine: noProviderID, NodeClient: read}, "None"},
		{"no providerID, Node side not read", &Scope{MachineFound: true, Machine: noProviderID}, "None"},
	} {
		if got := observe(t, tc.s).Get("node"); got != tc.want {
			t.Errorf("%s: node = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestTimeoutFacts(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	started := ptr.To(metav1.NewTime(now.Add(-time.Minute)))
	m := func(seconds *int32) *clusterv1.Machine {
		return &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: started},
			Spec: clusterv1.MachineSpec{Deletion: clusterv1.MachineDeletionSpec{
				NodeDrainTimeoutSeconds: seconds, NodeVolumeDetachTimeoutSeconds: seconds, NodeDeletionTimeoutSeconds: seconds,
			}},
			Status: clusterv1.MachineStatus{Deletion: clusterv1.MachineDeletionStatus{
				NodeDrainStartTime: started, WaitForNodeVolumeDetachStartTime: started, NodeDeletionStartTime: started,
			}},
		}
	}
	facts := []string{"drainTimedOut", "volumeWaitTimedOut", "nodeDeletionTimedOut"}
	for _, tc := range []struct {
		name    string
		seconds *int32
		want    string
	}{
		{"0 waits forever", ptr.To[int32](0), "false"},
		{"unset waits forever", nil, "false"},
		{"not yet", ptr.To[int32](120), "false"},
		{"passed", ptr.To[int32](30), "true"},
	} {
		f := observe(t, &Scope{MachineFound: true, Machine: m(tc.seconds), Now: now})
		for _, fact := range facts {
			if got := f.Get(fact); got != tc.want {
				t.Errorf("%s: %s = %s, want %s", tc.name, fact, got, tc.want)
			}
		}
	}
	// No start time recorded yet: never timed out.
	f := observe(t, &Scope{MachineFound: true, Machine: &clusterv1.Machine{Spec: clusterv1.MachineSpec{Deletion: clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](1)}}}, Now: now})
	if got := f.Get("drainTimedOut"); got != "false" {
		t.Errorf("drainTimedOut without a start time = %s", got)
	}
}

// The chaos suite found a Node-deletion timeout that skipped the attempt and
// so leaked Nodes: as in Cluster API the Node is always tried once, and the
// timeout (counted from the deletionTimestamp) only ends the retries of an
// attempt that was made.
func TestNodeDeletionTimeoutNeverSkipsTheAttempt(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	deleted := ptr.To(metav1.NewTime(now.Add(-time.Hour)))
	for _, tc := range []struct {
		name      string
		deleted   *metav1.Time
		attempted *metav1.Time // status.deletion.nodeDeletionStartTime
		want      string
	}{
		{"timeout passed, no attempt yet", deleted, nil, "false"},
		{"timeout passed, attempted just now", deleted, ptr.To(metav1.NewTime(now)), "true"},
		{"timeout passed, attempted long ago", deleted, deleted, "true"},
		{"attempted, timeout not passed", ptr.To(metav1.NewTime(now.Add(-time.Second))), ptr.To(metav1.NewTime(now)), "false"},
		{"not being deleted", nil, deleted, "false"},
	} {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: tc.deleted}}
		m.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](10)
		m.Status.Deletion.NodeDeletionStartTime = tc.attempted
		if got := observe(t, &Scope{MachineFound: true, Machine: m, Now: now}).Get("nodeDeletionTimedOut"); got != tc.want {
			t.Errorf("%s: nodeDeletionTimedOut = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A Machine that is gone is observed as such without falling into a
// combination the tables call impossible (its last reconcile after the
// deletion counted one in krtt_impossible_facts_total).
func TestMachineNotReadIsNoImpossibleCombination(t *testing.T) {
	lib, findings := engine.LoadFS(transitions.FS(), ".")
	if findings.HasErrors() {
		t.Fatalf("load tables: %v", findings.Errors())
	}
	set := lib.TableSet("machine")
	f := observe(t, &Scope{})
	if f.Get("cluster") != "Missing" || f.Get("workloadCluster") != "NoCluster" {
		t.Errorf("Machine gone: cluster %s, workloadCluster %s; want Missing, NoCluster", f.Get("cluster"), f.Get("workloadCluster"))
	}
	if im := set.ImpossibleHit(f); im != nil {
		t.Errorf("Machine gone: facts fall into impossible %s: %s", im.Name, f)
	}
}
