package machine

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// TestNodeHealthFact: the health timeout's reading of the Node (the
// machine-controller-manager's): Ready, and spec.health.nodeConditions.
func TestNodeHealthFact(t *testing.T) {
	node := func(conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: conds}}
	}
	c := func(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s}
	}
	defaults := clusterv1.DefaultHealthNodeConditions
	for _, tc := range []struct {
		name  string
		n     *corev1.Node
		types []string
		fact  string
	}{
		{"ready", node(c(corev1.NodeReady, "True")), defaults, nodeHealthy},
		{"no Ready condition", node(), defaults, nodeNotReported},
		{"Ready unknown", node(c(corev1.NodeReady, "Unknown")), defaults, nodeNotReady},
		{"not ready", node(c(corev1.NodeReady, "False")), defaults, nodeNotReady},
		{"listed condition True", node(c(corev1.NodeReady, "True"), c(corev1.NodeDiskPressure, "True")), defaults, nodeConditionsFailed},
		{"not Ready wins", node(c(corev1.NodeReady, "Unknown"), c("KernelDeadlock", "True")), defaults, nodeNotReady},
		{"listed condition unknown", node(c(corev1.NodeReady, "True"), c("NetworkUnavailable", "Unknown")), defaults, nodeHealthy},
		{"unlisted condition True", node(c(corev1.NodeReady, "True"), c(corev1.NodeMemoryPressure, "True")), defaults, nodeHealthy},
		{"own list", node(c(corev1.NodeReady, "True"), c(corev1.NodeMemoryPressure, "True")), []string{"MemoryPressure"}, nodeConditionsFailed},
		{"empty list: only Ready counts", node(c(corev1.NodeReady, "True"), c(corev1.NodeDiskPressure, "True")), []string{}, nodeHealthy},
		{"no Node", nil, defaults, nodeHealthy},
	} {
		if f := checkNodeHealth(tc.n, tc.types).fact(); f != tc.fact {
			t.Errorf("%s: fact %s, want %s", tc.name, f, tc.fact)
		}
	}
}

// TestNodeHealthyCondition: NodeHealthy in Cluster API's words
// (summarizeNodeConditions), with the types of spec.health.nodeConditions
// beyond Cluster API's when the Node reports them other than False.
func TestNodeHealthyCondition(t *testing.T) {
	c := func(t corev1.NodeConditionType, s corev1.ConditionStatus, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Message: msg}
	}
	fine := func(extra ...corev1.NodeCondition) *corev1.Node {
		conds := []corev1.NodeCondition{c(corev1.NodeReady, "True", "kubelet is posting ready status"),
			c(corev1.NodeMemoryPressure, "False", ""), c(corev1.NodeDiskPressure, "False", ""), c(corev1.NodePIDPressure, "False", "")}
		for _, e := range extra {
			replaced := false
			for i := range conds {
				if conds[i].Type == e.Type {
					conds[i], replaced = e, true
				}
			}
			if !replaced {
				conds = append(conds, e)
			}
		}
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: conds}}
	}
	defaults := clusterv1.DefaultHealthNodeConditions
	for _, tc := range []struct {
		name    string
		n       *corev1.Node
		types   []string
		want    metav1.ConditionStatus
		reason  string
		message string
	}{
		{"healthy", fine(), defaults, "True", "NodeHealthy", ""},
		{"not ready", fine(c(corev1.NodeReady, "False", "container runtime is down")), defaults,
			"False", "NodeNotHealthy", "* Node.Ready: container runtime is down"},
		{"ready unknown without a message", fine(c(corev1.NodeReady, "Unknown", "")), defaults,
			"Unknown", "NodeHealthyUnknown", "* Node.Ready: Condition is Unknown"},
		{"memory pressure", fine(c(corev1.NodeMemoryPressure, "True", "kubelet has insufficient memory available")), defaults,
			"False", "NodeNotHealthy", "* Node.MemoryPressure: kubelet has insufficient memory available"},
		{"False wins over Unknown", fine(c(corev1.NodeReady, "Unknown", "x"), c(corev1.NodePIDPressure, "True", "y")), defaults,
			"False", "NodeNotHealthy", "* Node.Ready: x\n* Node.PIDPressure: y"},
		{"the same words from every condition", fine(c(corev1.NodeReady, "Unknown", "Kubelet stopped posting node status."),
			c(corev1.NodeMemoryPressure, "Unknown", "Kubelet stopped posting node status."),
			c(corev1.NodeDiskPressure, "Unknown", "Kubelet stopped posting node status."),
			c(corev1.NodePIDPressure, "Unknown", "Kubelet stopped posting node status.")), defaults,
			"Unknown", "NodeHealthyUnknown", "* Node.AllConditions: Kubelet stopped posting node status."},
		{"pressures not reported", &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{c(corev1.NodeReady, "True", "")}}}, defaults,
			"Unknown", "NodeHealthyUnknown", "* Node.MemoryPressure: Condition not yet reported\n* Node.DiskPressure: Condition not yet reported\n* Node.PIDPressure: Condition not yet reported"},
		{"nothing reported", &corev1.Node{}, defaults, "Unknown", "NodeHealthyUnknown",
			"* Node.Ready: Condition not yet reported\n* Node.MemoryPressure: Condition not yet reported\n* Node.DiskPressure: Condition not yet reported\n* Node.PIDPressure: Condition not yet reported"},
		{"a health condition", fine(c("KernelDeadlock", "True", "docker hung")), defaults,
			"False", "NodeNotHealthy", "* Node.KernelDeadlock: docker hung"},
		{"a health condition not listed", fine(c("KernelDeadlock", "True", "docker hung")), []string{}, "True", "NodeHealthy", ""},
		{"a listed condition not reported", fine(), []string{"KernelDeadlock"}, "True", "NodeHealthy", ""},
	} {
		got, reason, msg := nodeHealth(tc.n, tc.types)
		if got != tc.want || reason != tc.reason || msg != tc.message {
			t.Errorf("%s: %s/%s %q, want %s/%s %q", tc.name, got, reason, msg, tc.want, tc.reason, tc.message)
		}
	}
}

// A Machine given only a data secret is BootstrapConfigReady True with
// reason DataSecretProvided and no message, as Cluster API's
// setBootstrapReadyCondition.
func TestDataSecretProvided(t *testing.T) {
	m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.MachineBootstrap{DataSecretName: ptr.To("user-data")}}}
	mirrorConditions(&Scope{Machine: m})
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.BootstrapConfigReadyCondition)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != "DataSecretProvided" || c.Message != "" {
		t.Fatalf("BootstrapConfigReady = %+v, want True DataSecretProvided without a message", c)
	}
}

// TestBootstrapConfigMissingIsSaid: a Machine that goes on with its data
// secret while the object configRef names does not exist says so in
// BootstrapConfigReady; once the data secret came from it and the Machine
// is being deleted, the object went as part of the deletion.
func TestBootstrapConfigMissingIsSaid(t *testing.T) {
	m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.MachineBootstrap{
		ConfigRef:      &clusterv1.ObjectReference{Kind: "SimBootstrapConfig", Name: "b1"},
		DataSecretName: ptr.To("user-data")}}}
	mirrorConditions(&Scope{Machine: m})
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.BootstrapConfigReadyCondition)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "ObjectDoesNotExist" || c.Message != "SimBootstrapConfig does not exist" {
		t.Fatalf("BootstrapConfigReady = %+v, want False ObjectDoesNotExist \"SimBootstrapConfig does not exist\"", c)
	}
	m.DeletionTimestamp = ptr.To(metav1.Now())
	m.Status.Initialization.BootstrapDataSecretCreated = ptr.To(true)
	mirrorConditions(&Scope{Machine: m})
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.BootstrapConfigReadyCondition); c == nil || c.Reason != "ObjectDeleted" || c.Message != "SimBootstrapConfig has been deleted" {
		t.Fatalf("BootstrapConfigReady = %+v, want ObjectDeleted \"SimBootstrapConfig has been deleted\"", c)
	}
	m2 := m.DeepCopy()
	m2.Status.Conditions = nil
	mirrorConditions(&Scope{Machine: m2, ObserveError: reconciler.ObserveError{Err: errors.New("the API server did not answer")}})
	if c := meta.FindStatusCondition(m2.Status.Conditions, clusterv1.BootstrapConfigReadyCondition); c != nil {
		t.Fatalf("an object that could not be read reads as missing: %+v", c)
	}
}

// TestInfrastructureMissingIsSaid follows Cluster API's
// setInfrastructureReadyCondition for an infrastructure object that does
// not exist: never there, deleted while the Machine runs, deleted in the
// deletion, and one never provisioned whose Machine is being deleted.
func TestInfrastructureMissingIsSaid(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		provisioned, deleting bool
		want                  string
	}{
		{"never there", false, false, "ObjectDoesNotExist SimMachine does not exist"},
		{"lost while the Machine runs", true, false, "ObjectDeleted SimMachine has been deleted while the Machine still exists"},
		{"gone in the deletion", true, true, "ObjectDeleted SimMachine has been deleted"},
		{"never provisioned, deleting", false, true, "ObjectDoesNotExist SimMachine does not exist"},
	} {
		m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.MachineBootstrap{DataSecretName: ptr.To("d")},
			InfrastructureRef: clusterv1.ObjectReference{Kind: "SimMachine", Name: "m1"}}}
		m.Status.Initialization.InfrastructureProvisioned = ptr.To(tc.provisioned)
		if tc.deleting {
			m.DeletionTimestamp = ptr.To(metav1.Now())
		}
		mirrorConditions(&Scope{Machine: m})
		c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.InfrastructureReadyCondition)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason+" "+c.Message != tc.want {
			t.Errorf("%s: InfrastructureReady = %+v, want False %s", tc.name, c, tc.want)
		}
	}
}

// TestProviderReadyIsMirrored follows Cluster API's mirror of a provider
// object's Ready condition: as reported, an empty reason read as Ready when
// True and NoReasonReported otherwise; without one, the Machine's own
// status.initialization flag decides (Ready, or NotReady naming the field).
func TestProviderReadyIsMirrored(t *testing.T) {
	object := func(kind string, ready map[string]any, fields ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetKind(kind)
		if ready != nil {
			ready["type"] = "Ready"
			_ = unstructured.SetNestedSlice(u.Object, []any{ready}, "status", "conditions")
		}
		for _, f := range fields {
			_ = unstructured.SetNestedField(u.Object, true, "status", "initialization", f)
		}
		return u
	}
	for _, tc := range []struct {
		name      string
		ready     map[string]any
		fields    []string
		flag      bool
		wantBoot  string
		wantInfra string
	}{
		{name: "no condition, nothing done", wantBoot: "False NotReady SimBootstrapConfig status.initialization.dataSecretCreated is false",
			wantInfra: "False NotReady SimMachine status.initialization.provisioned is false"},
		// The object says it is done, but the Machine has not taken it up
		// (no providerID yet, say): the Machine's flag decides.
		{name: "no condition, the object done, the Machine not", fields: []string{"dataSecretCreated", "provisioned"},
			wantBoot:  "False NotReady SimBootstrapConfig status.initialization.dataSecretCreated is false",
			wantInfra: "False NotReady SimMachine status.initialization.provisioned is false"},
		{name: "no condition, the Machine done", flag: true, wantBoot: "True Ready ", wantInfra: "True Ready "},
		{name: "mirrored", ready: map[string]any{"status": "False", "reason": "Creating", "message": "VM booting"},
			wantBoot: "False Creating VM booting", wantInfra: "False Creating VM booting"},
		{name: "True without a reason", ready: map[string]any{"status": "True"}, wantBoot: "True Ready ", wantInfra: "True Ready "},
		{name: "False without a reason", ready: map[string]any{"status": "False", "message": "not yet"},
			wantBoot: "False NoReasonReported not yet", wantInfra: "False NoReasonReported not yet"},
	} {
		m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{
			Bootstrap:         clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{Kind: "SimBootstrapConfig", Name: "m1"}},
			InfrastructureRef: clusterv1.ObjectReference{Kind: "SimMachine", Name: "m1"}}}
		m.Status.Initialization.BootstrapDataSecretCreated = ptr.To(tc.flag)
		m.Status.Initialization.InfrastructureProvisioned = ptr.To(tc.flag)
		mirrorConditions(&Scope{Machine: m, Bootstrap: object("SimBootstrapConfig", tc.ready, tc.fields...),
			Infrastructure: object("SimMachine", tc.ready, tc.fields...)})
		for typ, want := range map[string]string{clusterv1.BootstrapConfigReadyCondition: tc.wantBoot, clusterv1.InfrastructureReadyCondition: tc.wantInfra} {
			c := meta.FindStatusCondition(m.Status.Conditions, typ)
			if c == nil || string(c.Status)+" "+c.Reason+" "+c.Message != want {
				t.Errorf("%s: %s = %+v, want %s", tc.name, typ, c, want)
			}
		}
	}
}

// TestNodeMissingIsSaid follows Cluster API's
// setNodeHealthyAndReadyConditions while no Node is seen: the Machine waits
// for its providerID, then for a Node with it; a Machine being deleted has
// none; a nodeRef's Node is gone. Nothing is said while the Node side
// cannot be read.
func TestNodeMissingIsSaid(t *testing.T) {
	read := fake.NewClientBuilder().Build()
	for _, tc := range []struct {
		name       string
		providerID string
		nodeRef    bool
		deleting   bool
		nodeClient client.Client
		want       string
	}{
		{name: "no providerID", nodeClient: read, want: "Unknown InspectionFailed Waiting for SimMachine to report spec.providerID"},
		{name: "providerID, no Node", providerID: "sim://ns/m1", nodeClient: read,
			want: "Unknown InspectionFailed Waiting for a Node with spec.providerID sim://ns/m1 to exist"},
		{name: "deleting", providerID: "sim://ns/m1", deleting: true, nodeClient: read, want: "Unknown NodeDoesNotExist Node does not exist"},
		{name: "nodeRef's Node gone", providerID: "sim://ns/m1", nodeRef: true, nodeClient: read,
			want: "False NodeDeleted Node n1 has been deleted while the Machine still exists"},
		{name: "Node side not read", providerID: "sim://ns/m1", want: ""},
	} {
		m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.MachineBootstrap{DataSecretName: ptr.To("d")},
			InfrastructureRef: clusterv1.ObjectReference{Kind: "SimMachine", Name: "m1"}}}
		if tc.providerID != "" {
			m.Spec.ProviderID = ptr.To(tc.providerID)
		}
		if tc.nodeRef {
			m.Status.NodeRef = &clusterv1.MachineNodeReference{Name: "n1"}
		}
		if tc.deleting {
			m.DeletionTimestamp = ptr.To(metav1.Now())
		}
		mirrorConditions(&Scope{Machine: m, NodeClient: tc.nodeClient})
		for _, typ := range []string{clusterv1.NodeReadyCondition, clusterv1.NodeHealthyCondition} {
			got := ""
			if c := meta.FindStatusCondition(m.Status.Conditions, typ); c != nil {
				got = string(c.Status) + " " + c.Reason + " " + c.Message
			}
			if got != tc.want {
				t.Errorf("%s: %s = %q, want %q", tc.name, typ, got, tc.want)
			}
		}
	}
}

// Ready is worded as Cluster API's setReadyCondition: one line per
// condition that is not True, NotReady when one is False, ReadyUnknown when
// none is, the step of a Machine being deleted.
func TestSummarizeReady(t *testing.T) {
	cond := func(typ string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg}
	}
	ready := []metav1.Condition{
		cond(clusterv1.BootstrapConfigReadyCondition, metav1.ConditionTrue, "Ready", ""),
		cond(clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, "Provisioned", ""),
		cond(clusterv1.NodeHealthyCondition, metav1.ConditionTrue, "NodeHealthy", ""),
	}
	with := func(cs ...metav1.Condition) []metav1.Condition {
		out := append([]metav1.Condition(nil), ready...)
		for _, c := range cs {
			meta.SetStatusCondition(&out, c)
		}
		return out
	}
	installed := []clusterv1.MachineReadinessGate{{ConditionType: "example.com/Installed"}}
	degraded := []clusterv1.MachineReadinessGate{{ConditionType: "example.com/Degraded", Polarity: clusterv1.NegativePolarity}}
	now := metav1.Now()
	for _, tc := range []struct {
		name     string
		conds    []metav1.Condition
		deleting bool
		want     string
		gates    []clusterv1.MachineReadinessGate
	}{
		{"all True", ready, false, "True Ready: ", nil},
		{"one False, one Unknown", with(cond(clusterv1.BootstrapConfigReadyCondition, metav1.ConditionFalse, "NotReady", "Waiting for the bootstrap provider"),
			cond(clusterv1.NodeHealthyCondition, metav1.ConditionUnknown, "InspectionFailed", "")), false,
			"False NotReady: * BootstrapConfigReady: Waiting for the bootstrap provider\n* NodeHealthy: InspectionFailed", nil},
		{"only Unknown", with(cond(clusterv1.NodeHealthyCondition, metav1.ConditionUnknown, "NodeHealthyUnknown", "* Node.Ready: Condition is Unknown")), false,
			"Unknown ReadyUnknown: * NodeHealthy:\n  * Node.Ready: Condition is Unknown", nil},
		{"missing", slices.Clip(ready[:2]), false, "Unknown ReadyUnknown: * NodeHealthy: Condition not yet reported", nil},
		{"health check failed", with(cond(clusterv1.HealthCheckSucceededCondition, metav1.ConditionFalse, "UnhealthyNode", "Node unhealthy for 5m")), false,
			"False NotReady: * HealthCheckSucceeded: Node unhealthy for 5m", nil},
		{"being deleted", with(cond(clusterv1.DeletingCondition, metav1.ConditionTrue, "DrainingNode", "")), true,
			"False NotReady: * Deleting: Machine deletion in progress, stage: DrainingNode", nil},
		{"being deleted, its provider objects and Node gone", with(cond(clusterv1.DeletingCondition, metav1.ConditionTrue, "WaitingForBootstrapDeletion", ""),
			cond(clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, clusterv1.ObjectDeletedReason, "SimMachine has been deleted"),
			cond(clusterv1.BootstrapConfigReadyCondition, metav1.ConditionFalse, clusterv1.ObjectDoesNotExistReason, "SimBootstrapConfig does not exist"),
			cond(clusterv1.NodeHealthyCondition, metav1.ConditionFalse, clusterv1.NodeDeletedReason, "Node n1 has been deleted")), true,
			"False NotReady: * Deleting: Machine deletion in progress, stage: WaitingForBootstrapDeletion", nil},
		{"being deleted, a health check failed and the infrastructure not ready", with(cond(clusterv1.DeletingCondition, metav1.ConditionTrue, "WaitingForInfrastructureDeletion", ""),
			cond(clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, "Deleting", "instance terminating"),
			cond(clusterv1.HealthCheckSucceededCondition, metav1.ConditionFalse, "UnhealthyNode", "Node unhealthy for 5m")), true,
			"False NotReady: * Deleting: Machine deletion in progress, stage: WaitingForInfrastructureDeletion\n* InfrastructureReady: instance terminating\n* HealthCheckSucceeded: Node unhealthy for 5m", nil},
		{"lost infrastructure before the deletion is an issue", with(cond(clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, clusterv1.ObjectDeletedReason, "SimMachine has been deleted while the Machine still exists")), false,
			"False NotReady: * InfrastructureReady: SimMachine has been deleted while the Machine still exists", nil},
		{"readiness gate not reported", ready, false, "Unknown ReadyUnknown: * example.com/Installed: Condition not yet reported", installed},
		{"readiness gate True", with(cond("example.com/Installed", metav1.ConditionTrue, "Installed", "")), false, "True Ready: ", installed},
		{"readiness gate False", with(cond("example.com/Installed", metav1.ConditionFalse, "Installing", "2 of 3 packages")), false,
			"False NotReady: * example.com/Installed: 2 of 3 packages", installed},
		{"negative readiness gate True", with(cond("example.com/Degraded", metav1.ConditionTrue, "DiskSlow", "disk latency 2s")), false,
			"False NotReady: * example.com/Degraded: disk latency 2s", degraded},
		{"negative readiness gate False", with(cond("example.com/Degraded", metav1.ConditionFalse, "Fine", "")), false, "True Ready: ", degraded},
		{"readiness gate naming a condition Ready reads anyway", slices.Clip(ready[:2]), false,
			"Unknown ReadyUnknown: * NodeHealthy: Condition not yet reported", []clusterv1.MachineReadinessGate{{ConditionType: clusterv1.NodeHealthyCondition}}},
	} {
		m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{ReadinessGates: tc.gates}, Status: clusterv1.MachineStatus{Conditions: tc.conds}}
		if tc.deleting {
			m.DeletionTimestamp = &now
		}
		summarizeReady(&Scope{Machine: m})
		c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.ReadyCondition)
		if got := string(c.Status) + " " + c.Reason + ": " + c.Message; got != tc.want {
			t.Errorf("%s: Ready %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSummarizeAvailable(t *testing.T) {
	for _, ready := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown} {
		m := &clusterv1.Machine{Status: clusterv1.MachineStatus{Conditions: []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: ready}}}}
		summarizeAvailable(&Scope{Machine: m})
		c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.AvailableCondition)
		want := "False NotReady"
		if ready == metav1.ConditionTrue {
			want = "True Available"
		}
		if got := string(c.Status) + " " + c.Reason; got != want {
			t.Errorf("Ready %s: Available %s, want %s", ready, got, want)
		}
	}
}

// With spec.minReadySeconds, Available waits for Ready to have been True that
// long (Cluster API setAvailableCondition), counting from the reconcile that
// turns Ready True when it does, and availabilityPending says a Machine
// must look again.
func TestMinReadySeconds(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ready := func(since time.Time) metav1.Condition {
		return metav1.Condition{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(since)}
	}
	for _, tc := range []struct {
		name        string
		minReady    int32
		conds       []metav1.Condition
		readySince  time.Time
		wantPending bool
		want        string
	}{
		{"Ready 10s of 30s", 30, []metav1.Condition{ready(now.Add(-10 * time.Second))}, time.Time{}, true, "False WaitingForMinReadySeconds"},
		{"Ready 30s of 30s", 30, []metav1.Condition{ready(now.Add(-30 * time.Second))}, time.Time{}, false, "True Available"},
		{"Ready an hour, minReadySeconds 0", 0, []metav1.Condition{ready(now.Add(-time.Hour))}, time.Time{}, false, "True Available"},
		{"Ready just now, minReadySeconds 0", 0, []metav1.Condition{ready(now)}, now, false, "True Available"},
		// summarizeReady turned Ready True in this reconcile: its stamp is
		// the reconcile's clock, whatever time the condition carries now.
		{"Ready turns True now", 30, []metav1.Condition{ready(now.Add(-time.Hour))}, now, false, "False WaitingForMinReadySeconds"},
		{"not Ready", 30, []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "NotReady"}}, time.Time{}, false, "False NotReady"},
		{"no Ready yet", 30, nil, time.Time{}, false, "False NotReady"},
	} {
		m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{MinReadySeconds: tc.minReady}, Status: clusterv1.MachineStatus{Conditions: tc.conds}}
		s := &Scope{Machine: m, Now: now}
		// The fact reads the stored status, before the summaries run.
		if got := availabilityPending(s); got != tc.wantPending {
			t.Errorf("%s: availabilityPending %v, want %v", tc.name, got, tc.wantPending)
		}
		s.readySince = tc.readySince
		summarizeAvailable(s)
		c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.AvailableCondition)
		if got := string(c.Status) + " " + c.Reason; got != tc.want {
			t.Errorf("%s: Available %s, want %s", tc.name, got, tc.want)
		}
	}
}

// summarizeReady records when Ready turned True: the stored time when it was
// True already, the reconcile's clock when it turns True now.
func TestSummarizeReadyRecordsSince(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	earlier := now.Add(-time.Minute)
	fine := []metav1.Condition{
		{Type: clusterv1.BootstrapConfigReadyCondition, Status: metav1.ConditionTrue, Reason: "DataSecretCreated"},
		{Type: clusterv1.InfrastructureReadyCondition, Status: metav1.ConditionTrue, Reason: "Provisioned"},
		{Type: clusterv1.NodeHealthyCondition, Status: metav1.ConditionTrue, Reason: "NodeHealthy"},
	}
	for _, tc := range []struct {
		name   string
		stored *metav1.Condition
		want   time.Time
	}{
		{"True already", &metav1.Condition{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(earlier)}, earlier},
		{"was not Ready", &metav1.Condition{Type: clusterv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "NotReady", LastTransitionTime: metav1.NewTime(earlier)}, now},
		{"never summarized", nil, now},
	} {
		conds := slices.Clone(fine)
		if tc.stored != nil {
			conds = append(conds, *tc.stored)
		}
		s := &Scope{Machine: &clusterv1.Machine{Status: clusterv1.MachineStatus{Conditions: conds}}, Now: now}
		summarizeReady(s)
		if !s.readySince.Equal(tc.want) {
			t.Errorf("%s: readySince %v, want %v", tc.name, s.readySince, tc.want)
		}
	}
}

// UpToDate is Cluster API's setUpToDateCondition: only for a Machine of a
// MachineDeployment's MachineSet, comparing the set's template with the
// deployment's, then rollout.after, then the kubelet's version.
func TestMirrorUpToDate(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	spec := clusterv1.MachineSpec{Version: "v1.37.0",
		InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachineTemplate", Name: "v1"}}
	set := func() *clusterv1.MachineSet {
		ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
		ms.Spec.Template.Spec = *spec.DeepCopy()
		return ms
	}
	deployment := func() *clusterv1.MachineDeployment {
		md := &clusterv1.MachineDeployment{}
		md.Spec.Template.Spec = *spec.DeepCopy()
		return md
	}
	for _, tc := range []struct {
		name   string
		ms     *clusterv1.MachineSet
		md     *clusterv1.MachineDeployment
		change func(*clusterv1.Machine, *clusterv1.MachineSet, *clusterv1.MachineDeployment)
		want   string
	}{
		{"a Machine of no deployment", set(), nil, nil, "none"},
		{"a Machine of no set", nil, nil, nil, "none"},
		{"same template", set(), deployment(), nil, "True UpToDate "},
		{"the deployment's infrastructure template changed", set(), deployment(), func(_ *clusterv1.Machine, _ *clusterv1.MachineSet, md *clusterv1.MachineDeployment) {
			md.Spec.Template.Spec.InfrastructureRef.Name = "v2"
			md.Spec.Template.Spec.Version = "v1.37.1"
		}, "False NotUpToDate * Version v1.37.0, v1.37.1 required\n* SimMachine is not up-to-date"},
		{"rollout.after expired", set(), deployment(), func(_ *clusterv1.Machine, _ *clusterv1.MachineSet, md *clusterv1.MachineDeployment) {
			md.Spec.Rollout.After = &metav1.Time{Time: now.Add(-time.Minute)}
		}, "False NotUpToDate * MachineDeployment spec.rolloutAfter expired"},
		{"rollout.after expired, the set named for it by a clock behind the operator's", set(), deployment(), func(_ *clusterv1.Machine, ms *clusterv1.MachineSet, md *clusterv1.MachineDeployment) {
			md.Spec.Rollout.After = &metav1.Time{Time: now.Add(-time.Minute)}
			ms.Labels = map[string]string{clusterv1.MachineTemplateHashLabel: uptodate.Hash(md, now)}
		}, "True UpToDate "},
		{"rollout.after still ahead", set(), deployment(), func(_ *clusterv1.Machine, _ *clusterv1.MachineSet, md *clusterv1.MachineDeployment) {
			md.Spec.Rollout.After = &metav1.Time{Time: now.Add(time.Minute)}
		}, "True UpToDate "},
		{"a set made after rollout.after", set(), deployment(), func(_ *clusterv1.Machine, ms *clusterv1.MachineSet, md *clusterv1.MachineDeployment) {
			md.Spec.Rollout.After = &metav1.Time{Time: now.Add(-2 * time.Hour)}
		}, "True UpToDate "},
		{"the kubelet runs another version", set(), deployment(), func(m *clusterv1.Machine, _ *clusterv1.MachineSet, _ *clusterv1.MachineDeployment) {
			m.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: "v1.36.4"}
		}, "False Updating * Node.status.nodeInfo.kubeletVersion v1.36.4, v1.37.0 required"},
		{"a Machine without a version", set(), deployment(), func(m *clusterv1.Machine, _ *clusterv1.MachineSet, _ *clusterv1.MachineDeployment) {
			m.Spec.Version = ""
			m.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: "v1.36.4"}
		}, "True UpToDate "},
	} {
		m := &clusterv1.Machine{Spec: *spec.DeepCopy()}
		if tc.change != nil {
			tc.change(m, tc.ms, tc.md)
		}
		mirrorUpToDate(&Scope{Machine: m, Set: tc.ms, Deployment: tc.md, Now: now})
		got := "none"
		if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.UpToDateCondition); c != nil {
			got = string(c.Status) + " " + c.Reason + " " + c.Message
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDeletingForSummary: Ready tells a deletion as Cluster API's
// calculateDeletingConditionForSummary: the step; past 15 minutes how long,
// and for a drain running over 5 minutes what likely holds it.
func TestDeletingForSummary(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	pdb := "Drain not completed yet (started at 2026-11-28T10:00:00Z):\n* Pod ns/db: cannot evict pod as it would violate the pod's disruption budget. The disruption budget db needs 1 healthy pods\n* Pod ns/web: deletionTimestamp set, but still not removed from the Node"
	for _, tc := range []struct {
		name              string
		after, sinceDrain time.Duration
		reason, msg       string
		want              string
	}{
		{"draining", time.Minute, time.Minute, "DrainingNode", pdb, "Machine deletion in progress, stage: DrainingNode"},
		{"draining for 20m", 20 * time.Minute, 20 * time.Minute, "DrainingNode", pdb,
			"Machine deletion in progress since more than 15m, stage: DrainingNode, delay likely due to PodDisruptionBudgets, Pods not terminating"},
		{"draining for 4m of 20m", 20 * time.Minute, 4 * time.Minute, "DrainingNode", pdb,
			"Machine deletion in progress since more than 15m, stage: DrainingNode"},
		{"a hook for 20m", 20 * time.Minute, 0, "WaitingForPreTerminateHook", "Waiting for pre-terminate hooks to succeed (hooks: x)",
			"Machine deletion in progress since more than 15m, stage: WaitingForPreTerminateHook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := start.Add(tc.after)
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: start}}}
			m.Status.State = "DrainingNode"
			m.Status.Conditions = []metav1.Condition{{Type: clusterv1.DeletingCondition, Status: metav1.ConditionTrue, Reason: tc.reason, Message: tc.msg}}
			if tc.sinceDrain > 0 {
				m.Status.Deletion.NodeDrainStartTime = &metav1.Time{Time: now.Add(-tc.sinceDrain)}
			}
			got := deletingForSummary(m, now)
			if got.Status != metav1.ConditionTrue || got.Reason != clusterv1.DeletingReason || got.Message != tc.want {
				t.Errorf("got %s %s %q, want True Deleting %q", got.Status, got.Reason, got.Message, tc.want)
			}
		})
	}
}
