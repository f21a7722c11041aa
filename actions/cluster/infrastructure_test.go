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

var infraRef = &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimCluster", Name: "infra"}

// simObject is a provider object as read: spec.controlPlaneEndpoint and
// status fields by the contract.
func simObject(kind string, host string, port int64, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}, "status": status}}
	u.SetAPIVersion("sim.krtt.dev/v1alpha1")
	u.SetKind(kind)
	u.SetName("x")
	if host != "" || port != 0 {
		u.Object["spec"] = map[string]any{"controlPlaneEndpoint": map[string]any{"host": host, "port": port}}
	}
	return u
}

func provisioned(v bool) map[string]any {
	return map[string]any{"initialization": map[string]any{"provisioned": v}}
}

// TestInfrastructureFacts: what the rows decide on, as Cluster API's
// reconcileInfrastructure and reconcileControlPlane read it.
func TestInfrastructureFacts(t *testing.T) {
	cpRef := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	initialized := map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true}}
	for _, tc := range []struct {
		name                    string
		ref                     *clusterv1.ObjectReference
		infra, cp               *unstructured.Unstructured
		unread, wasProvisioned  bool
		endpoint                clusterv1.APIEndpoint
		wantInfra, wantEndpoint string
		wantProvisioned         bool
	}{
		{name: "no reference", wantInfra: "NotNamed", wantEndpoint: "Unset", wantProvisioned: true},
		{name: "no reference, endpoint from the initialized control plane", cp: simObject("SimControlPlane", "cp.example.com", 443, initialized), wantInfra: "NotNamed", wantEndpoint: "FromControlPlane", wantProvisioned: true},
		{name: "missing", ref: infraRef, wantInfra: "Missing", wantEndpoint: "Unset"},
		{name: "missing after it was provisioned", ref: infraRef, wasProvisioned: true, wantInfra: "Missing", wantEndpoint: "Unset", wantProvisioned: true},
		{name: "unread", ref: infraRef, unread: true, wantInfra: "Unread", wantEndpoint: "Unset"},
		{name: "not provisioned, endpoint not copied yet", ref: infraRef, infra: simObject("SimCluster", "lb.example.com", 6443, provisioned(false)), wantInfra: "Found", wantEndpoint: "Unset"},
		{name: "provisioned, gives the endpoint", ref: infraRef, infra: simObject("SimCluster", "lb.example.com", 6443, provisioned(true)), wantInfra: "Found", wantEndpoint: "FromInfrastructure", wantProvisioned: true},
		{name: "v1beta1 status.ready", ref: infraRef, infra: simObject("SimCluster", "lb.example.com", 6443, map[string]any{"ready": true}), wantInfra: "Found", wantEndpoint: "FromInfrastructure", wantProvisioned: true},
		{name: "provisioned, a host too long for the Cluster is no endpoint", ref: infraRef, infra: simObject("SimCluster", strings.Repeat("h", 513), 6443, provisioned(true)), wantInfra: "Found", wantEndpoint: "Unset", wantProvisioned: true},
		{name: "provisioned, a port out of range is no endpoint", ref: infraRef, infra: simObject("SimCluster", "lb.example.com", 70000, provisioned(true)), wantInfra: "Found", wantEndpoint: "Unset", wantProvisioned: true},
		{name: "provisioned without one, the control plane is not initialized", ref: infraRef, infra: simObject("SimCluster", "", 0, provisioned(true)), cp: simObject("SimControlPlane", "cp.example.com", 443, nil), wantInfra: "Found", wantEndpoint: "Unset", wantProvisioned: true},
		{name: "provisioned without one, the initialized control plane gives it", ref: infraRef, infra: simObject("SimCluster", "", 0, provisioned(true)), cp: simObject("SimControlPlane", "cp.example.com", 443, initialized), wantInfra: "Found", wantEndpoint: "FromControlPlane", wantProvisioned: true},
		{name: "the Cluster's own endpoint wins", ref: infraRef, infra: simObject("SimCluster", "lb.example.com", 6443, provisioned(true)), endpoint: clusterv1.APIEndpoint{Host: "mine.example.com", Port: 6443}, wantInfra: "Found", wantEndpoint: "Set", wantProvisioned: true},
		{name: "a host without a port is no endpoint", ref: infraRef, infra: simObject("SimCluster", "", 0, provisioned(true)), endpoint: clusterv1.APIEndpoint{Host: "mine.example.com"}, wantInfra: "Found", wantEndpoint: "Unset", wantProvisioned: true},
	} {
		c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: tc.ref, ControlPlaneEndpoint: tc.endpoint}}
		if tc.cp != nil {
			c.Spec.ControlPlaneRef = cpRef
		}
		if tc.wasProvisioned {
			c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		}
		s := &Scope{Found: true, Cluster: c, Infrastructure: tc.infra, InfrastructureUnread: tc.unread, ControlPlane: tc.cp}
		if got := infrastructure(s); got != tc.wantInfra {
			t.Errorf("%s: infrastructure = %s, want %s", tc.name, got, tc.wantInfra)
		}
		if got := infrastructureProvisioned(s); got != tc.wantProvisioned {
			t.Errorf("%s: infrastructureProvisioned = %v, want %v", tc.name, got, tc.wantProvisioned)
		}
		if got := controlPlaneEndpoint(s); got != tc.wantEndpoint {
			t.Errorf("%s: controlPlaneEndpoint = %s, want %s", tc.name, got, tc.wantEndpoint)
		}
	}
}

// TestCopyControlPlaneEndpoint: the infrastructure object's endpoint first,
// else the initialized control plane object's; the kit's patch writes it.
func TestCopyControlPlaneEndpoint(t *testing.T) {
	cpRef := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	initialized := map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true}}
	for _, tc := range []struct {
		name      string
		infra, cp *unstructured.Unstructured
		want      clusterv1.APIEndpoint
		detail    string
	}{
		{"from the infrastructure", simObject("SimCluster", "lb.example.com", 6443, provisioned(true)), simObject("SimControlPlane", "cp.example.com", 443, initialized),
			clusterv1.APIEndpoint{Host: "lb.example.com", Port: 6443}, "control plane endpoint lb.example.com:6443 from SimCluster infra"},
		{"from the control plane", simObject("SimCluster", "", 0, provisioned(true)), simObject("SimControlPlane", "cp.example.com", 443, initialized),
			clusterv1.APIEndpoint{Host: "cp.example.com", Port: 443}, "control plane endpoint cp.example.com:443 from SimControlPlane cp"},
	} {
		c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef, ControlPlaneRef: cpRef}}
		s := &Scope{Found: true, Cluster: c, Infrastructure: tc.infra, ControlPlane: tc.cp}
		out := copyControlPlaneEndpoint(context.Background(), s)
		if out.Status != engine.Done || out.Message != tc.detail {
			t.Errorf("%s: outcome %+v, want detail %q", tc.name, out, tc.detail)
		}
		if c.Spec.ControlPlaneEndpoint != tc.want {
			t.Errorf("%s: endpoint %+v, want %+v", tc.name, c.Spec.ControlPlaneEndpoint, tc.want)
		}
	}
}

// TestMirrorInfrastructure is Cluster API's setInfrastructureReadyCondition,
// with status.initialization.infrastructureProvisioned kept once true.
func TestMirrorInfrastructure(t *testing.T) {
	ready := func(status, reason, msg string) map[string]any {
		st := provisioned(status == "True")
		st["conditions"] = []any{map[string]any{"type": "Ready", "status": status, "reason": reason, "message": msg}}
		return st
	}
	deleting := metav1.Now()
	for _, tc := range []struct {
		name            string
		ref             *clusterv1.ObjectReference
		infra           *unstructured.Unstructured
		unread, was     bool
		clusterDeleting bool
		want            string
		wantProvisioned bool
	}{
		{name: "no reference: no condition, provisioned", want: "", wantProvisioned: true},
		{name: "its Ready condition", ref: infraRef, infra: simObject("SimCluster", "", 0, ready("False", "LoadBalancerPending", "waiting for the load balancer")), want: "False LoadBalancerPending waiting for the load balancer"},
		{name: "Ready True without a reason (v1beta1)", ref: infraRef, infra: simObject("SimCluster", "", 0, ready("True", "", "")), want: "True Ready ", wantProvisioned: true},
		{name: "Ready False without a reason", ref: infraRef, infra: simObject("SimCluster", "", 0, ready("False", "", "no load balancer")), want: "False NoReasonReported no load balancer"},
		{name: "no Ready condition, not provisioned", ref: infraRef, infra: simObject("SimCluster", "", 0, provisioned(false)), want: "False NotReady SimCluster status.initialization.provisioned is false"},
		{name: "no Ready condition, provisioned", ref: infraRef, infra: simObject("SimCluster", "", 0, provisioned(true)), want: "True Ready ", wantProvisioned: true},
		{name: "missing", ref: infraRef, want: "False ObjectDoesNotExist SimCluster does not exist"},
		{name: "gone after it was provisioned", ref: infraRef, was: true, want: "False ObjectDeleted SimCluster has been deleted while the cluster still exists", wantProvisioned: true},
		{name: "gone in the teardown", ref: infraRef, was: true, clusterDeleting: true, want: "False ObjectDeleted SimCluster has been deleted", wantProvisioned: true},
		{name: "unread", ref: infraRef, unread: true, want: "Unknown InternalError SimCluster infra could not be read: etcdserver: request timed out"},
	} {
		c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: tc.ref}}
		if tc.was {
			c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		}
		if tc.clusterDeleting {
			c.DeletionTimestamp = &deleting
		}
		s := &Scope{Found: true, Cluster: c, Infrastructure: tc.infra, InfrastructureUnread: tc.unread}
		if tc.unread {
			s.InfrastructureErr = errors.New("etcdserver: request timed out")
		}
		mirrorInfrastructure(s)
		got := ""
		if cond := meta.FindStatusCondition(c.Status.Conditions, InfrastructureReadyCondition); cond != nil {
			got = fmt.Sprintf("%s %s %s", cond.Status, cond.Reason, cond.Message)
		}
		if got != tc.want {
			t.Errorf("%s: InfrastructureReady %q, want %q", tc.name, got, tc.want)
		}
		if p := ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false); p != tc.wantProvisioned {
			t.Errorf("%s: infrastructureProvisioned %v, want %v", tc.name, p, tc.wantProvisioned)
		}
	}
}

// TestDeleteInfrastructureUnread: an object an API error left unread is
// neither deleted nor taken for gone.
func TestDeleteInfrastructureUnread(t *testing.T) {
	c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}}
	s := &Scope{Found: true, Cluster: c, InfrastructureUnread: true, InfrastructureErr: errors.New("etcdserver: request timed out")}
	out := deleteInfrastructure(context.Background(), s)
	if out.Status != engine.Failed || out.Message != "everything else of the Cluster is gone, but SimCluster infra could not be read: etcdserver: request timed out" {
		t.Fatalf("outcome %+v", out)
	}
}

// TestReferencesAdopted: each object that exists and is not being deleted
// needs the Cluster's owner reference and its label, whether the Cluster is
// being deleted or not (row K19 adopts only while it is not).
func TestReferencesAdopted(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: "uid-1"}}
	owned := func() *unstructured.Unstructured {
		u := simObject("SimCluster", "", 0, nil)
		u.SetLabels(map[string]string{clusterv1.ClusterNameLabel: "c1"})
		u.SetOwnerReferences([]metav1.OwnerReference{ownerReference(c)})
		return u
	}
	unlabelled := owned()
	unlabelled.SetLabels(nil)
	unowned := owned()
	unowned.SetOwnerReferences(nil)
	goingAway := simObject("SimCluster", "", 0, nil)
	now := metav1.Now()
	goingAway.SetDeletionTimestamp(&now)
	for _, tc := range []struct {
		name      string
		infra, cp *unstructured.Unstructured
		deleting  bool
		want      bool
	}{
		{name: "nothing named", want: true},
		{name: "both adopted", infra: owned(), cp: owned(), want: true},
		{name: "label missing", infra: unlabelled, cp: owned()},
		{name: "owner reference missing", infra: owned(), cp: unowned},
		{name: "an object being deleted is left alone", infra: goingAway, want: true},
		{name: "a Cluster being deleted reads what is there", infra: unowned, deleting: true},
	} {
		cl := c.DeepCopy()
		if tc.deleting {
			cl.DeletionTimestamp = &now
		}
		s := &Scope{Found: true, Cluster: cl, Infrastructure: tc.infra, ControlPlane: tc.cp}
		if got := referencesAdopted(s); got != tc.want {
			t.Errorf("%s: referencesAdopted = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRemainingNamesInfrastructureLast: the teardown names the
// infrastructure object after the control plane object.
func TestRemainingNamesInfrastructureLast(t *testing.T) {
	cpRef := &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimControlPlane", Name: "cp"}
	c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef, ControlPlaneRef: cpRef}}
	s := &Scope{Found: true, Cluster: c, Infrastructure: simObject("SimCluster", "", 0, nil), ControlPlane: simObject("SimControlPlane", "", 0, nil)}
	if got, want := s.Remaining(), "every MachineDeployment, MachineSet and Machine the Cluster waits for is gone; waiting for SimControlPlane cp, then SimCluster infra to be deleted"; got != want {
		t.Errorf("Remaining() = %q, want %q", got, want)
	}
	s.ControlPlane, s.ControlPlaneMissing = nil, "SimControlPlane/cp does not exist"
	if got, want := s.Remaining(), "every MachineDeployment, MachineSet and Machine the Cluster waits for is gone; waiting for SimCluster infra to be deleted"; got != want {
		t.Errorf("Remaining() = %q, want %q", got, want)
	}
}

// TestWaitDetail: krtt explain says what provisioning waits for, or what of
// the teardown is left.
func TestWaitDetail(t *testing.T) {
	c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}}
	s := &Scope{Found: true, Cluster: c, Infrastructure: simObject("SimCluster", "", 0, provisioned(false))}
	if got, want := waitDetail(context.Background(), false, s), "waiting for SimCluster infra to report status.initialization.provisioned"; got != want {
		t.Errorf("provisioning: %q, want %q", got, want)
	}
	s.Infrastructure = simObject("SimCluster", "", 0, provisioned(true))
	if got, want := waitDetail(context.Background(), false, s), "SimCluster infra is provisioned; waiting for a control plane endpoint: neither spec.controlPlaneEndpoint nor the infrastructure or initialized control plane object gives one"; got != want {
		t.Errorf("endpoint: %q, want %q", got, want)
	}
	if got, want := waitDetail(context.Background(), true, s), "every MachineDeployment, MachineSet and Machine the Cluster waits for is gone; waiting for SimCluster infra to be deleted"; got != want {
		t.Errorf("teardown: %q, want %q", got, want)
	}
}

// TestFailureDomainsOf reads both contract shapes, as Cluster API's
// contract.InfrastructureCluster().FailureDomains.
func TestFailureDomainsOf(t *testing.T) {
	list := simObject("SimCluster", "", 0, map[string]any{"failureDomains": []any{
		map[string]any{"name": "zone-b", "attributes": map[string]any{"rack": "7"}},
		map[string]any{"name": "zone-a", "controlPlane": true},
		map[string]any{"controlPlane": true},
	}})
	byName := simObject("SimCluster", "", 0, map[string]any{"failureDomains": map[string]any{
		"zone-b": map[string]any{"controlPlane": false},
		"zone-a": map[string]any{"controlPlane": true, "attributes": map[string]any{"rack": "1"}},
	}})
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"v1beta2 list", list, "zone-a true map[]; zone-b false map[rack:7]"},
		{"v1beta1 map", byName, "zone-a true map[rack:1]; zone-b false map[]"},
		{"none", simObject("SimCluster", "", 0, nil), ""},
	} {
		got := ""
		for i, fd := range failureDomainsOf(tc.u) {
			if i > 0 {
				got += "; "
			}
			got += fmt.Sprintf("%s %v %v", fd.Name, *fd.ControlPlane, fd.Attributes)
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
