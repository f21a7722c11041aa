package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// TestControlPlaneAvailable follows Cluster API's
// TestSetControlPlaneAvailableCondition case by case (krtt's reasons), and
// row K13's fact: only a missing object is told, once.
func TestControlPlaneAvailable(t *testing.T) {
	ref := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	object := func(initialized bool, conds ...map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		_ = unstructured.SetNestedField(u.Object, initialized, "status", "initialization", "controlPlaneInitialized")
		if len(conds) > 0 {
			list := make([]any, len(conds))
			for i, c := range conds {
				list[i] = c
			}
			_ = unstructured.SetNestedSlice(u.Object, list, "status", "conditions")
		}
		return u
	}
	missing := "SimControlPlane/cp does not exist"
	notServed := "SimControlPlane/cp does not exist: the API server does not serve the kind SimControlPlane.sim.krtt.dev"
	for _, tc := range []struct {
		name              string
		ref               *clusterv1.ObjectReference
		object            *unstructured.Unstructured
		unread            bool
		clusterInitalized bool
		deleting          bool
		notServed         bool              // the object is missing because its kind is not served
		want              *metav1.Condition // nil: no condition
		told              bool              // controlPlaneMissingTold before the condition is written
	}{
		{name: "no reference", want: nil, told: true},
		{name: "the object's Available condition", ref: ref,
			object: object(true, map[string]any{"type": "Available", "status": "False", "reason": "EtcdUnhealthy", "message": "1 of 3 members unhealthy"}),
			want:   &metav1.Condition{Status: metav1.ConditionFalse, Reason: "EtcdUnhealthy", Message: "1 of 3 members unhealthy"}, told: true},
		{name: "a True Available condition without a reason", ref: ref,
			object: object(false, map[string]any{"type": "Available", "status": "True", "message": "all good"}),
			want:   &metav1.Condition{Status: metav1.ConditionTrue, Reason: "Available", Message: "all good"}, told: true},
		{name: "a False Available condition without a reason", ref: ref,
			object: object(true, map[string]any{"type": "Available", "status": "False"}),
			want:   &metav1.Condition{Status: metav1.ConditionFalse, Reason: "NoReasonReported"}, told: true},
		{name: "no condition, not initialized", ref: ref, object: object(false),
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "NotAvailable", Message: "SimControlPlane status.initialization.controlPlaneInitialized is false"}, told: true},
		{name: "no condition, initialized", ref: ref, object: object(true),
			want: &metav1.Condition{Status: metav1.ConditionTrue, Reason: "Available"}, told: true},
		{name: "no condition, the Cluster says it was initialized", ref: ref, object: object(false), clusterInitalized: true,
			want: &metav1.Condition{Status: metav1.ConditionTrue, Reason: "Available"}, told: true},
		{name: "unread", ref: ref, unread: true,
			want: &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "SimControlPlane cp could not be read: etcdserver: request timed out"}, told: true},
		{name: "missing", ref: ref,
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "ObjectDoesNotExist", Message: "SimControlPlane does not exist"}},
		{name: "its kind not served", ref: ref, notServed: true,
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "ObjectDoesNotExist",
				Message: "SimControlPlane does not exist: the API server does not serve the kind SimControlPlane.sim.krtt.dev"}},
		{name: "deleted after the control plane came up", ref: ref, clusterInitalized: true,
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "ObjectDeleted", Message: "SimControlPlane has been deleted while the cluster still exists"}},
		{name: "deleted with the Cluster", ref: ref, clusterInitalized: true, deleting: true,
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "ObjectDeleted", Message: "SimControlPlane has been deleted"}},
	} {
		c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: tc.ref}}
		c.Status.Initialization.ControlPlaneInitialized = ptr.To(tc.clusterInitalized)
		if tc.deleting {
			now := metav1.Now()
			c.DeletionTimestamp = &now
		}
		s := &Scope{Found: true, Cluster: c, ControlPlane: tc.object, ControlPlaneUnread: tc.unread}
		if tc.unread {
			s.ControlPlaneErr = errors.New("etcdserver: request timed out")
		}
		if tc.ref != nil && tc.object == nil && !tc.unread {
			s.ControlPlaneMissing, s.ControlPlaneNotServed = missing, tc.notServed
			if tc.notServed {
				s.ControlPlaneMissing = notServed
			}
		}
		if got := controlPlaneMissingTold(s); got != tc.told {
			t.Errorf("%s: controlPlaneMissingTold before = %v, want %v", tc.name, got, tc.told)
		}
		mirrorControlPlaneAvailable(s)
		got := meta.FindStatusCondition(c.Status.Conditions, ControlPlaneAvailableCondition)
		switch {
		case tc.want == nil && got != nil:
			t.Errorf("%s: got %+v, want no condition", tc.name, got)
		case tc.want != nil && (got == nil || got.Status != tc.want.Status || got.Reason != tc.want.Reason || got.Message != tc.want.Message):
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
		if !controlPlaneMissingTold(s) {
			t.Errorf("%s: controlPlaneMissingTold is false once the condition is written: row K13 would fire again", tc.name)
		}
		if tc.ref != nil && tc.object == nil && !tc.unread {
			if out := describeControlPlane(context.Background(), s); out.Message != tc.want.Message {
				t.Errorf("%s: K13 says %q, the mirror %q: they would undo each other", tc.name, out.Message, tc.want.Message)
			}
		}
	}
}

// An object being deleted still exists: its condition is mirrored, and the
// teardown waits for it instead of deleting it again.
func TestControlPlaneBeingDeleted(t *testing.T) {
	ref := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	cp := &unstructured.Unstructured{Object: map[string]any{}}
	now := metav1.Now()
	cp.SetDeletionTimestamp(&now)
	s := &Scope{Found: true, Cluster: &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: ref}}, ControlPlane: cp}
	if got := controlPlane(s); got != "Deleting" {
		t.Errorf("controlPlane = %s, want Deleting", got)
	}
	if !controlPlaneMissingTold(s) {
		t.Error("an object being deleted is not missing: row K13 has nothing to tell")
	}
	out := deleteControlPlane(context.Background(), s)
	if out.Status != engine.InProgress || out.Message != "Waiting for SimControlPlane to be deleted" {
		t.Errorf("deleteControlPlane = %+v, want a wait naming the object", out)
	}
}

// The teardown never takes an object it could not read for gone.
func TestDeleteControlPlaneUnread(t *testing.T) {
	ref := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	s := &Scope{Found: true, Cluster: &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: ref}},
		ControlPlaneUnread: true, ControlPlaneErr: errors.New("etcdserver: request timed out")}
	out := deleteControlPlane(context.Background(), s)
	if out.Status != engine.Failed || !strings.Contains(out.Message, "SimControlPlane cp could not be read: etcdserver: request timed out") {
		t.Errorf("deleteControlPlane = %+v, want a failure naming the object and the error", out)
	}
}

// With a control plane object named, the teardown waits for the
// control-plane Machines the Cluster owns, not for those the object
// controls (they go with it); without one, for every control-plane Machine.
func TestDescendantsWithAControlPlaneObject(t *testing.T) {
	ref := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"}}
	cpMachine := func(name string, owner metav1.OwnerReference) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{clusterv1.ControlPlaneLabel: ""}, OwnerReferences: []metav1.OwnerReference{owner}}}
	}
	byCluster := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1"}
	byObject := metav1.OwnerReference{APIVersion: "sim.krtt.dev/v1alpha1", Kind: "SimControlPlane", Name: "cp", Controller: ptr.To(true)}
	for _, tc := range []struct {
		name     string
		ref      *clusterv1.ObjectReference
		machines []*clusterv1.Machine
		want     string
		says     string
	}{
		{"no object, controlled by another", nil, []*clusterv1.Machine{cpMachine("cp-0", byObject)}, "ControlPlane", "cp-0 (left to its owner)"},
		{"object, controlled by it", ref, []*clusterv1.Machine{cpMachine("cp-0", byObject)}, "None", "waiting for SimControlPlane cp to be deleted"},
		{"object, owned by the Cluster", ref, []*clusterv1.Machine{cpMachine("cp-0", byCluster), cpMachine("cp-1", byObject)}, "ControlPlane",
			"1 control-plane Machine still deleting: cp-0 (deletion requested); then SimControlPlane cp"},
	} {
		cl := c.DeepCopy()
		cl.Spec.ControlPlaneRef = tc.ref
		s := &Scope{Found: true, Cluster: cl, Machines: tc.machines}
		if tc.ref != nil {
			s.ControlPlane = &unstructured.Unstructured{}
		}
		if got := descendants(s); got != tc.want {
			t.Errorf("%s: descendants = %s, want %s", tc.name, got, tc.want)
		}
		if got := s.Remaining(); !strings.Contains(got, tc.says) {
			t.Errorf("%s: Remaining = %q, want it to say %q", tc.name, got, tc.says)
		}
	}
}

// The workers go in one pass (Cluster API filterOwnedDescendants): the
// message names the MachineDeployments, the MachineSets outside them and the
// worker Machines outside those; a deployment's MachineSets and Machines are
// counted with it. Once the deployment is gone, its set and Machines would
// be named like any other.
func TestRemainingNamesEveryWorkerKindAtOnce(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"}, Spec: clusterv1.ClusterSpec{}}
	byCluster := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1"}
	ctl := func(kind, name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name, Controller: ptr.To(true)}
	}
	machine := func(name string, owner metav1.OwnerReference, labels map[string]string) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}}}
	}
	s := &Scope{Found: true, Cluster: c,
		MachineDeployments: []clusterv1.MachineDeployment{{ObjectMeta: metav1.ObjectMeta{Name: "md1", Namespace: "ns"}, Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c1"}}},
		MachineSets: []clusterv1.MachineSet{
			{ObjectMeta: metav1.ObjectMeta{Name: "md1-abc", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{ctl("MachineDeployment", "md1")}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{byCluster}}},
		},
		Machines: []*clusterv1.Machine{
			machine("md1-abc-1", ctl("MachineSet", "md1-abc"), nil),
			machine("workers-1", ctl("MachineSet", "workers"), nil),
			machine("lone", byCluster, nil),
			machine("cp", byCluster, map[string]string{clusterv1.ControlPlaneLabel: ""}),
		},
	}
	if got := descendants(s); got != "Deployments" {
		t.Errorf("descendants = %s, want Deployments", got)
	}
	want := "1 MachineDeployment still deleting: md1; 1 MachineSet still deleting: workers; 2 worker Machines still deleting: " +
		"lone (deletion requested), workers-1 (left to its owner); then 1 control-plane Machine"
	if got := s.Remaining(); got != want {
		t.Errorf("Remaining =\n %s\nwant\n %s", got, want)
	}
	s.MachineDeployments = nil
	want = "2 MachineSets still deleting: md1-abc, workers; 3 worker Machines still deleting: " +
		"lone (deletion requested), md1-abc-1 (left to its owner), workers-1 (left to its owner); then 1 control-plane Machine"
	if got := s.Remaining(); got != want {
		t.Errorf("Remaining without the deployment =\n %s\nwant\n %s", got, want)
	}
}

// ControlPlaneInitialized is Cluster API's setControlPlaneInitializedCondition:
// the control plane object's status.initialization, or without one a
// control-plane Machine with a Node; once True it stays.
func TestControlPlaneInitialized(t *testing.T) {
	ref := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	cpObject := func(initialized *bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if initialized != nil {
			_ = unstructured.SetNestedField(u.Object, *initialized, "status", "initialization", "controlPlaneInitialized")
		}
		return u
	}
	cpMachine := func(node bool) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Labels: map[string]string{clusterv1.ControlPlaneLabel: ""}}}
		if node {
			m.Status.NodeRef = &clusterv1.MachineNodeReference{Name: "n"}
		}
		return m
	}
	yes, no := true, false
	for _, tc := range []struct {
		name  string
		named bool
		scope *Scope
		want  string
	}{
		{"object missing", true, &Scope{ControlPlaneMissing: "SimControlPlane/cp does not exist"}, "Unknown ObjectDoesNotExist SimControlPlane does not exist"},
		{"object without initialization", true, &Scope{ControlPlane: cpObject(nil)}, "False NotInitialized Control plane not yet initialized"},
		{"object not initialized", true, &Scope{ControlPlane: cpObject(&no)}, "False NotInitialized Control plane not yet initialized"},
		{"object initialized", true, &Scope{ControlPlane: cpObject(&yes)}, "True Initialized "},
		{"no object, a control-plane Machine without a Node", false, &Scope{Machines: []*clusterv1.Machine{cpMachine(false)}}, "False NotInitialized Waiting for the first control plane machine to have status.nodeRef set"},
		{"no object, a control-plane Machine with a Node", false, &Scope{Machines: []*clusterv1.Machine{cpMachine(true)}}, "True Initialized "},
	} {
		s := tc.scope
		s.Cluster = &clusterv1.Cluster{}
		if tc.named {
			s.Cluster.Spec.ControlPlaneRef = ref
		}
		mirrorControlPlaneInitialized(s)
		c := meta.FindStatusCondition(s.Cluster.Status.Conditions, ControlPlaneInitializedCondition)
		if got := string(c.Status) + " " + c.Reason + " " + c.Message; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// Once True it stays, whatever comes after.
	s := &Scope{Cluster: &clusterv1.Cluster{}, Machines: []*clusterv1.Machine{cpMachine(true)}}
	mirrorControlPlaneInitialized(s)
	s.Machines = nil
	mirrorControlPlaneInitialized(s)
	if !meta.IsStatusConditionTrue(s.Cluster.Status.Conditions, ControlPlaneInitializedCondition) {
		t.Error("ControlPlaneInitialized went back to not True")
	}
}

// status.controlPlane is Cluster API's setControlPlaneReplicas: the
// object's contract counters, or the control-plane Machines by their
// conditions.
func TestControlPlaneCounts(t *testing.T) {
	show := func(cp clusterv1.ClusterReplicas) string {
		n := func(p *int32) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprint(*p)
		}
		return strings.Join([]string{n(cp.DesiredReplicas), n(cp.Replicas), n(cp.ReadyReplicas), n(cp.AvailableReplicas), n(cp.UpToDateReplicas), fmt.Sprint(cp.Versions)}, " ")
	}
	// status.versions by the contract; an entry without a version is left out.
	obj := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"replicas": int64(3)},
		"status": map[string]any{"replicas": int64(3), "readyReplicas": int64(2), "availableReplicas": int64(1),
			"versions": []any{map[string]any{"version": "v1.37.1", "replicas": int64(1)}, map[string]any{"version": "v1.37.0", "replicas": int64(2)}, map[string]any{"replicas": int64(4)}}},
	}}
	ref := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	cpMachine := func(conds ...string) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{clusterv1.ControlPlaneLabel: ""}}, Spec: clusterv1.MachineSpec{Version: "v1.37.0"}}
		for _, c := range conds {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue})
		}
		return m
	}
	worker := &clusterv1.Machine{}
	worker.Status.Conditions = []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue}}
	for _, tc := range []struct {
		name  string
		ref   *clusterv1.ObjectReference
		scope *Scope
		want  string
	}{
		{"the object's counters, upToDateReplicas not reported", ref, &Scope{ControlPlane: obj}, "3 3 2 1 - [{v1.37.0 2} {v1.37.1 1}]"},
		{"the object does not exist", ref, &Scope{ControlPlaneMissing: "SimControlPlane/cp does not exist"}, "- - - - - []"},
		{"no object: the control-plane Machines", nil, &Scope{Machines: []*clusterv1.Machine{
			cpMachine(clusterv1.ReadyCondition, clusterv1.AvailableCondition), cpMachine(), worker}}, "2 2 1 1 - [{v1.37.0 2}]"},
		{"no object, no control-plane Machine", nil, &Scope{Machines: []*clusterv1.Machine{worker}}, "- - - - - []"},
	} {
		s := tc.scope
		s.Cluster = &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: tc.ref}}
		mirrorControlPlaneCounts(s)
		if got := show(s.Cluster.Status.ControlPlane); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// spec.availabilityGates join the conditions Available summarizes (Cluster
// API setAvailableCondition): a gate not reported is Unknown, a Negative
// one is fine while False.
func TestAvailabilityGates(t *testing.T) {
	fine := []metav1.Condition{
		{Type: clusterv1.DeletingCondition, Status: metav1.ConditionFalse, Reason: "NotDeleting"},
		{Type: RemoteConnectionProbeCondition, Status: metav1.ConditionTrue, Reason: "ProbeSucceeded"},
		{Type: WorkersAvailableCondition, Status: metav1.ConditionTrue, Reason: "Available"},
	}
	gates := []clusterv1.ClusterAvailabilityGate{{ConditionType: "example.com/AddonsInstalled"}, {ConditionType: "example.com/Quarantined", Polarity: clusterv1.NegativePolarity}}
	for _, tc := range []struct {
		name  string
		extra []metav1.Condition
		want  string
	}{
		{"gates not reported", nil, "Unknown AvailableUnknown * example.com/AddonsInstalled: Condition not yet reported\n* example.com/Quarantined: Condition not yet reported"},
		{"positive gate False", []metav1.Condition{
			{Type: "example.com/AddonsInstalled", Status: metav1.ConditionFalse, Reason: "Installing", Message: "2 of 5 add-ons"},
			{Type: "example.com/Quarantined", Status: metav1.ConditionFalse, Reason: "Clean"}}, "False NotAvailable * example.com/AddonsInstalled: 2 of 5 add-ons"},
		{"negative gate True", []metav1.Condition{
			{Type: "example.com/AddonsInstalled", Status: metav1.ConditionTrue, Reason: "Installed"},
			{Type: "example.com/Quarantined", Status: metav1.ConditionTrue, Reason: "CVE", Message: "a node image is vulnerable"}}, "False NotAvailable * example.com/Quarantined: a node image is vulnerable"},
		{"both fine", []metav1.Condition{
			{Type: "example.com/AddonsInstalled", Status: metav1.ConditionTrue, Reason: "Installed"},
			{Type: "example.com/Quarantined", Status: metav1.ConditionFalse, Reason: "Clean"}}, "True Available "},
	} {
		c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{AvailabilityGates: gates}}
		c.Status.Conditions = append(append([]metav1.Condition{}, fine...), tc.extra...)
		summarizeAvailable(&Scope{Cluster: c})
		a := meta.FindStatusCondition(c.Status.Conditions, AvailableCondition)
		if got := string(a.Status) + " " + a.Reason + " " + a.Message; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// While a Cluster is deleted, its infrastructure and control plane objects
// being gone is no line of Available (Cluster API's
// clusterConditionCustomMergeStrategy treats them as info then); before, it
// is an issue.
func TestAvailableWhileDeleted(t *testing.T) {
	conds := []metav1.Condition{
		{Type: clusterv1.DeletingCondition, Status: metav1.ConditionTrue, Reason: "WaitingForInfrastructureDeletion", Message: "Waiting for SimCluster to be deleted"},
		{Type: RemoteConnectionProbeCondition, Status: metav1.ConditionTrue, Reason: "ProbeSucceeded"},
		{Type: InfrastructureReadyCondition, Status: metav1.ConditionFalse, Reason: clusterv1.ObjectDoesNotExistReason, Message: "SimCluster does not exist"},
		{Type: ControlPlaneAvailableCondition, Status: metav1.ConditionFalse, Reason: clusterv1.ObjectDeletedReason, Message: "SimControlPlane has been deleted"},
		{Type: WorkersAvailableCondition, Status: metav1.ConditionTrue, Reason: "NoWorkers"},
	}
	for _, tc := range []struct {
		name     string
		deleting bool
		want     string
	}{
		{"deleted", true, "False NotAvailable * Deleting: Waiting for SimCluster to be deleted"},
		{"not deleted", false, "False NotAvailable * Deleting: Waiting for SimCluster to be deleted\n* InfrastructureReady: SimCluster does not exist\n* ControlPlaneAvailable: SimControlPlane has been deleted"},
	} {
		c := &clusterv1.Cluster{}
		if tc.deleting {
			c.DeletionTimestamp = ptr.To(metav1.Now())
		}
		c.Status.Conditions = append([]metav1.Condition{}, conds...)
		summarizeAvailable(&Scope{Cluster: c})
		a := meta.FindStatusCondition(c.Status.Conditions, AvailableCondition)
		if got := string(a.Status) + " " + a.Reason + " " + a.Message; got != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}
