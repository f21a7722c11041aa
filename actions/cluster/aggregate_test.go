package cluster

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// TestMirrorRolloutAggregates: the control plane object counts only when it
// reports the condition; the scaling ones count the Cluster's stand-alone
// MachineSets; an unreadable control plane object makes them Unknown.
func TestMirrorRolloutAggregates(t *testing.T) {
	cpRef := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	cond := func(t, s, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Message: msg}
	}
	md := clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md1"}, Status: clusterv1.MachineDeploymentStatus{Conditions: []metav1.Condition{
		cond(RollingOutCondition, "True", "Rolling out 2 not up-to-date replicas"), cond(ScalingUpCondition, "False", ""), cond(ScalingDownCondition, "False", ""),
	}}}
	ms := clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "lone"}, Status: clusterv1.MachineSetStatus{Conditions: []metav1.Condition{
		cond(ScalingUpCondition, "True", "Scaling up from 1 to 3 replicas"), cond(ScalingDownCondition, "False", ""),
	}}}
	cp := simObject("SimControlPlane", "", 0, map[string]any{"conditions": []any{map[string]any{"type": "ScalingDown", "status": "True", "message": "Scaling down from 3 to 1 replicas"}}})
	cp.SetName("cp")
	get := func(c *clusterv1.Cluster, t string) string {
		x := meta.FindStatusCondition(c.Status.Conditions, t)
		return fmt.Sprintf("%s %s %s", x.Status, x.Reason, x.Message)
	}
	c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}}
	s := &Scope{Found: true, Cluster: c, ControlPlane: cp, MachineDeployments: []clusterv1.MachineDeployment{md}, StandaloneSets: []clusterv1.MachineSet{ms}}
	mirrorRolloutAggregates(s)
	for typ, want := range map[string]string{
		RollingOutCondition:  "True RollingOut * MachineDeployment md1: Rolling out 2 not up-to-date replicas",
		ScalingUpCondition:   "True ScalingUp * MachineSet lone: Scaling up from 1 to 3 replicas",
		ScalingDownCondition: "True ScalingDown * SimControlPlane cp: Scaling down from 3 to 1 replicas",
	} {
		if got := get(c, typ); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
	none := &clusterv1.Cluster{}
	mirrorRolloutAggregates(&Scope{Found: true, Cluster: none})
	if got := get(none, ScalingUpCondition); got != "False NotScalingUp " {
		t.Errorf("without objects: %q", got)
	}
	unread := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}}
	mirrorRolloutAggregates(&Scope{Found: true, Cluster: unread, ControlPlaneUnread: true, ControlPlaneErr: errors.New("etcdserver: request timed out")})
	if got := get(unread, RollingOutCondition); got != "Unknown InternalError SimControlPlane cp could not be read: etcdserver: request timed out" {
		t.Errorf("unread: %q", got)
	}
}

// TestMirrorRemediating: unhealthy Machines are named while none waits for
// its owner's remediation; then the waiting ones' OwnerRemediated messages.
func TestMirrorRemediating(t *testing.T) {
	m := func(name string, conds ...metav1.Condition) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1.MachineStatus{Conditions: conds}}
	}
	unhealthy := metav1.Condition{Type: clusterv1.HealthCheckSucceededCondition, Status: metav1.ConditionFalse, Reason: "UnhealthyNode"}
	waiting := metav1.Condition{Type: clusterv1.OwnerRemediatedCondition, Status: metav1.ConditionFalse, Reason: "WaitingForRemediation", Message: "Waiting for remediation"}
	for _, tc := range []struct {
		name     string
		machines []*clusterv1.Machine
		want     string
	}{
		{"healthy", []*clusterv1.Machine{m("a")}, "False NotRemediating "},
		{"one unhealthy", []*clusterv1.Machine{m("a"), m("b", unhealthy)}, "False NotRemediating Machine b is not healthy (not to be remediated)"},
		{"many unhealthy", []*clusterv1.Machine{m("e", unhealthy), m("d", unhealthy), m("c", unhealthy), m("b", unhealthy), m("a", unhealthy)},
			"False NotRemediating Machines a, b, c, ... (2 more) are not healthy (not to be remediated)"},
		{"owner remediates", []*clusterv1.Machine{m("a", unhealthy), m("b", unhealthy, waiting), m("c", waiting)}, "True Remediating * Machine b: Waiting for remediation"},
	} {
		c := &clusterv1.Cluster{}
		mirrorRemediating(&Scope{Found: true, Cluster: c, Machines: tc.machines})
		x := meta.FindStatusCondition(c.Status.Conditions, clusterv1.RemediatingCondition)
		if got := fmt.Sprintf("%s %s %s", x.Status, x.Reason, x.Message); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// WorkersAvailable aggregates the MachineDeployments' Available as Cluster
// API's setWorkersAvailableCondition: one line per message, naming every
// MachineDeployment that reports it, issues before unknowns.
func TestWorkersAvailable(t *testing.T) {
	md := func(name string, conds ...metav1.Condition) clusterv1.MachineDeployment {
		return clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1.MachineDeploymentStatus{Conditions: conds}}
	}
	available := func(status metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: clusterv1.AvailableCondition, Status: status, Message: msg}
	}
	for _, tc := range []struct {
		name string
		mds  []clusterv1.MachineDeployment
		want string
	}{
		{"none", nil, "True NoWorkers "},
		{"all available", []clusterv1.MachineDeployment{md("a", available("True", ""))}, "True Available "},
		{"two not reported yet", []clusterv1.MachineDeployment{md("md2"), md("md1")},
			"Unknown AvailableUnknown * MachineDeployments md1, md2: Condition Available not yet reported"},
		{"an issue first", []clusterv1.MachineDeployment{md("b"), md("a", available("False", "0 available replicas, at least 1 required"))},
			"False NotAvailable * MachineDeployment a: 0 available replicas, at least 1 required\n* MachineDeployment b: Condition Available not yet reported"},
	} {
		s := &Scope{Cluster: &clusterv1.Cluster{}, MachineDeployments: tc.mds}
		mirrorWorkers(s)
		c := meta.FindStatusCondition(s.Cluster.Status.Conditions, WorkersAvailableCondition)
		if got := string(c.Status) + " " + c.Reason + " " + c.Message; got != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}
