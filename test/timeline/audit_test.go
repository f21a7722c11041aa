package timeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Lines as kube-apiserver writes them with localcp's audit policy; the
// last one cut short, as a kill mid-write leaves it.
const auditSample = `{"verb":"create","userAgent":"chaos.test","objectRef":{"resource":"pods","namespace":"t","name":"p1","apiVersion":"v1"},"responseStatus":{"code":201},"responseObject":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1","namespace":"t","resourceVersion":"10"},"spec":{"nodeName":"n1"}},"requestReceivedTimestamp":"2026-01-01T00:00:00.000100Z","stageTimestamp":"2026-01-01T00:00:00.000200Z"}
{"verb":"create","userAgent":"other","objectRef":{"resource":"pods","namespace":"other","name":"p9","apiVersion":"v1"},"responseStatus":{"code":201},"responseObject":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p9","namespace":"other","resourceVersion":"11"}},"requestReceivedTimestamp":"2026-01-01T00:00:00.000300Z","stageTimestamp":"2026-01-01T00:00:00.000400Z"}
{"verb":"create","userAgent":"krtt-operator","objectRef":{"resource":"pods","namespace":"t","name":"p1","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"code":429},"responseObject":{"kind":"Status","apiVersion":"v1","code":429},"requestReceivedTimestamp":"2026-01-01T00:00:00.000500Z","stageTimestamp":"2026-01-01T00:00:00.000600Z"}
{"verb":"patch","userAgent":"krtt-operator","objectRef":{"resource":"nodes","name":"n1","apiVersion":"v1"},"responseStatus":{"code":200},"responseObject":{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","resourceVersion":"12"},"spec":{"unschedulable":true}},"requestReceivedTimestamp":"2026-01-01T00:00:00.000700Z","stageTimestamp":"2026-01-01T00:00:00.000800Z"}
{"verb":"create","userAgent":"krtt-operator","objectRef":{"resource":"pods","namespace":"t","name":"p1","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"code":201},"responseObject":{"kind":"Status","apiVersion":"v1","code":201},"requestReceivedTimestamp":"2026-01-01T00:00:00.000900Z","stageTimestamp":"2026-01-01T00:00:00.001000Z"}
{"verb":"delete","userAgent":"krtt-sim","objectRef":{"resource":"pods","namespace":"t","name":"p1","apiVersion":"v1"},"responseStatus":{"code":200},"responseObject":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1","namespace":"t","resourceVersion":"15","deletionTimestamp":"2026-01-01T00:00:01Z","deletionGracePeriodSeconds":0},"spec":{"nodeName":"n1"}},"requestReceivedTimestamp":"2026-01-01T00:00:00.001100Z","stageTimestamp":"2026-01-01T00:00:00.001200Z"}
{"verb":"delete","userAgent":"krtt-operator","objectRef":{"resource":"nodes","name":"n1","apiVersion":"v1"},"responseStatus":{"code":200},"responseObject":{"kind":"Status","apiVersion":"v1","status":"Success"},"requestReceivedTimestamp":"2026-01-01T00:00:00.001300Z","stageTimestamp":"2026-01-01T00:00:00.001400Z"}
{"verb":"delete","userAgent":"krtt-operator","objectRef":{"resource":"nodes","name":"n2","apiVersion":"v1"},"responseStatus":{"code":404},"responseObject":{"kind":"Status","apiVersion":"v1","code":404},"requestReceivedTimestamp":"2026-01-01T00:00:00.001500Z","stageTimestamp":"2026-01-01T00:00:00.001600Z"}
{"verb":"update","objectRef":{"resource":"machines","namespace":"t","name":"m1","apiGroup":"cluster.krtt.dev"},"respo`

func TestReadAudit(t *testing.T) {
	tl, err := readAudit(strings.NewReader(auditSample), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range tl.Events {
		e := &tl.Events[i]
		s := tl.Format(e)
		got = append(got, s[strings.Index(s, "rv="):])
	}
	want := []string{
		"rv=10      Added   Pod t/p1 node=n1 phase=",
		"rv=10      Create  Eviction t/p1 (no resourceVersion in the answer: after rv) code=429",
		"rv=12      Updated Node n1 cordoned",
		"rv=12      Create  Eviction t/p1 (no resourceVersion in the answer: after rv) code=201",
		// Removed: answered with the object as it was, the removal newer.
		"rv=15      Deleted Pod t/p1 (no resourceVersion in the answer: after rv) deleting node=n1 phase=",
		// Answered with a Status: placed after the last write answered.
		"rv=15      Deleted Node n1 (no resourceVersion in the answer: after rv) ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !tl.FromAudit {
		t.Error("not marked as read from an audit log")
	}
	// A broken line that is not the last is an error.
	if _, err := readAudit(strings.NewReader("{\n"+auditSample), "t", nil); err == nil {
		t.Error("a broken line in the middle of the log was accepted")
	}
}

// A version the informers saw and the audit log lacks is reported; the
// Eviction API's own write of an evicted Pod is not, and joins the
// timeline.
func TestComplete(t *testing.T) {
	audit := run(knobs{audit: true})
	informers := run(knobs{})
	n := len(audit.Events)
	if got := Complete(audit, informers, nil); len(got) != 0 {
		t.Errorf("versions reported missing from a complete log: %v", got)
	}
	if len(audit.Events) != n+4 {
		t.Errorf("the Eviction API's writes of the two evicted Pods did not join the timeline: %d events, want %d", len(audit.Events), n+4)
	}
	// Each eviction now sits at its own write, just before it.
	for i, e := range audit.Events {
		if e.Kind != Eviction {
			continue
		}
		next := audit.Events[i+1]
		if e.Bracketed || next.Kind != Pod || next.Key() != e.Key() || next.RV != e.RV || !next.FromInformers {
			t.Errorf("eviction of %s at rv %d (bracketed %t), followed by %s", e.Key(), e.RV, e.Bracketed, audit.Format(&next))
		}
	}
	if rep := Check(audit, rules(t), true); rep.Failed() || rep.Evictions != 2 {
		t.Errorf("the completed timeline fails or miscounts (%d evictions, want 2): %v\n%v", rep.Evictions, rep.Violations, rep.Notes)
	}
	// An eviction cut short (500) whose write the informers saw is placed
	// there and checked as the eviction it was: over the budget here.
	audit = run(knobs{audit: true, cutShort: true, otherDBNotReady: true})
	Complete(audit, run(knobs{otherDBNotReady: true}), nil)
	rep := Check(audit, rules(t), true)
	if len(rep.Violations) != 1 || rep.Violations[0].Invariant != PDBRespected || rep.Violations[0].Object != "Pod t/db-1" || rep.Evictions != 2 ||
		strings.Contains(strings.Join(rep.Notes, "\n"), "cut short") {
		t.Errorf("cut-short eviction: %d evictions, violations %v, notes %v", rep.Evictions, rep.Violations, rep.Notes)
	}
	audit = run(knobs{audit: true})
	var kept []Event
	for _, e := range audit.Events {
		if e.Kind == Node && e.Op == Updated {
			continue // the cordon
		}
		kept = append(kept, e)
	}
	audit.Events = append([]Event(nil), kept...)
	if got := strings.Join(Complete(audit, informers, nil), ", "); got != "Node n1 rv 18" {
		t.Errorf("missing %q, want the cordon", got)
	}
	// Answered 504 but applied: explained.
	audit.Events = append(append([]Event(nil), kept...), Event{Kind: Node, Op: Uncertain, Code: 504, Bracketed: true,
		Obj: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}})
	if got := Complete(audit, informers, nil); len(got) != 0 {
		t.Errorf("a write answered 504 reported missing: %v", got)
	}
	// Applied while kube-apiserver was being killed: explained.
	audit.Events = append([]Event(nil), kept...)
	at := t0.Add(18 * time.Millisecond)
	if got := Complete(audit, informers, []Outage{{Down: at, Up: at.Add(time.Millisecond)}}); len(got) != 0 {
		t.Errorf("a write in flight at an outage reported missing: %v", got)
	}
}

// A removal answered with a Status comes after a write to the same object
// that ran at the same time: an object is not written once it is gone.
func TestReadAuditRemovalAfterConcurrentWrite(t *testing.T) {
	const lines = `{"verb":"create","objectRef":{"resource":"nodes","name":"n1"},"responseStatus":{"code":201},"responseObject":{"kind":"Node","metadata":{"name":"n1","resourceVersion":"19"}},"requestReceivedTimestamp":"2026-01-01T00:00:00.000100Z","stageTimestamp":"2026-01-01T00:00:00.000500Z"}
{"verb":"delete","objectRef":{"resource":"nodes","name":"n1"},"responseStatus":{"code":200},"responseObject":{"kind":"Status","status":"Success"},"requestReceivedTimestamp":"2026-01-01T00:00:00.000900Z","stageTimestamp":"2026-01-01T00:00:00.001600Z"}
{"verb":"patch","objectRef":{"resource":"nodes","name":"n1","subresource":"status"},"responseStatus":{"code":200},"responseObject":{"kind":"Node","metadata":{"name":"n1","resourceVersion":"20"}},"requestReceivedTimestamp":"2026-01-01T00:00:00.001000Z","stageTimestamp":"2026-01-01T00:00:00.001500Z"}
`
	tl, err := readAudit(strings.NewReader(lines), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	last := tl.Events[len(tl.Events)-1]
	if len(tl.Events) != 3 || last.Op != Deleted || last.RV != 20 {
		t.Errorf("the removal is not last, after rv 20: %+v", tl.Events)
	}
}

// A graceless DELETE that loses the race to another request removing the
// Pod is answered with the Pod as it was before the DELETE's own write of
// a zero grace period, which only the informers saw: the removal still
// comes after that version, the Pod's last event, and the Pod is gone when
// the infrastructure goes.
func TestCompleteRemovalAfterEveryVersion(t *testing.T) {
	audit := run(knobs{audit: true, removalRace: true})
	if got := Complete(audit, run(knobs{removalRace: true}), nil); len(got) != 0 {
		t.Errorf("versions reported missing: %v", got)
	}
	var last *Event
	var newest uint64
	for i := range audit.Events {
		if e := &audit.Events[i]; e.Kind == Pod && e.Key() == ns+"/db-1" {
			last = e
			if e.Op != Deleted {
				newest = max(newest, e.RV)
			}
		}
	}
	if last == nil || last.Op != Deleted || last.RV < newest {
		t.Fatalf("the removal of db-1 is not its last event after rv %d:\n%s", newest, formatAll(audit))
	}
	if rep := Check(audit, rules(t), true); rep.Failed() {
		t.Errorf("violations %v\nnotes %v", rep.Violations, rep.Notes)
	}
}

func formatAll(tl *Timeline) string {
	var lines []string
	for i := range tl.Events {
		lines = append(lines, tl.Format(&tl.Events[i]))
	}
	return strings.Join(lines, "\n")
}

// A removal moves after the versions of the object it removed only: a
// namesake created later (another UID) keeps its own versions, and a
// removal answered with a Status (no UID) removed the object of the events
// before it.
func TestRemovalsLastKeepsToItsObject(t *testing.T) {
	node := func(uid types.UID, rv uint64, op Op, seq int) Event {
		return Event{RV: rv, Seq: seq, Kind: Node, Op: op, Obj: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: uid}}}
	}
	tl := &Timeline{Events: []Event{
		node("a", 10, Added, 1),
		node("", 11, Deleted, 3), // a Status answer, placed after rv 11
		node("a", 12, Updated, 0),
		node("b", 20, Added, 4),
		node("b", 21, Updated, 5),
	}}
	if !removalsLast(tl.Events) {
		t.Fatal("the removal below a version of its object did not move")
	}
	tl.Sort()
	var got []string
	for _, e := range tl.Events {
		got = append(got, fmt.Sprintf("%s %s@%d", e.Op, e.Obj.GetUID(), e.RV))
	}
	if want := "Added a@10 Updated a@12 Deleted @12 Added b@20 Updated b@21"; strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
	if removalsLast(tl.Events) {
		t.Error("a removal already last moved again")
	}
}

// A removal the log shows answered 504 (its client killed mid-request) yet
// applied, as the informers saw, joins the timeline: the Node is not
// leaked. A removal no request in the log accounts for is what the record
// misses; a Node the informers never saw go is leaked.
func TestCompleteRemovalCutShort(t *testing.T) {
	audit := run(knobs{audit: true, nodeDeleteCutShort: true})
	if got := Complete(audit, run(knobs{}), nil); len(got) != 0 {
		t.Errorf("versions reported missing: %v", got)
	}
	if rep := Check(audit, rules(t), true); rep.Failed() || len(rep.Leaked) > 0 {
		t.Errorf("leaked %v, violations %v", rep.Leaked, rep.Violations)
	}

	audit = run(knobs{audit: true, nodeDeleteCutShort: true})
	var kept []Event
	for _, e := range audit.Events {
		if e.Op != Uncertain {
			kept = append(kept, e)
		}
	}
	audit.Events = kept
	if got := strings.Join(Complete(audit, run(knobs{}), nil), ", "); got != "Node n1 removed at rv 35" {
		t.Errorf("missing %q, want the Node's removal", got)
	}

	audit = run(knobs{audit: true, nodeDeleteCutShort: true})
	Complete(audit, run(knobs{nodeLeft: true}), nil)
	if rep := Check(audit, rules(t), true); strings.Join(rep.Leaked, ", ") != "Node n1" {
		t.Errorf("leaked %v, want the Node", rep.Leaked)
	}
}

// The informers go on after the log was read: what they saw newer than
// anything the log shows is not judged yet (the next read has it), while a
// version the log lacks below that is missing.
func TestCompleteJudgesUpToTheLog(t *testing.T) {
	full := run(knobs{audit: true})
	cut := func(last uint64) *Timeline {
		tl := &Timeline{FromAudit: true}
		for _, e := range full.Events {
			if e.RV <= last {
				tl.Events = append(tl.Events, e)
			}
		}
		return tl
	}
	if got := Complete(cut(30), run(knobs{}), nil); len(got) != 0 {
		t.Errorf("what the log had not written yet reported missing: %v", got)
	}
	audit := cut(30)
	audit.Events = slices.DeleteFunc(audit.Events, func(e Event) bool { return e.Kind == Node && e.Op == Updated })
	if got := strings.Join(Complete(audit, run(knobs{}), nil), ", "); got != "Node n1 rv 18" {
		t.Errorf("missing %q, want the cordon", got)
	}
}

// A removal kube-apiserver applied but was killed before it logged, with
// the informers re-listing across the outage, is missing from both: the
// object the API server no longer holds is placed removed at the end of
// the in-flight window, so neither a leak nor a drain cut short is
// reported; one it still holds, or one last written after the window,
// stays as it was.
func TestLostRemovals(t *testing.T) {
	// lose drops the web Pod's removal from the log; it returns its
	// revision and that of the next write the log answered with one.
	lose := func() (audit *Timeline, rv, next uint64) {
		audit = run(knobs{audit: true})
		for i, e := range audit.Events {
			if e.Kind == Pod && e.Key() == ns+"/web" && e.Op == Deleted {
				audit.Events = slices.Delete(audit.Events, i, i+1)
				for _, n := range audit.Events[i:] {
					if !n.Bracketed {
						return audit, e.RV, n.RV
					}
				}
			}
		}
		t.Fatal("no removal of the web Pod with a write after it in the run")
		return nil, 0, 0
	}
	// Killed just before the removal was logged, up again at once: the
	// next write is the first received after the outage.
	outage := func(rv uint64) []Outage {
		at := t0.Add(time.Duration(rv) * time.Millisecond)
		return []Outage{{Down: at.Add(-100 * time.Microsecond), Up: at.Add(100 * time.Microsecond)}}
	}
	isWeb := func(e *Event) bool { return e.Kind == Pod && e.Key() == ns+"/web" }

	audit, rv, next := lose()
	if rep := Check(audit, rules(t), true); !rep.Failed() {
		t.Fatal("a timeline missing the Pod's removal passes: the test proves nothing")
	}
	var asked []string
	added, err := LostRemovals(audit, outage(rv), func(e *Event) (bool, error) {
		asked = append(asked, string(e.Kind)+" "+e.Key())
		return isWeb(e), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(added, ", "), fmt.Sprintf("Pod %s/web removed by rv %d", ns, next); got != want {
		t.Errorf("added %q, want %q (asked about %v)", got, want, asked)
	}
	if rep := Check(audit, rules(t), true); rep.Failed() {
		t.Errorf("the completed timeline fails: %v\n%v", rep.Violations, rep.Notes)
	}
	for i, e := range audit.Events {
		if e.Lost && (!isWeb(&e) || e.RV != next || audit.Events[i+1].RV != next) {
			t.Errorf("lost removal placed as %s, followed by %s", audit.Format(&e), audit.Format(&audit.Events[i+1]))
		}
	}

	// A version only the informers saw, which Complete adds without the
	// times of a request, leaves the window as the log's requests bound it,
	// however new its revision.
	audit, rv, next = lose()
	for i := len(audit.Events) - 1; i >= 0; i-- {
		if e := audit.Events[i]; !e.Bracketed && !isWeb(&e) {
			e.Recv, e.Stage, e.FromInformers, e.RV = time.Time{}, time.Time{}, true, e.RV+1000
			audit.Events = append(audit.Events, e)
			break
		}
	}
	added, err = LostRemovals(audit, outage(rv), func(e *Event) (bool, error) { return isWeb(e), nil })
	if got, want := strings.Join(added, ", "), fmt.Sprintf("Pod %s/web removed by rv %d", ns, next); err != nil || got != want {
		t.Errorf("with a version only the informers saw: added %q (%v), want %q", got, err, want)
	}

	// Still in the API server: not removed.
	audit, rv, _ = lose()
	if added, err := LostRemovals(audit, outage(rv), func(*Event) (bool, error) { return false, nil }); err != nil || len(added) != 0 {
		t.Errorf("added %v (%v) for objects the API server still holds", added, err)
	}
	// An outage before the Pod's last version: a removal after it would
	// be logged, so the log's silence is no loss.
	audit, _, _ = lose()
	if added, err := LostRemovals(audit, outage(1), func(e *Event) (bool, error) { return isWeb(e), nil }); err != nil || len(added) != 0 {
		t.Errorf("added %v (%v) for an outage before the Pod's last version", added, err)
	}
	// An error asking the API server is returned, naming the object.
	audit, rv, _ = lose()
	if _, err := LostRemovals(audit, outage(rv), func(e *Event) (bool, error) {
		return false, fmt.Errorf("no answer")
	}); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("error %v, want the API server's", err)
	}
}
