package machineset

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/transitions"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type opt func(*clusterv1.Machine)

// ready gives the Machine a Node and a Ready condition True since then.
func ready(since time.Time) opt {
	return func(m *clusterv1.Machine) {
		m.Status.NodeRef = &clusterv1.MachineNodeReference{Name: m.Name}
		m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(since)})
	}
}

// available: the Machine controller found it Ready for its minReadySeconds.
func available(m *clusterv1.Machine) {
	m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue})
}
func failed(m *clusterv1.Machine) { m.Status.FailureReason = ptr.To("VMNotFound") }
func marked(m *clusterv1.Machine) {
	m.Annotations = map[string]string{clusterv1.DeleteMachineAnnotation: ""}
}
func deleting(m *clusterv1.Machine) { m.DeletionTimestamp = ptr.To(metav1.NewTime(t0)) }

func machine(name string, age int, opts ...opt) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Minute)), Labels: map[string]string{"pool": "a"}},
		Spec: clusterv1.MachineSpec{ClusterName: "c1"}}
	for _, o := range opts {
		o(m)
	}
	return m
}

func order(ms []*clusterv1.Machine) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return strings.Join(out, " ")
}

// TestRemediationOrder: as Cluster API's sortMachinesToRemediate, newest
// first whatever spec.deletion.order says, the remediate-machine annotation
// before all; the delete-machine annotation (a scale-down's) counts for
// nothing here.
func TestRemediationOrder(t *testing.T) {
	pick := func(m *clusterv1.Machine) {
		m.Annotations = map[string]string{clusterv1.RemediateMachineAnnotation: ""}
	}
	ms := []*clusterv1.Machine{
		machine("b-old", 1, ready(t0), failed), machine("a-new", 3, ready(t0), remediationRequested),
		machine("c-new", 3, ready(t0), failed), machine("scale", 2, ready(t0), failed, marked), machine("pick", 0, ready(t0), failed, pick),
	}
	if got := order(RemediationOrder(ms)); got != "pick a-new c-new scale b-old" {
		t.Errorf("RemediationOrder: %s, want pick a-new c-new scale b-old", got)
	}
}

func TestDeletionOrder(t *testing.T) {
	nodeHealth := func(st metav1.ConditionStatus) opt {
		return func(m *clusterv1.Machine) {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.NodeHealthyCondition, Status: st})
		}
	}
	checkFailed := func(m *clusterv1.Machine) {
		m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.HealthCheckSucceededCondition, Status: metav1.ConditionFalse})
	}
	ms := []*clusterv1.Machine{
		machine("old", 1, ready(t0)), machine("mid", 2, ready(t0)), machine("new", 3, ready(t0)),
		machine("nonode", 4), machine("failed", 0, ready(t0), failed), machine("marked", 5, ready(t0), marked),
		machine("gone", 6, ready(t0), deleting), machine("sick", 7, ready(t0), nodeHealth(metav1.ConditionFalse)),
		machine("checked", 8, ready(t0), checkFailed), machine("unknown", 9, ready(t0), nodeHealth(metav1.ConditionUnknown)),
	}
	// Being deleted, then marked, then failed or unhealthy (no Node yet,
	// NodeHealthy or HealthCheckSucceeded False; Unknown counts as healthy,
	// as in Cluster API's isMachineHealthy), each group by name; then the
	// healthy ones in the order asked, then by name.
	if got := order(DeletionOrder(ms, clusterv1.DeletionOrderNewest)); got != "gone marked checked failed nonode sick unknown new mid old" {
		t.Errorf("Newest: %s", got)
	}
	if got := order(DeletionOrder(ms, clusterv1.DeletionOrderOldest)); got != "gone marked checked failed nonode sick old mid new unknown" {
		t.Errorf("Oldest: %s", got)
	}
	// Random is Cluster API's randomDeletionOrder: one priority for every
	// healthy Machine, ties broken by name, whatever the input order.
	if got := order(DeletionOrder(ms, clusterv1.DeletionOrderRandom)); got != "gone marked checked failed nonode sick mid new old unknown" {
		t.Errorf("Random: %s", got)
	}
	reversed := slices.Clone(ms)
	slices.Reverse(reversed)
	if got := order(DeletionOrder(reversed, clusterv1.DeletionOrderRandom)); got != "gone marked checked failed nonode sick mid new old unknown" {
		t.Errorf("Random depends on the input order: %s", got)
	}
	if order(ms) != "old mid new nonode failed marked gone sick checked unknown" {
		t.Errorf("DeletionOrder changed its input: %s", order(ms))
	}
}

func TestSlowStart(t *testing.T) {
	var calls atomic.Int32
	done, err := SlowStart(10, func(int) error { calls.Add(1); return nil })
	if done != 10 || err != nil || calls.Load() != 10 {
		t.Fatalf("done %d err %v calls %d, want 10 nil 10", done, err, calls.Load())
	}
	// A failure in the third batch (calls 3..6) stops the run after it:
	// batches 1 and 2 succeeded, the third ran whole with one failure.
	calls.Store(0)
	done, err = SlowStart(100, func(i int) error {
		calls.Add(1)
		if i == 4 {
			return errors.New("quota exceeded")
		}
		return nil
	})
	if done != 6 || err == nil || !strings.Contains(err.Error(), "quota exceeded") || calls.Load() != 7 {
		t.Fatalf("done %d err %v calls %d, want 6, the error, 7 calls", done, err, calls.Load())
	}
	if done, err := SlowStart(0, func(int) error { t.Fatal("called"); return nil }); done != 0 || err != nil {
		t.Fatalf("nothing to do: %d %v", done, err)
	}
}

func set(replicas int32, maxUnhealthy string) *clusterv1.MachineSet {
	ms := &clusterv1.MachineSet{Spec: clusterv1.MachineSetSpec{ClusterName: "c1", Replicas: ptr.To(replicas),
		Selector: clusterv1.MachineSetSelector{MatchLabels: map[string]string{"pool": "a"}}}}
	ms.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": "a", "tier": "web"}
	if maxUnhealthy != "" {
		ms.Spec.Remediation.MaxUnhealthy = ptr.To(intstr.Parse(maxUnhealthy))
	}
	return ms
}

// facts computes every fact through the registry against the shipped
// tables, as the controller does.
func facts(t *testing.T, s *Scope) map[string]string {
	t.Helper()
	lib, findings := engine.LoadFS(transitions.FS(), ".")
	if findings.HasErrors() {
		t.Fatalf("load tables: %v", findings.Errors())
	}
	r, err := engine.NewRunner(lib.TableSet(RegistryName), Registry())
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Observe(s)
	if err != nil {
		t.Fatal(err)
	}
	return f.Map()
}

func TestCountsAndFacts(t *testing.T) {
	now := t0.Add(time.Hour)
	owned := []*clusterv1.Machine{
		machine("a", 1, ready(now.Add(-time.Hour)), available),
		machine("b", 2, ready(now.Add(-time.Second))), // Ready, not yet available
		machine("c", 3), // provisioning
		machine("d", 4, failed),
		machine("e", 5, failed, deleting), // a replacement in flight
		machine("f", 6, deleting),
	}
	owned[0].Labels["tier"] = "web"
	// Every Machine counts against spec.replicas, those being deleted and
	// the failed one included (Cluster API syncReplicas).
	ms := set(6, "")
	s := &Scope{Found: true, Set: ms, Owned: owned, Counts: count(owned, ms), Cluster: &clusterv1.Cluster{}}
	want := Counts{Total: 6, Live: 4, Active: 3, Failed: 1, Replace: 1, Deleting: 2, InFlight: 1, Ready: 2, Available: 1, FullyLabeled: 1}
	if s.Counts != want {
		t.Fatalf("counts %+v, want %+v", s.Counts, want)
	}
	f := facts(t, s)
	for k, v := range map[string]string{"replicasDiff": "Equal", "failedMachines": "Throttled", "machinesOutOfSync": "false",
		"machinesLeft": "true", "cluster": "Found", "templates": "Found"} {
		if f[k] != v {
			t.Errorf("%s = %s, want %s", k, f[k], v)
		}
	}
	// Replicas 3: the four working Machines are not what is compared, all
	// six are; Replicas 4 would be Equal if only live Machines counted.
	for _, replicas := range []int32{3, 4, 5} {
		s.Set = set(replicas, "")
		if f := facts(t, s); f["replicasDiff"] != "Surplus" {
			t.Errorf("replicas %d, 6 Machines (2 being deleted): replicasDiff %s, want Surplus", replicas, f["replicasDiff"])
		}
	}

	// maxUnhealthy 0: one failed Machine is over the limit.
	s.Set = set(2, "0")
	if f := facts(t, s); f["failedMachines"] != "OverLimit" || f["replicasDiff"] != "Surplus" {
		t.Errorf("maxUnhealthy 0, replicas 2: failedMachines %s replicasDiff %s", f["failedMachines"], f["replicasDiff"])
	}
	// maxInFlight 2: the in-flight replacement leaves room for one more.
	s.Set = set(8, "50%")
	s.Set.Spec.Remediation.MaxInFlight = ptr.To(intstr.FromInt32(2))
	if f := facts(t, s); f["failedMachines"] != "Replaceable" || f["replicasDiff"] != "Missing" {
		t.Errorf("maxInFlight 2, replicas 8: failedMachines %s replicasDiff %s", f["failedMachines"], f["replicasDiff"])
	}
	// A Machine deleted by hand and held (a hook) counts until it is gone:
	// no replacement is missing yet.
	held := []*clusterv1.Machine{machine("a", 1, ready(t0)), machine("b", 2, ready(t0), deleting)}
	s = &Scope{Found: true, Set: set(2, ""), Owned: held}
	s.Counts = count(held, s.Set)
	if f := facts(t, s); f["replicasDiff"] != "Equal" || s.Counts.Total != 2 {
		t.Errorf("2 wanted, 1 live and 1 held in deletion: replicasDiff %s, total %d", f["replicasDiff"], s.Counts.Total)
	}
}

func TestMatches(t *testing.T) {
	ms := set(1, "")
	m := machine("m", 0)
	if !Matches(ms, m) {
		t.Error("a Machine with the selector's labels and the set's Cluster matches")
	}
	m.Spec.ClusterName = "c2"
	if Matches(ms, m) {
		t.Error("a Machine of another Cluster does not match")
	}
	m = machine("m", 0)
	m.Labels["pool"] = "b"
	if Matches(ms, m) {
		t.Error("a Machine with another label value does not match")
	}
}

// A deployment's set counts its Machines' UpToDate condition (those being
// deleted too), as Cluster API's; a stand-alone set, whose Machines have
// none, counts its live Machines in sync with its template.
func TestUpToDateCount(t *testing.T) {
	cond := func(status metav1.ConditionStatus) opt {
		return func(m *clusterv1.Machine) {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.UpToDateCondition, Status: status})
		}
	}
	owned := []*clusterv1.Machine{machine("a", 1, cond(metav1.ConditionTrue)), machine("b", 2, cond(metav1.ConditionFalse)),
		machine("c", 3, cond(metav1.ConditionTrue), deleting), machine("d", 4)}
	ms := set(4, "")
	if got := upToDate(ms, owned, owned[3:]); got != 2 {
		t.Errorf("stand-alone set, d out of sync: %d up to date, want 2 (a and b; c is being deleted)", got)
	}
	ms.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: "md", UID: "md-uid", Controller: ptr.To(true)}}
	if got := upToDate(ms, owned, owned[3:]); got != 2 {
		t.Errorf("a deployment's set: %d up to date, want 2 (a, and c being deleted)", got)
	}
	if got := upToDate(ms, owned[1:2], nil); got != 0 {
		t.Errorf("a deployment's old set: %d up to date, want 0", got)
	}
}

// remediationRequested marks a Machine as a MachineHealthCheck does.
func remediationRequested(m *clusterv1.Machine) {
	m.Status.Conditions = append(m.Status.Conditions,
		metav1.Condition{Type: clusterv1.HealthCheckSucceededCondition, Status: metav1.ConditionFalse, Reason: "UnhealthyNode"},
		metav1.Condition{Type: clusterv1.OwnerRemediatedCondition, Status: metav1.ConditionFalse, Reason: "WaitingForRemediation"})
}

// toldDeleting: the set told the health checker it deletes the Machine
// (OwnerRemediated reason MachineDeleting).
func toldDeleting(m *clusterv1.Machine) {
	for i := range m.Status.Conditions {
		if m.Status.Conditions[i].Type == clusterv1.OwnerRemediatedCondition {
			m.Status.Conditions[i].Reason = clusterv1.RemediationMachineDeletingReason
		}
	}
}

// TestMachinesMarkedForRemediationAreReplaced: a Machine a health checker
// marked counts as one to replace (not as failed), in flight once it is
// being deleted as the set said it would (MachineDeleting; one deleted by
// someone else is not); an unhealthy one nobody asked to remediate does not.
func TestMachinesMarkedForRemediationAreReplaced(t *testing.T) {
	unhealthyOnly := func(m *clusterv1.Machine) {
		m.Status.Conditions = append(m.Status.Conditions,
			metav1.Condition{Type: clusterv1.HealthCheckSucceededCondition, Status: metav1.ConditionFalse, Reason: "UnhealthyNode"})
	}
	owned := []*clusterv1.Machine{
		machine("a", 1, remediationRequested),
		machine("b", 2, unhealthyOnly),
		machine("c", 3, remediationRequested, toldDeleting, deleting),
		machine("d", 4, failed),
		machine("e", 5, remediationRequested, deleting),
	}
	ms := set(5, "")
	s := &Scope{Found: true, Set: ms, Owned: owned, Counts: count(owned, ms), Cluster: &clusterv1.Cluster{}}
	want := Counts{Total: 5, Live: 3, Active: 1, Failed: 1, Replace: 2, Marked: 1, Deleting: 2, InFlight: 1}
	if s.Counts != want {
		t.Fatalf("counts %+v, want %+v", s.Counts, want)
	}
	if got := names(s.liveMachines(true)); got != "a, d" {
		t.Errorf("Machines to replace: %s, want a, d", got)
	}
	if got, want := replaceCount(s.Counts), "1 of 3 failed, 1 marked for remediation by a health check"; got != want {
		t.Errorf("replaceCount = %q, want %q", got, want)
	}
	s.Set.Spec.Remediation.MaxInFlight = ptr.To(intstr.FromInt32(2))
	if f := facts(t, s); f["failedMachines"] != "Replaceable" {
		t.Errorf("failedMachines = %s, want Replaceable", f["failedMachines"])
	}
}

// TestMaxInFlightTakesAPercentage: a percentage of spec.replicas, rounded
// up as Cluster API does, and never below one.
func TestMaxInFlightTakesAPercentage(t *testing.T) {
	for _, tc := range []struct {
		replicas int32
		value    *intstr.IntOrString
		want     int
	}{
		{5, nil, 1},
		{5, ptr.To(intstr.FromInt32(3)), 3},
		{5, ptr.To(intstr.FromString("40%")), 2},
		{5, ptr.To(intstr.FromString("30%")), 2},
		{10, ptr.To(intstr.FromString("1%")), 1},
		{0, ptr.To(intstr.FromString("50%")), 1},
	} {
		s := &Scope{Set: set(tc.replicas, "")}
		s.Set.Spec.Remediation.MaxInFlight = tc.value
		if got := s.MaxInFlight(); got != tc.want {
			t.Errorf("replicas %d, maxInFlight %v: got %d, want %d", tc.replicas, tc.value, got, tc.want)
		}
	}
}

// TestRecoveredMachinesLoseTheirMark: only a live Machine whose health check
// passes again while it is still marked is cleaned.
func TestRecoveredMachinesLoseTheirMark(t *testing.T) {
	healthyAgain := func(m *clusterv1.Machine) {
		m.Status.Conditions = append(m.Status.Conditions,
			metav1.Condition{Type: clusterv1.HealthCheckSucceededCondition, Status: metav1.ConditionTrue, Reason: "Healthy"},
			metav1.Condition{Type: clusterv1.OwnerRemediatedCondition, Status: metav1.ConditionFalse, Reason: "WaitingForRemediation"})
	}
	owned := []*clusterv1.Machine{
		machine("a", 1, healthyAgain),
		machine("b", 2, remediationRequested),
		machine("c", 3, healthyAgain, deleting),
		machine("d", 4),
	}
	if got := names(recovered(owned)); got != "a" {
		t.Errorf("recovered = %s, want a", got)
	}
}

// TestStaleRevision: a set is an old revision of its deployment once the
// deployment names another revision, or as soon as the deployment's
// template no longer matches the set's, before it names the new one.
func TestStaleRevision(t *testing.T) {
	template := clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{Version: "v1.36.0",
		InfrastructureRef: clusterv1.ObjectReference{Kind: "SimMachineTemplate", Name: "v1"}}}
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.RevisionAnnotation: "1"}},
		Spec: clusterv1.MachineSetSpec{Template: template}}
	md := func(revision, infra string) *clusterv1.MachineDeployment {
		d := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
		if revision != "" {
			d.Annotations[clusterv1.RevisionAnnotation] = revision
		}
		d.Spec.Template = *template.DeepCopy()
		d.Spec.Template.Spec.InfrastructureRef.Name = infra
		return d
	}
	for _, tc := range []struct {
		name string
		md   *clusterv1.MachineDeployment
		want bool
	}{
		{"its own revision and template", md("1", "v1"), false},
		{"no revision named yet, same template", md("", "v1"), false},
		{"another revision named", md("2", "v1"), true},
		{"the template changed, the new revision not named yet", md("1", "v2"), true},
	} {
		if got := staleRevision(ms, tc.md); got != tc.want {
			t.Errorf("%s: staleRevision = %v, want %v", tc.name, got, tc.want)
		}
	}
}
