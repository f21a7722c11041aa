package timeline

import (
	"github.com/krtt-dev/krtt/actions"
	machineactions "github.com/krtt-dev/krtt/actions/machine"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

const ns = "t"

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// builder writes a hand-made timeline, one revision per event.
type builder struct {
	tl *Timeline
	rv uint64
	// sub counts the evictions placed after the write rv, one after the
	// other.
	sub int
}

func (b *builder) ev(kind Kind, op Op, o client.Object) {
	b.rv++
	b.sub = 0
	o = o.DeepCopyObject().(client.Object)
	o.SetResourceVersion(strconv.FormatUint(b.rv, 10))
	at := t0.Add(time.Duration(b.rv) * time.Millisecond)
	b.tl.Events = append(b.tl.Events, Event{Seq: int(b.rv), At: at, RV: b.rv, Kind: kind, Op: op, Obj: o, Code: 200,
		Recv: at.Add(-200 * time.Microsecond), Stage: at})
}

// eviction is a request to the Eviction API as the audit log shows it: no
// revision of its own, placed after the last write; overlap stretches its
// answer past the next write's start.
func (b *builder) eviction(p *corev1.Pod, code int, overlap bool) {
	at := t0.Add(time.Duration(b.rv)*time.Millisecond + time.Duration(300+100*b.sub)*time.Microsecond)
	b.sub++
	stage := at.Add(50 * time.Microsecond)
	if overlap {
		stage = at.Add(5 * time.Millisecond)
	}
	b.tl.Events = append(b.tl.Events, Event{Seq: int(b.rv), At: stage, RV: b.rv, Kind: Eviction, Op: Added, Code: code, Bracketed: true,
		Obj: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}, Recv: at, Stage: stage})
}

// knobs break the good run in one place each.
type knobs struct {
	webNotEvicted      bool   // web is still on the Node when the infrastructure goes
	drainRow           string // row that leaves the drain state (default the drain row D05)
	plainDelete        bool   // web is deleted with a plain DELETE
	forceRow           bool   // the Machine's row at that moment is a force-deletion row
	cordonDuringHook   bool   // the Node is cordoned before the pre-drain hook goes
	evictDuringHook    bool   // db-1 is evicted before the pre-drain hook goes
	preTermHookStays   bool   // the pre-terminate hook is never removed
	otherDBNotReady    bool   // db-2 is not Ready when db-1 is evicted
	finalizerEarly     bool   // the finalizer goes before the bootstrap object
	stateBack          bool   // the state goes from WaitingForVolumeDetach back to DrainingNode
	nodeLeft           bool   // the Node is never deleted
	machineLeft        bool   // the finalizer is never removed
	vaLeft             bool   // a VolumeAttachment on the Node stays
	approxInfraDeleted bool   // the infrastructure deletion is seen only as a tombstone
	lastEventRow       string // the kit's Event for the Machine's last step names this table/row
	bootstrapAfterNode bool   // the Node is deleted before the bootstrap object
	vaLate             bool   // the VolumeAttachment goes only after the infrastructure deletion
	volumeRow          string // row that leaves the volume wait (default the wait row D08)
	audit              bool   // evictions are Eviction API requests of an audit log
	refusedFirst       bool   // (audit) a budget refuses db-1's first eviction (429)
	evictOverlapsHook  bool   // (audit) db-1's eviction runs at the same time as the pre-drain hook's removal
	cutShort           bool   // (audit) db-1's eviction is answered 500 (cut short), though it evicted the Pod
	removalRace        bool   // db-1's graceless DELETE loses the race to a second eviction, which removes the Pod
	nodeDeleteCutShort bool   // (audit) the Node's DELETE is answered 504 (its client killed mid-request), though it removed the Node
	nodeDeletion       string // the Machine's Node deletion before its finalizer goes: "timedOut" (attempted, 10s timeout, 20s since the deletionTimestamp), "notYet" (attempted, 3600s timeout), "unarmed" (never attempted, 10s timeout)
}

func run(k knobs) *Timeline {
	b := &builder{tl: &Timeline{Start: t0}}
	min1 := intstr.FromInt32(1)
	b.ev(PDB, Added, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min1, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}})
	boot := &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "boot-uid"}}
	b.ev(SimBootstrapConfig, Added, boot)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1-bootstrap", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: simv1.GroupVersion.String(), Kind: "SimBootstrapConfig", Name: "m1", UID: "boot-uid", Controller: ptrTrue()}}}}
	b.ev(Secret, Added, secret)
	infra := &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", Finalizers: []string{"sim.krtt.dev/cloud"}}}
	b.ev(SimMachine, Added, infra)
	n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	b.ev(Node, Added, n1)
	b.ev(Node, Added, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "spare"}})
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va1"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	b.ev(VolumeAttachment, Added, va)

	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", Finalizers: []string{clusterv1.MachineFinalizer},
		Annotations: map[string]string{
			clusterv1.PreDrainDeleteHookAnnotationPrefix + "h1":     "",
			clusterv1.PreTerminateDeleteHookAnnotationPrefix + "h2": "",
		}},
		Spec: clusterv1.MachineSpec{ClusterName: "c", InfrastructureRef: clusterv1.ObjectReference{Kind: "SimMachine", Name: "m1"},
			Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{Kind: "SimBootstrapConfig", Name: "m1"}}},
		Status: clusterv1.MachineStatus{State: "Running", NodeRef: &clusterv1.MachineNodeReference{Name: "n1"}}}
	b.ev(Machine, Added, m)
	pod := func(name, node string, ready bool, lbl ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		for i := 0; i+1 < len(lbl); i += 2 {
			p.Labels[lbl[i]] = lbl[i+1]
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
		return p
	}
	web := pod("web", "n1", true)
	db1 := pod("db-1", "n1", true, "app", "db")
	db2 := pod("db-2", "spare", !k.otherDBNotReady, "app", "db")
	skip := pod("skipped", "n1", true, clusterv1.PodDrainLabel, clusterv1.PodDrainLabelValueSkip)
	for _, p := range []*corev1.Pod{web, db1, db2, skip} {
		b.ev(Pod, Added, p)
	}
	row := func(table, id, from, to, outcome string) {
		m = m.DeepCopy()
		m.Status.State = to
		m.Status.LastTransition = &kit.LastTransition{Table: table, Row: id, From: from, To: to, Outcome: outcome}
		b.ev(Machine, Updated, m)
	}
	dropHook := func(prefix string) {
		m = m.DeepCopy()
		for a := range m.Annotations {
			if strings.HasPrefix(a, prefix) {
				delete(m.Annotations, a)
			}
		}
		b.ev(Machine, Updated, m)
	}
	now := metav1.NewTime(t0)
	evict := func(p *corev1.Pod) {
		if k.audit && !(k.plainDelete && p.Name == "web") {
			if k.refusedFirst && p.Name == "db-1" {
				b.eviction(p, 429, false)
			}
			code := 201
			if k.cutShort && p.Name == "db-1" {
				code = 500
			}
			b.eviction(p, code, k.evictOverlapsHook)
			b.rv += 2 // the Eviction API's own writes of the Pod: not requests, not audited
			// The kubelet's final DELETE shows what the eviction wrote.
			p = p.DeepCopy()
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
			p.DeletionTimestamp = &now
			if k.removalRace && p.Name == "db-1" {
				// The kubelet's graceless DELETE writes a zero grace
				// period (inside the request: not audited), a second
				// eviction of the terminating Pod removes it (a Status
				// answer), and the DELETE, finding it gone, is answered
				// with the Pod as it was before its own write: placed
				// after the writes answered before it began, below the
				// zero-grace version the informers saw.
				before := b.rv
				b.eviction(p, 201, false)
				b.rv += 2
				p = p.DeepCopy()
				p.SetResourceVersion(strconv.FormatUint(before, 10))
				p.DeletionGracePeriodSeconds = new(int64)
				at := t0.Add(time.Duration(b.rv) * time.Millisecond)
				b.tl.Events = append(b.tl.Events, Event{Seq: int(b.rv), At: at, RV: before, Kind: Pod, Op: Deleted, Obj: p, Code: 200, Bracketed: true,
					Recv: t0.Add(time.Duration(before)*time.Millisecond + 200*time.Microsecond), Stage: at})
				return
			}
			b.ev(Pod, Deleted, p)
			return
		}
		// As the informers see it: the Eviction API writes its condition,
		// then the deletion; a plain DELETE only the latter.
		p = p.DeepCopy()
		if !k.plainDelete || p.Name != "web" {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
			b.ev(Pod, Updated, p)
		} else {
			b.rv++
		}
		p = p.DeepCopy()
		p.DeletionTimestamp = &now
		b.ev(Pod, Updated, p)
		if k.removalRace && p.Name == "db-1" {
			p = p.DeepCopy()
			p.DeletionGracePeriodSeconds = new(int64)
			b.ev(Pod, Updated, p) // the kubelet's DELETE: its zero grace period
		}
		b.ev(Pod, Deleted, p)
	}
	cordon := func() {
		n := n1.DeepCopy()
		n.Spec.Unschedulable = true
		b.ev(Node, Updated, n)
	}

	m = m.DeepCopy()
	m.DeletionTimestamp = &now
	if k.nodeDeletion != "" {
		m.DeletionTimestamp = &metav1.Time{Time: t0.Add(-20 * time.Second)}
	}
	b.ev(Machine, Updated, m)
	row("machine-normal", "N05", "Running", "Deleting", "done")
	row("machine-deletion", "D01", "Deleting", "WaitingForPreDrainHook", "done")
	if k.cordonDuringHook {
		cordon()
	}
	if k.evictDuringHook {
		evict(db1)
	}
	dropHook(clusterv1.PreDrainDeleteHookAnnotationPrefix)
	row("machine-deletion", "D04", "WaitingForPreDrainHook", "DrainingNode", "done")
	if !k.cordonDuringHook {
		cordon()
	}
	if k.forceRow {
		row("machine-deletion", "D05", "DrainingNode", "DrainingNode", "InProgress")
	}
	if !k.webNotEvicted {
		evict(web)
	}
	if !k.evictDuringHook {
		evict(db1)
	}
	switch k.drainRow {
	case "":
		row("machine-deletion", "D05", "DrainingNode", "WaitingForVolumeDetach", "done")
	default:
		row("machine-deletion", k.drainRow, "DrainingNode", "WaitingForVolumeDetach", "done")
	}
	if k.stateBack {
		row("machine-deletion", "D05", "DrainingNode", "DrainingNode", "InProgress")
	}
	if !k.vaLeft && !k.vaLate {
		b.ev(VolumeAttachment, Deleted, va)
	}
	if k.volumeRow == "" {
		k.volumeRow = "D08"
	}
	row("machine-deletion", k.volumeRow, "WaitingForVolumeDetach", "WaitingForPreTerminateHook", "done")
	if !k.preTermHookStays {
		dropHook(clusterv1.PreTerminateDeleteHookAnnotationPrefix)
	}
	row("machine-deletion", "D12", "WaitingForPreTerminateHook", "WaitingForInfrastructureDeletion", "done")
	infra = infra.DeepCopy()
	infra.DeletionTimestamp = &now
	if k.approxInfraDeleted {
		// Only the tombstone after a re-list, placed late.
		b.rv += 5
	} else {
		b.ev(SimMachine, Updated, infra)
		b.ev(SimMachine, Deleted, infra)
	}
	if k.vaLate {
		b.ev(VolumeAttachment, Deleted, va)
	}
	row("machine-deletion", "D14", "WaitingForInfrastructureDeletion", "WaitingForBootstrapDeletion", "done")
	if !k.finalizerEarly && !k.bootstrapAfterNode {
		b.ev(SimBootstrapConfig, Deleted, boot)
	}
	row("machine-deletion", "D16", "WaitingForBootstrapDeletion", "DeletingNode", "done")
	if k.nodeDeletion != "" {
		// D18's Node deletion failed: its status records the attempt.
		m = m.DeepCopy()
		m.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](10)
		if k.nodeDeletion == "notYet" {
			m.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](3600)
		}
		if k.nodeDeletion != "unarmed" {
			m.Status.Deletion.NodeDeletionStartTime = &metav1.Time{Time: t0.Add(-5 * time.Second)}
		}
		m.Status.LastTransition = &kit.LastTransition{Table: "machine-deletion", Row: "D18", From: "DeletingNode", To: "DeletingNode", Outcome: "Failed"}
		b.ev(Machine, Updated, m)
	}
	switch {
	case k.nodeLeft:
	case k.nodeDeleteCutShort && k.audit:
		b.rv++
		at := t0.Add(time.Duration(b.rv) * time.Millisecond)
		b.tl.Events = append(b.tl.Events, Event{Seq: int(b.rv), At: at, RV: b.rv - 1, Kind: Node, Op: Uncertain, Code: 504, Bracketed: true,
			Obj: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n1.Name}}, Recv: at.Add(-200 * time.Microsecond), Stage: at})
	default:
		b.ev(Node, Deleted, n1)
	}
	if k.bootstrapAfterNode {
		b.ev(SimBootstrapConfig, Deleted, boot)
	}
	if !k.machineLeft {
		m = m.DeepCopy()
		m.Finalizers = nil
		m.Status.State = "DeletionCompleted"
		b.ev(Machine, Deleted, m)
	}
	if k.finalizerEarly {
		b.ev(SimBootstrapConfig, Deleted, boot)
	}
	if k.lastEventRow != "" {
		// The last step's status is never written (the Machine goes with
		// it); the kit's Event names its row.
		_, id, _ := strings.Cut(k.lastEventRow, "/")
		b.ev(MachineEvent, Added, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1.1"}, Action: id,
			Regarding: corev1.ObjectReference{Kind: "Machine", Namespace: ns, Name: "m1"}, Reason: "DeletionCompleted",
			Note: "DeletingNode → DeletingNode (row " + id + "): Node deletion timed out; the finalizer was removed anyway"})
	}
	if k.approxInfraDeleted {
		b.tl.Events = append(b.tl.Events, Event{Seq: int(b.rv) + 1, At: t0, RV: b.rv, Approx: true, Kind: SimMachine, Op: Deleted, Obj: infra})
	}
	b.tl.FromAudit = k.audit
	b.tl.Sort()
	return b.tl
}

func ptrTrue() *bool { t := true; return &t }

func rules(t *testing.T) Rules {
	t.Helper()
	set, err := actions.Load(machineactions.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	return RulesFrom(set)
}

func TestRulesFromTables(t *testing.T) {
	r := rules(t)
	if len(r.States) < 2 || len(r.DrainRows) == 0 || len(r.DrainStates) == 0 {
		t.Fatalf("rules %+v", r)
	}
	// The drain comes after the first state and before the last.
	if d := r.lastRank(r.DrainStates); d <= 0 || d >= len(r.States)-1 {
		t.Errorf("drain rank %d of %v", d, r.States)
	}
}

func TestCheckGoodRun(t *testing.T) {
	rep := Check(run(knobs{}), rules(t), true)
	if rep.Failed() {
		t.Fatalf("violations on a good run:\n%v", rep.Violations)
	}
	if rep.Evictions != 2 || rep.InfraDeletions != 1 || rep.FinalizerRemovals != 1 || rep.Cordons != 1 || rep.MachinesDeleted != 1 ||
		rep.HookHolds != 2 || rep.VolumeWaits != 1 || rep.Refusals != 0 {
		t.Errorf("counts %+v", rep)
	}
	// The same run as an audit log shows it, with a refused eviction.
	rep = Check(run(knobs{audit: true, refusedFirst: true}), rules(t), true)
	if rep.Failed() {
		t.Fatalf("violations on a good run from an audit log:\n%v\nnotes %v", rep.Violations, rep.Notes)
	}
	if rep.Evictions != 2 || rep.Refusals != 1 || rep.HookHolds != 2 || rep.VolumeWaits != 1 {
		t.Errorf("counts %+v", rep)
	}
	if strings.Join(rep.AwaitingGC, ",") != "Pod t/skipped,Secret t/m1-bootstrap" {
		t.Errorf("awaiting GC %v", rep.AwaitingGC)
	}
}

// Each invariant catches its violation, names it, and shows the event
// that broke it at the end of its excerpt.
func TestCheckCatchesEachViolation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		k         knobs
		invariant string
		object    string
		msg       string
		also      string // an invariant the same break breaks too
	}{
		{"pods left at infrastructure deletion", knobs{webNotEvicted: true}, InfraAfterDrain, "SimMachine t/m1", "Pods [t/web] still on Node n1 although drain row machine-deletion/D05 reported done", NothingLeaks},
		{"pods left and no drain row recorded", knobs{webNotEvicted: true, drainRow: "-", stateBack: false}, InfraAfterDrain, "SimMachine t/m1", "Pods [t/web]", NothingLeaks},
		{"finalizer before bootstrap", knobs{finalizerEarly: true}, FinalizerLast, "Machine t/m1", "SimBootstrapConfig t/m1 still exists", NodeAfterInfra},
		{"Node before bootstrap", knobs{bootstrapAfterNode: true}, NodeAfterInfra, "Node n1", "deleted while SimBootstrapConfig t/m1 of Machine t/m1 still exists", ""},
		{"volumes attached at infrastructure deletion", knobs{vaLate: true}, InfraAfterVolumes, "SimMachine t/m1", "VolumeAttachments [va1] still on Node n1: volume wait row machine-deletion/D08 reported done", ""},
		{"eviction request during pre-drain hook", knobs{audit: true, evictDuringHook: true}, NoDrainDuringPreDrain, "Eviction t/db-1", "pre-drain hooks [h1]", ""},
		{"eviction request beyond the budget", knobs{audit: true, otherDBNotReady: true}, PDBRespected, "Pod t/db-1", "leaving 0 healthy Pods of PDB t/db, which needs 1", ""},
		{"plain DELETE in an audit log", knobs{audit: true, plainDelete: true}, EvictionOnly, "Pod t/web", "deleted without the Eviction API", ""},
		{"eviction cut short beyond the budget", knobs{audit: true, cutShort: true, otherDBNotReady: true}, PDBRespected, "Pod t/db-1", "leaving 0 healthy Pods of PDB t/db, which needs 1", ""},
		{"refused eviction attempt during pre-drain hook", knobs{audit: true, evictDuringHook: true, refusedFirst: true}, NoDrainDuringPreDrain, "Eviction t/db-1", "eviction (answer 429)", NoDrainDuringPreDrain},
		{"cordon during pre-drain hook", knobs{cordonDuringHook: true}, NoDrainDuringPreDrain, "Node n1", "pre-drain hooks [h1]", ""},
		{"eviction during pre-drain hook", knobs{evictDuringHook: true}, NoDrainDuringPreDrain, "Pod t/db-1", "pre-drain hooks [h1]", ""},
		{"infrastructure during pre-terminate hook", knobs{preTermHookStays: true}, NoInfraDuringPreTerm, "SimMachine t/m1", "pre-terminate hooks [h2]", ""},
		{"eviction beyond the budget", knobs{otherDBNotReady: true}, PDBRespected, "Pod t/db-1", "leaving 0 healthy Pods of PDB t/db, which needs 1", ""},
		{"plain DELETE", knobs{plainDelete: true}, EvictionOnly, "Pod t/web", "deleted without the Eviction API", ""},
		{"state backwards", knobs{stateBack: true}, StateForwardOnly, "Machine t/m1", "from WaitingForVolumeDetach to DrainingNode", ""},
		{"Node left", knobs{nodeLeft: true}, NothingLeaks, "end of run", "Node n1", ""},
		{"Machine left", knobs{machineLeft: true}, NothingLeaks, "end of run", "Machine t/m1", ""},
		{"VolumeAttachment left", knobs{vaLeft: true}, NothingLeaks, "end of run", "VolumeAttachment va1", InfraAfterVolumes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rules(t)
			if tc.k.drainRow == "-" {
				// No row ever leaves the drain state: history has a gap.
				tc.k.drainRow = "D05"
				tl := run(tc.k)
				var kept []Event
				for _, e := range tl.Events {
					if m, ok := e.Obj.(*clusterv1.Machine); ok && m.Status.LastTransition != nil && m.Status.LastTransition.From == "DrainingNode" {
						continue
					}
					kept = append(kept, e)
				}
				tl.Events = kept
				assertOne(t, Check(tl, r, true), tc.invariant, tc.object, tc.msg, tc.also)
				return
			}
			assertOne(t, Check(run(tc.k), r, true), tc.invariant, tc.object, tc.msg, tc.also)
		})
	}
}

// assertOne wants exactly one violation of invariant (and, when also is
// set, one of also besides).
func assertOne(t *testing.T, rep *Report, invariant, object, msg string, also ...string) {
	t.Helper()
	vs := rep.Violations
	if len(also) > 0 && also[0] != "" {
		var rest []Violation
		n := 0
		for _, v := range vs {
			if v.Invariant == also[0] && n == 0 && !(also[0] == invariant && strings.Contains(v.Message, msg)) {
				n++
				continue
			}
			rest = append(rest, v)
		}
		if n == 0 {
			t.Errorf("want a violation of %q too, got %v", also[0], vs)
		}
		vs = rest
	}
	if len(vs) != 1 {
		t.Fatalf("want exactly one violation of %q, got %d:\n%v", invariant, len(vs), vs)
	}
	v := vs[0]
	if v.Invariant != invariant || v.Object != object || !strings.Contains(v.Message, msg) {
		t.Fatalf("got %s | %s | %s\nwant %s | %s | …%s…", v.Invariant, v.Object, v.Message, invariant, object, msg)
	}
	if invariant != NothingLeaks {
		if len(v.Excerpt) == 0 || !strings.HasSuffix(v.Excerpt[len(v.Excerpt)-1], "<== "+invariant) {
			t.Errorf("excerpt does not end at the violating event:\n%s", strings.Join(v.Excerpt, "\n"))
		}
	}
}

// A drain skipped by a row is allowed, and the note names the row.
func TestCheckNamesTheRowThatSkippedTheDrain(t *testing.T) {
	rep := Check(run(knobs{webNotEvicted: true, drainRow: "D06"}), rules(t), true)
	if rep.Failed() {
		t.Fatalf("violations:\n%v", rep.Violations)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "the drain was skipped by row machine-deletion/D06 (DrainingNode→WaitingForVolumeDetach)") {
		t.Errorf("notes %v", rep.Notes)
	}
}

// A Pod deleted while the Machine's row is a force-deletion row is allowed.
func TestCheckAllowsForceDeletionRows(t *testing.T) {
	r := rules(t)
	r.ForceDeleteRows = map[string]bool{"machine-deletion/D05": true}
	rep := Check(run(knobs{plainDelete: true, forceRow: true}), r, true)
	if rep.Failed() {
		t.Fatalf("violations:\n%v", rep.Violations)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "deleted without the Eviction API by force-deletion row machine-deletion/D05") {
		t.Errorf("notes %v", rep.Notes)
	}
	// Without the row it is a violation.
	r.ForceDeleteRows = nil
	assertOne(t, Check(run(knobs{plainDelete: true, forceRow: true}), r, true), EvictionOnly, "Pod t/web", "row \"machine-deletion/D05\"")
}

// An ordering lost to a re-list is reported as unverifiable, not as a
// violation, and fails the run all the same.
func TestCheckTombstoneIsUnverifiable(t *testing.T) {
	rep := Check(run(knobs{approxInfraDeleted: true}), rules(t), true)
	if len(rep.Violations) > 0 || rep.Unverifiable == 0 || !rep.Failed() {
		t.Fatalf("want unverifiable checks failing the run and no violation; violations %v, unverifiable %d", rep.Violations, rep.Unverifiable)
	}
	if rep.InfraDeletions != 0 {
		t.Errorf("an infrastructure deletion seen only as a tombstone counts as exercised: %d", rep.InfraDeletions)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "seen gone only after a re-list") {
		t.Errorf("notes %v", rep.Notes)
	}
}

// A check that fails inside a window the recorder could not see is
// reported as unverifiable (failing the run), not as a violation; outside
// it, it is a violation.
func TestCheckBlindWindow(t *testing.T) {
	tl := run(knobs{preTermHookStays: true})
	var at uint64
	for _, e := range tl.Events {
		if e.Kind == SimMachine && e.Op == Updated {
			at = e.RV
		}
	}
	tl.Blind = []Window{{From: at - 3, To: at + 1}}
	rep := Check(tl, rules(t), true)
	if len(rep.Violations) > 0 || rep.Unverifiable != 1 || !rep.Failed() {
		t.Fatalf("violations %v, unverifiable %d", rep.Violations, rep.Unverifiable)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "unverifiable") {
		t.Errorf("notes %v", rep.Notes)
	}
	tl.Blind = []Window{{From: at, To: at + 1}} // (From, To]: at is outside
	assertOne(t, Check(tl, rules(t), true), NoInfraDuringPreTerm, "SimMachine t/m1", "pre-terminate hooks [h2]")
}

// A Node left by a row that keeps it (the Node deletion timeout, E08) is
// that row's documented outcome: a note names the row, and it is no leak.
// Left after any other last row (or with no Event telling the row), it is
// a leak.
func TestCheckNodeKeptByRow(t *testing.T) {
	r := rules(t)
	if r.NodeKeptRows["machine-errors/E08"] == "" {
		t.Fatalf("E08 (Node deletion timeout) is not among the rows that keep the Node: %v", r.NodeKeptRows)
	}
	for _, row := range []string{"machine-deletion/D18", "machine-deletion/D19"} {
		if r.NodeKeptRows[row] != "" {
			t.Errorf("%s deletes the Node or needs it gone, yet counts as keeping it", row)
		}
	}
	if got := r.NodeTimeoutRows; len(got) != 2 || got["machine-errors/E08"] != "DeletingNode" || got["machine-workload-cluster/W09"] != "DeletingNode" {
		t.Errorf("the rows that keep the Node at the Node deletion timeout: %v, want E08 and W09 from DeletingNode", got)
	}
	rep := Check(run(knobs{nodeLeft: true, lastEventRow: "machine-errors/E08"}), r, true)
	if rep.Failed() || strings.Join(rep.KeptNodes, ",") != "n1" {
		t.Fatalf("violations %v, kept Nodes %v", rep.Violations, rep.KeptNodes)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "t/m1: Node n1 left by row machine-errors/E08") {
		t.Errorf("notes %v", rep.Notes)
	}
	assertOne(t, Check(run(knobs{nodeLeft: true, lastEventRow: "machine-deletion/D19"}), r, true), NothingLeaks, "end of run", "Node n1")
}

// The last step's Event is written after the finalizer went, and an
// operator killed in between never writes it: a Node left when the record
// shows what the rows that keep it ask (a Node deletion attempted, the
// timeout past at the finalizer's removal) is their outcome. Without the
// attempt, before the timeout, or with an Event naming a row that ended
// the Machine otherwise, it is a leak.
func TestCheckNodeKeptWithoutTheEvent(t *testing.T) {
	r := rules(t)
	rep := Check(run(knobs{nodeLeft: true, nodeDeletion: "timedOut"}), r, true)
	if rep.Failed() || strings.Join(rep.KeptNodes, ",") != "n1" {
		t.Fatalf("violations %v, kept Nodes %v", rep.Violations, rep.KeptNodes)
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "t/m1: Node n1 left as rows [machine-errors/E08 machine-workload-cluster/W09] do (no Event names the Machine's last row)") ||
		!strings.Contains(notes, "past the Node deletion timeout of 10s") {
		t.Errorf("notes %v", rep.Notes)
	}
	// An Event of an earlier step is not the last step's.
	if rep := Check(run(knobs{nodeLeft: true, nodeDeletion: "timedOut", lastEventRow: "machine-deletion/D16"}), r, true); rep.Failed() {
		t.Errorf("with the Event of an earlier step: violations %v", rep.Violations)
	}
	for _, k := range []knobs{
		{nodeLeft: true, nodeDeletion: "notYet"},
		{nodeLeft: true, nodeDeletion: "unarmed"},
		{nodeLeft: true, nodeDeletion: "timedOut", lastEventRow: "machine-deletion/D19"},
	} {
		assertOne(t, Check(run(k), r, true), NothingLeaks, "end of run", "Node n1")
	}
}

// What the deleted Machine's objects left behind is reported by name, each
// as a leak. A bootstrap Secret is its SimBootstrapConfig's by the UID of its
// controller reference: once that owner is gone it only awaits the garbage
// collector, even when a namesake SimBootstrapConfig exists by then.
func TestCheckReportsLeakedObjects(t *testing.T) {
	without := func(kind Kind, op Op) *Timeline {
		tl := run(knobs{})
		var kept []Event
		for _, e := range tl.Events {
			if e.Kind != kind || e.Op != op {
				kept = append(kept, e)
			}
		}
		tl.Events = kept
		return tl
	}
	namesake := func() *Timeline {
		tl := run(knobs{})
		b := &builder{tl: tl, rv: tl.Events[len(tl.Events)-1].RV}
		b.ev(SimBootstrapConfig, Added, &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "boot-uid-2"}})
		b.ev(Secret, Added, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1-bootstrap-2", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: simv1.GroupVersion.String(), Kind: "SimBootstrapConfig", Name: "m1", UID: "boot-uid-2", Controller: ptrTrue()}}}})
		return tl
	}
	for _, tc := range []struct {
		name               string
		tl                 *Timeline
		leaked, awaitingGC string
	}{
		{"SimMachine left", without(SimMachine, Deleted), "SimMachine t/m1", "Pod t/skipped, Secret t/m1-bootstrap"},
		{"SimBootstrapConfig left, with its Secret", without(SimBootstrapConfig, Deleted), "Secret t/m1-bootstrap, SimBootstrapConfig t/m1", "Pod t/skipped"},
		{"a namesake SimBootstrapConfig and its Secret", namesake(), "Secret t/m1-bootstrap-2, SimBootstrapConfig t/m1", "Pod t/skipped, Secret t/m1-bootstrap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Check(tc.tl, rules(t), true)
			if got := strings.Join(rep.Leaked, ", "); got != tc.leaked {
				t.Errorf("leaked %q, want %q", got, tc.leaked)
			}
			if got := strings.Join(rep.AwaitingGC, ", "); got != tc.awaitingGC {
				t.Errorf("awaiting GC %q, want %q", got, tc.awaitingGC)
			}
			var leaks []Violation
			for _, v := range rep.Violations {
				if v.Invariant == NothingLeaks {
					leaks = append(leaks, v)
				}
			}
			if len(leaks) != 1 || leaks[0].Message != tc.leaked {
				t.Errorf("want one %q violation saying %q, got %v", NothingLeaks, tc.leaked, leaks)
			}
		})
	}
}

// The order of an Eviction API request (which has no revision of its own)
// against a write that ran at the same time is unknown: a check it would
// fail is unverifiable, which fails the run, not a violation.
func TestCheckConcurrentRequestsAreUnverifiable(t *testing.T) {
	rep := Check(run(knobs{audit: true, evictDuringHook: true, evictOverlapsHook: true}), rules(t), true)
	if len(rep.Violations) > 0 || rep.Unverifiable != 1 || !rep.Failed() {
		t.Fatalf("violations %v, unverifiable %d", rep.Violations, rep.Unverifiable)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "their order is unknown") {
		t.Errorf("notes %v", rep.Notes)
	}
}

// A volume wait skipped by a row allows the infrastructure deletion with
// volumes attached; the note names the row.
func TestCheckNamesTheRowThatSkippedTheVolumeWait(t *testing.T) {
	rep := Check(run(knobs{vaLate: true, volumeRow: "D09"}), rules(t), true)
	if rep.Failed() {
		t.Fatalf("violations:\n%v", rep.Violations)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "the volume wait was skipped by row machine-deletion/D09") {
		t.Errorf("notes %v", rep.Notes)
	}
	// A row that skips the wait though the tables have it go elsewhere
	// (an operator running edited tables) excuses nothing.
	assertOne(t, Check(run(knobs{vaLate: true, volumeRow: "D05"}), rules(t), true), InfraAfterVolumes, "SimMachine t/m1", "no recorded row completed or skipped the volume wait")
}

// A Secret left at the end awaits the garbage collector only when its
// controller reference names a SimBootstrapConfig of the run, by name and
// UID, that is gone.
func TestSecretLeaks(t *testing.T) {
	tl := run(knobs{audit: true})
	owned := func(name, owner string, uid types.UID) corev1.Secret {
		return corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: simv1.GroupVersion.String(), Kind: "SimBootstrapConfig", Name: owner, UID: uid, Controller: ptrTrue()}}}}
	}
	secrets := []corev1.Secret{
		owned("gone-owner", "m1", "boot-uid"),
		owned("wrong-uid", "m1", "other-uid"),
		owned("wrong-name", "m2", "boot-uid"),
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-owner"}},
	}
	leaked, gc := SecretLeaks(tl, secrets, nil)
	if got := strings.Join(gc, ", "); got != "Secret gone-owner" {
		t.Errorf("awaiting GC %q", got)
	}
	want := "Secret no-owner (no controller reference to a SimBootstrapConfig of the run), " +
		"Secret wrong-name (no controller reference to a SimBootstrapConfig of the run), " +
		"Secret wrong-uid (no controller reference to a SimBootstrapConfig of the run)"
	if got := strings.Join(leaked, ", "); got != want {
		t.Errorf("leaked %q\nwant %q", got, want)
	}
	leaked, gc = SecretLeaks(tl, secrets[:1], map[string]types.UID{"m1": "boot-uid"})
	if len(gc) != 0 || strings.Join(leaked, ", ") != "Secret gone-owner (its owner is still there)" {
		t.Errorf("owner still there: leaked %v, awaiting GC %v", leaked, gc)
	}
}

// A Pod the drain must evict, left on a deleted Machine's Node that is
// gone, is leaked; one the drain skips awaits the Pod garbage collector,
// and so does an evictable one when a row skipped the drain.
func TestCheckPodsLeft(t *testing.T) {
	rep := Check(run(knobs{webNotEvicted: true}), rules(t), true)
	if got := strings.Join(rep.Leaked, ", "); got != "Pod t/web" {
		t.Errorf("leaked %q, want the web Pod", got)
	}
	rep = Check(run(knobs{webNotEvicted: true, drainRow: "D06"}), rules(t), true)
	if len(rep.Leaked) != 0 || strings.Join(rep.AwaitingGC, ", ") != "Pod t/skipped, Pod t/web, Secret t/m1-bootstrap" {
		t.Errorf("drain skipped by a row: leaked %v, awaiting GC %v", rep.Leaked, rep.AwaitingGC)
	}
}
