package reconciler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The Machine aggregates follow Cluster API's merge: False beats Unknown
// beats True, a missing condition is Unknown, and the message groups the
// Machines by message, issues first, then the most Machines, then by name
// whatever order they come in, three names and three messages at most, and
// counts the rest by issue and unknown as Cluster API's aggregateMessages.
func TestAggregate(t *testing.T) {
	m := func(name string, conds ...metav1.Condition) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1.MachineStatus{Conditions: conds}}
	}
	ready := func(s metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: clusterv1.ReadyCondition, Status: s, Message: msg}
	}
	for _, tc := range []struct {
		name     string
		machines []*clusterv1.Machine
		want     string
	}{
		{"none", nil, "True NoReplicas "},
		{"all Ready", []*clusterv1.Machine{m("a", ready("True", "")), m("b", ready("True", ""))}, "True Ready "},
		{"one not reported", []*clusterv1.Machine{m("a", ready("True", "")), m("b")}, "Unknown ReadyUnknown * Machine b: Condition Ready not yet reported"},
		{"issues first, grouped by message", []*clusterv1.Machine{
			m("u", ready("Unknown", "* NodeHealthy: Node unreachable")),
			m("b", ready("False", "* NodeHealthy: Node not ready")), m("a", ready("False", "* NodeHealthy: Node not ready")),
			m("c", ready("False", "* InfrastructureReady: gone\n* NodeHealthy: gone")),
		}, "False NotReady * Machines a, b:\n  * NodeHealthy: Node not ready\n* Machine c:\n  * InfrastructureReady: gone\n  * NodeHealthy: gone\n* Machine u:\n  * NodeHealthy: Node unreachable"},
		{"many", []*clusterv1.Machine{
			m("m1", ready("False", "x")), m("m2", ready("False", "x")), m("m3", ready("False", "x")), m("m4", ready("False", "x")),
			m("n3", ready("False", "w")), m("n2", ready("False", "z")), m("n1", ready("False", "y")), m("n4", ready("Unknown", "v")),
		}, "False NotReady * Machines m1, m2, m3, ... (1 more): x\n* Machine n1: y\n* Machine n2: z\nAnd 1 Machine with other issues\nAnd 1 Machine with status unknown"},
		{"many left out", []*clusterv1.Machine{
			m("a", ready("False", "x")), m("b", ready("False", "y")), m("c", ready("False", "z")),
			m("d", ready("False", "w")), m("e", ready("False", "v")), m("f", ready("Unknown", "u")), m("g", ready("Unknown", "t")),
		}, "False NotReady * Machine a: x\n* Machine b: y\n* Machine c: z\nAnd 2 Machines with other issues\nAnd 2 Machines with status unknown"},
	} {
		c := AggregateMachines(tc.machines, clusterv1.ReadyCondition, "WorkerMachinesReady", ReadyReasons, 1)
		if got := string(c.Status) + " " + c.Reason + " " + c.Message; got != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

// A Machine younger than UpToDateGrace without UpToDate is left out of the
// aggregate; an older one counts as not reported.
func TestAggregateUpToDateGrace(t *testing.T) {
	now := metav1.Now()
	young := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "young", CreationTimestamp: now}}
	old := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "old", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}}
	done := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "done", CreationTimestamp: now},
		Status: clusterv1.MachineStatus{Conditions: []metav1.Condition{{Type: clusterv1.UpToDateCondition, Status: metav1.ConditionTrue}}}}
	for _, tc := range []struct {
		name     string
		machines []*clusterv1.Machine
		want     string
	}{
		{"only a young one", []*clusterv1.Machine{young}, "True NoReplicas "},
		{"a young one and one that reported", []*clusterv1.Machine{young, done}, "True UpToDate "},
		{"an old one that never reported", []*clusterv1.Machine{old, done}, "Unknown UpToDateUnknown * Machine old: Condition UpToDate not yet reported"},
	} {
		c := AggregateUpToDate(tc.machines, "MachinesUpToDate", now.Time, 1)
		if got := string(c.Status) + " " + c.Reason + " " + c.Message; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A negative condition (RollingOut) is an issue while True; kinds are
// listed in name order, each with its own lines.
func TestAggregateNegativeKinds(t *testing.T) {
	rolling := func(s metav1.ConditionStatus, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: "RollingOut", Status: s, Message: msg}}
	}
	r := AggregateReasons{Fine: "NotRollingOut", Issue: "RollingOut", Unknown: "RollingOutUnknown"}
	for _, tc := range []struct {
		name  string
		items []AggregateItem
		want  string
	}{
		{"none", nil, "False NotRollingOut "},
		{"all still", []AggregateItem{{Kind: "MachineDeployment", Name: "a", Conditions: rolling("False", "")}}, "False NotRollingOut "},
		{"not reported", []AggregateItem{{Kind: "MachineDeployment", Name: "a"}}, "Unknown RollingOutUnknown * MachineDeployment a: Condition RollingOut not yet reported"},
		{"kinds in order, issues first", []AggregateItem{
			{Kind: "MachineDeployment", Name: "b", Conditions: rolling("True", "Rolling out 2 not up-to-date replicas")},
			{Kind: "MachineDeployment", Name: "c", Conditions: rolling("Unknown", "not known")},
			{Kind: "KubeadmControlPlane", Name: "cp", Conditions: rolling("True", "Rolling out 1 not up-to-date replicas")},
			{Kind: "MachineDeployment", Name: "a", Conditions: rolling("True", "Rolling out 2 not up-to-date replicas")},
		}, "True RollingOut * KubeadmControlPlane cp: Rolling out 1 not up-to-date replicas\n* MachineDeployments a, b: Rolling out 2 not up-to-date replicas\n* MachineDeployment c: not known"},
	} {
		c := Aggregate(tc.items, "RollingOut", "RollingOut", r, true, 1)
		if got := string(c.Status) + " " + c.Reason + " " + c.Message; got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRemediating: True while a marked Machine waits for its owner, a line
// per OwnerRemediated message; else False naming the unhealthy Machines
// nobody asked to remediate, with the owner's words.
func TestRemediating(t *testing.T) {
	unhealthy := metav1.Condition{Type: clusterv1.HealthCheckSucceededCondition, Status: metav1.ConditionFalse, Reason: "UnhealthyNode"}
	marked := metav1.Condition{Type: clusterv1.OwnerRemediatedCondition, Status: metav1.ConditionFalse, Reason: "MachineDeleting", Message: "Machine is deleting"}
	m := func(name string, c ...metav1.Condition) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1.MachineStatus{Conditions: c}}
	}
	got := Remediating([]*clusterv1.Machine{m("a", unhealthy, marked), m("b", unhealthy), m("c")}, " by MachineSet", 3)
	if got.Status != metav1.ConditionTrue || got.Reason != "Remediating" || got.Message != "* Machine a: Machine is deleting" || got.ObservedGeneration != 3 {
		t.Errorf("with a marked Machine: %+v", got)
	}
	got = Remediating([]*clusterv1.Machine{m("b", unhealthy), m("d", unhealthy), m("c")}, " by MachineSet", 3)
	if got.Status != metav1.ConditionFalse || got.Reason != "NotRemediating" || got.Message != "Machines b, d are not healthy (not to be remediated by MachineSet)" {
		t.Errorf("with unhealthy Machines only: %+v", got)
	}
	if got = Remediating([]*clusterv1.Machine{m("c")}, "", 3); got.Status != metav1.ConditionFalse || got.Message != "" {
		t.Errorf("all healthy: %+v", got)
	}
}
