package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// auditEvent is the part of an audit.k8s.io/v1 Event the timeline reads.
type auditEvent struct {
	Verb      string `json:"verb"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	ResponseObject json.RawMessage  `json:"responseObject"`
	Received       metav1.MicroTime `json:"requestReceivedTimestamp"`
	Stage          metav1.MicroTime `json:"stageTimestamp"`
}

// auditKinds maps group/resource to the recorded kind and a new object of
// its type.
var auditKinds = map[string]struct {
	kind Kind
	new  func() client.Object
}{
	"cluster.krtt.dev/machines":        {Machine, func() client.Object { return &clusterv1.Machine{} }},
	"sim.krtt.dev/simmachines":         {SimMachine, func() client.Object { return &simv1.SimMachine{} }},
	"sim.krtt.dev/simbootstrapconfigs": {SimBootstrapConfig, func() client.Object { return &simv1.SimBootstrapConfig{} }},
	"/secrets":                         {Secret, func() client.Object { return &corev1.Secret{} }},
	"/nodes":                           {Node, func() client.Object { return &corev1.Node{} }},
	"/pods":                            {Pod, func() client.Object { return &corev1.Pod{} }},
	"policy/poddisruptionbudgets":      {PDB, func() client.Object { return &policyv1.PodDisruptionBudget{} }},
	"storage.k8s.io/volumeattachments": {VolumeAttachment, func() client.Object { return &storagev1.VolumeAttachment{} }},
	"events.k8s.io/events":             {MachineEvent, func() client.Object { return &eventsv1.Event{} }},
}

// ReadAuditLog builds the timeline of namespace ns (and of the
// cluster-scoped Nodes and VolumeAttachments) from kube-apiserver's audit
// log (localcp.Options.Audit): every successful write, whether or not any
// watch was open at the time. A write whose answer carries the object gets
// the object's resourceVersion, its etcd revision. A write answered with a
// Status (the deletion of an object without finalizers, an eviction) or
// logged at Metadata level (Secrets) carries none: it gets the newest
// revision of a write answered before it was received (Bracketed), which
// places it after every write that certainly came before it; the checker
// treats its order against writes running at the same time as unknown.
// Refused evictions (429) are recorded too: they are what a budget did.
// A rotated log (a backup file next to path) is an error: writes would be
// missing.
//
// Cluster-scoped objects (Nodes, VolumeAttachments) are kept when keep
// says so of their name (nil: all).
func ReadAuditLog(path, ns string, keep func(name string) bool) (*Timeline, error) {
	if backups, _ := filepath.Glob(path[:len(path)-len(filepath.Ext(path))] + "-*" + filepath.Ext(path)); len(backups) > 0 {
		return nil, fmt.Errorf("timeline: the audit log %s was rotated (%v): writes are missing", path, backups)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return readAudit(f, ns, keep)
}

func readAudit(r io.Reader, ns string, keep func(name string) bool) (*Timeline, error) {
	t := &Timeline{FromAudit: true}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		var a auditEvent
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			// kube-apiserver killed mid-line leaves a partial last line;
			// anything else is a broken log.
			if !sc.Scan() {
				break
			}
			return nil, fmt.Errorf("timeline: audit log line %d: %w", line, err)
		}
		if a.ObjectRef != nil && a.ObjectRef.Namespace == "" && keep != nil && !keep(a.ObjectRef.Name) {
			continue
		}
		if e, ok, err := fromAudit(&a, ns); err != nil {
			return nil, fmt.Errorf("timeline: audit log line %d: %w", line, err)
		} else if ok {
			t.Events = append(t.Events, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.Events) > 0 {
		t.Start = t.Events[0].Recv
	}
	placeBracketed(t.Events)
	for i := range t.Events {
		t.Events[i].At = t.Events[i].Stage
	}
	t.Sort()
	return t, nil
}

func fromAudit(a *auditEvent, ns string) (Event, bool, error) {
	ref := a.ObjectRef
	if ref == nil || (ref.Namespace != "" && ref.Namespace != ns) {
		return Event{}, false, nil
	}
	e := Event{Recv: a.Received.Time, Stage: a.Stage.Time}
	if a.ResponseStatus != nil {
		e.Code = a.ResponseStatus.Code
	}
	if ref.Resource == "pods" && ref.Subresource == "eviction" && a.Verb == "create" {
		// Every attempt, whatever the answer: one cut short (the client
		// gone, the API server killed) may still have written the Pod.
		e.Kind, e.Op, e.Bracketed = Eviction, Added, true
		e.Obj = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
		return e, true, nil
	}
	k, ok := auditKinds[ref.APIGroup+"/"+ref.Resource]
	if !ok || (e.Code >= 300 && e.Code < 500) || (ref.Subresource != "" && ref.Subresource != "status") {
		return Event{}, false, nil
	}
	if e.Code < 200 || e.Code >= 500 {
		// Answered with a server error or not at all (a timeout): it may
		// have been applied; what it wrote, only the informers can say
		// (see Complete).
		switch a.Verb {
		case "create", "update", "patch", "delete":
		default:
			return Event{}, false, nil
		}
		obj := k.new()
		obj.SetNamespace(ref.Namespace)
		obj.SetName(ref.Name)
		e.Kind, e.Op, e.Obj, e.Bracketed = k.kind, Uncertain, obj, true
		return e, true, nil
	}
	switch a.Verb {
	case "create":
		e.Op = Added
	case "update", "patch":
		e.Op = Updated
	case "delete":
		e.Op = Deleted
	default:
		return Event{}, false, nil
	}
	e.Kind = k.kind
	obj := k.new()
	var head struct {
		Kind string `json:"kind"`
	}
	if len(a.ResponseObject) > 0 {
		if err := json.Unmarshal(a.ResponseObject, &head); err != nil {
			return Event{}, false, err
		}
	}
	if head.Kind != "" && head.Kind != "Status" {
		if err := json.Unmarshal(a.ResponseObject, obj); err != nil {
			return Event{}, false, fmt.Errorf("%s %s: %w", k.kind, ref.Name, err)
		}
		obj.SetManagedFields(nil)
		e.RV = ParseRV(obj.GetResourceVersion())
		if e.Op == Deleted && stillThere(obj) {
			e.Op = Updated // the deletion started; the object stays for now
		}
		if e.Op != Deleted && gone(obj) {
			e.Op = Deleted // the write removed the last finalizer
		}
		// An object removed is answered as it was before: the removal's
		// own revision is newer and not in the answer.
		e.Bracketed = e.Op == Deleted
	} else {
		// No object in the answer: a deletion answered with a Status, or
		// a write logged at Metadata level.
		if ref.Subresource != "" && e.Op != Deleted {
			return Event{}, false, nil
		}
		obj.SetNamespace(ref.Namespace)
		obj.SetName(ref.Name)
		e.Bracketed = true
	}
	if ev, ok := obj.(*eventsv1.Event); ok && (e.Op == Deleted || ev.Regarding.Kind != "Machine") {
		return Event{}, false, nil
	}
	e.Obj = obj
	return e, true, nil
}

// stillThere: the answer to a DELETE shows an object the API server kept
// (finalizers left, or a Pod given a grace period to terminate).
func stillThere(o client.Object) bool {
	if len(o.GetFinalizers()) > 0 {
		return true
	}
	if p, ok := o.(*corev1.Pod); ok {
		return p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds > 0 && p.Spec.NodeName != ""
	}
	return false
}

// gone: an update left a deleting object without finalizers, which the
// API server then removes (a Pod only once its grace period is 0).
func gone(o client.Object) bool {
	if o.GetDeletionTimestamp() == nil || len(o.GetFinalizers()) > 0 {
		return false
	}
	if p, ok := o.(*corev1.Pod); ok {
		return p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0
	}
	return true
}

// placeBracketed gives each write without a revision of its own the
// newest revision of the writes answered before it was received (and at
// least the revision its answer shows). A removal also comes after every
// write to the same object that was received before it was answered: an
// object is not written once it is gone.
func placeBracketed(evs []Event) {
	// The revisions the answers show, each committed by the time it was
	// answered.
	shown := make([]uint64, len(evs))
	byStage := make([]int, 0, len(evs))
	for i := range evs {
		if shown[i] = evs[i].RV; shown[i] > 0 {
			byStage = append(byStage, i)
		}
	}
	sort.Slice(byStage, func(a, b int) bool { return evs[byStage[a]].Stage.Before(evs[byStage[b]].Stage) })
	prefixMax := make([]uint64, len(byStage))
	var m uint64
	for j, i := range byStage {
		m = max(m, shown[i])
		prefixMax[j] = m
	}
	order := make([]int, len(evs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return evs[order[a]].Stage.Before(evs[order[b]].Stage) })
	for seq, i := range order {
		evs[i].Seq = seq + 1
		if !evs[i].Bracketed {
			continue
		}
		n := sort.Search(len(byStage), func(j int) bool { return !evs[byStage[j]].Stage.Before(evs[i].Recv) })
		if n > 0 {
			evs[i].RV = max(evs[i].RV, prefixMax[n-1])
		}
		if evs[i].Op != Deleted {
			continue
		}
		for _, j := range byStage {
			if w := &evs[j]; j != i && w.Kind == evs[i].Kind && w.Key() == evs[i].Key() && w.Recv.Before(evs[i].Stage) {
				evs[i].RV = max(evs[i].RV, shown[j])
			}
		}
	}
}

// concurrent reports whether two requests overlapped in time, so that the
// API server may have applied them in either order.
func concurrent(a, b *Event) bool {
	if a.Recv.IsZero() || b.Recv.IsZero() {
		return false
	}
	return !a.Stage.Before(b.Recv) && !b.Stage.Before(a.Recv)
}

// Outage is a span kube-apiserver was down: killed at Down, serving again
// at Up.
type Outage struct{ Down, Up time.Time }

// requestTimeout bounds how long a request can have been running when
// kube-apiserver was killed (its default request timeout).
const requestTimeout = 60 * time.Second

// Complete cross-checks the audit log against the versions the recorder's
// informers saw. A version the log lacks is explained when a request in
// the log accounts for it: the Eviction API's own writes to the Pod it
// evicts (a version with its DisruptionTarget condition, the log holding
// an eviction of that Pod not refused), a write answered with an error
// that was applied all the same (a timeout: the log holds a request to
// that object answered 5xx or not at all), or a write kube-apiserver
// applied but was killed before it logged it (a revision between the last
// answered before an outage, less requestTimeout, and the first received
// after it). Those versions join the timeline, as the informers saw them
// (FromInformers), and a removal the log placed below one of them moves
// after it (see removalsLast); the others are what the record misses,
// returned. So do removals the log lacks that the informers' watches saw
// (with the removal's own revision), explained the same way (an eviction
// of the Pod explains its removal): a DELETE cut short by its client's
// death is answered 504 though it removed the object, and without it the
// object would look leaked. What the informers saw newer than anything the
// log shows is not judged: they go on after the log was read.
func Complete(audit, informers *Timeline, outages []Outage) (missing []string) {
	have := map[string]bool{}
	evicted := map[string]bool{}
	uncertain := map[string]bool{}
	var logged uint64
	for i := range audit.Events {
		e := &audit.Events[i]
		switch {
		case e.Kind == Eviction && e.Code != 429:
			evicted[e.Key()] = true
		case e.Op == Uncertain:
			uncertain[ref(e.Kind, e.Key())] = true
		}
		if !e.Bracketed {
			have[fmt.Sprintf("%s/%s@%d", e.Kind, e.Key(), e.RV)] = true
			logged = max(logged, e.RV)
		}
	}
	inFlight := inFlightWindows(audit, outages)
	removed := map[object]bool{}
	for i, o := range identities(audit.Events) {
		if o.kind != "" && audit.Events[i].Op == Deleted {
			removed[o] = true
		}
	}
	added := false
	firstEvicted := map[string]uint64{} // Pod: the revision of the Eviction API's first write
	for i := range informers.Events {
		e := &informers.Events[i]
		switch e.Kind {
		case Machine, SimMachine, SimBootstrapConfig, Node, Pod, VolumeAttachment, PDB:
		default:
			continue
		}
		// A removal seen by a watch carries its own revision; one seen as
		// a tombstone after a re-list does not, and is not placed.
		removal := e.Op == Deleted
		// Newer than anything the log shows: read before the log had it,
		// as the informers go on after it was read (not judged yet).
		if e.RV > logged || e.Approx || (removal && (removed[object{e.Kind, e.Key(), e.Obj.GetUID()}] || removed[object{e.Kind, e.Key(), ""}])) ||
			(!removal && have[fmt.Sprintf("%s/%s@%d", e.Kind, e.Key(), e.RV)]) {
			continue
		}
		explained := uncertain[ref(e.Kind, e.Key())]
		if p, ok := e.Obj.(*corev1.Pod); ok && evicted[e.Key()] && (removal || disruptionReason(p) == evictionReason) {
			// The Eviction API writes the Pod, and removes one it may
			// remove at once (terminating, pending or finished).
			explained = true
		}
		for _, w := range inFlight {
			explained = explained || (e.RV > w.From && e.RV < w.To)
		}
		if !explained {
			what := "rv"
			if removal {
				what = "removed at rv"
			}
			missing = append(missing, fmt.Sprintf("%s %s %s %d", e.Kind, e.Key(), what, e.RV))
			continue
		}
		if p, ok := e.Obj.(*corev1.Pod); ok && disruptionReason(p) == evictionReason && firstEvicted[e.Key()] == 0 {
			firstEvicted[e.Key()] = e.RV
		}
		v := *e
		v.FromInformers, v.Seq = true, 0
		v.Recv, v.Stage = time.Time{}, time.Time{}
		audit.Events = append(audit.Events, v)
		added = true
	}
	// An eviction whose own write the informers saw is placed there, just
	// before it, instead of after the writes answered before it began: the
	// attempt not refused that began last before that write (one cut
	// short included, which the write shows applied).
	latest := map[string]int{}
	for i := range audit.Events {
		e := &audit.Events[i]
		rv := firstEvicted[e.Key()]
		if e.Kind != Eviction || e.Code == 429 || rv == 0 || e.RV >= rv {
			continue
		}
		if j, ok := latest[e.Key()]; !ok || audit.Events[j].Recv.Before(e.Recv) {
			latest[e.Key()] = i
		}
	}
	for k, i := range latest {
		e := &audit.Events[i]
		e.RV, e.Seq, e.Bracketed, e.Applied = firstEvicted[k], -1, false, true
	}
	if added {
		audit.Sort()
		if removalsLast(audit.Events) {
			audit.Sort()
		}
	}
	return missing
}

// inFlightWindows bounds, per outage, the revisions of writes
// kube-apiserver may have applied and been killed before it logged: above
// the last answered requestTimeout before it went down, below the first
// received after it was up again. To is 0 when nothing was received after.
func inFlightWindows(audit *Timeline, outages []Outage) []Window {
	var out []Window
	for _, o := range outages {
		var w Window
		first := true
		for i := range audit.Events {
			e := &audit.Events[i]
			if e.Bracketed || e.Stage.IsZero() {
				// A version only the informers saw (Complete adds them)
				// has no request times: its zero time is before every
				// outage and would close the window.
				continue
			}
			if e.Stage.Before(o.Down.Add(-requestTimeout)) {
				w.From = max(w.From, e.RV)
			}
			if e.Recv.After(o.Up) && (first || e.RV <= w.To) {
				w.To, first = e.RV, false
			}
		}
		out = append(out, w)
	}
	return out
}

// Gone reports whether the API server no longer holds the object an event
// is about (none by that name, or one with another UID).
type Gone func(e *Event) (bool, error)

// LostRemovals adds the removals kube-apiserver applied but was killed
// before it logged, when neither the log nor the informers' watches show
// them (the informers were re-listing across the outage). An object whose
// last event is a version below an outage's in-flight window's end (To),
// and which the API server no longer holds (gone), was removed in that
// window: a removal after it would be logged. The removal is placed at To,
// before the write there: the latest revision it can have, so what a check
// finds gone before a write was gone in truth. Run after Complete; it
// returns what it added, a line each.
func LostRemovals(audit *Timeline, outages []Outage, gone Gone) ([]string, error) {
	windows := inFlightWindows(audit, outages)
	last := map[object]int{}
	for i, o := range identities(audit.Events) {
		switch o.kind {
		case Machine, SimMachine, SimBootstrapConfig, Node, Pod, VolumeAttachment, PDB:
			last[o] = i
		}
	}
	var added []string
	for _, i := range last {
		e := &audit.Events[i]
		if e.Op == Deleted {
			continue
		}
		to := uint64(0)
		for _, w := range windows {
			if w.To > e.RV && w.From < w.To && (to == 0 || w.To < to) {
				to = w.To
			}
		}
		if to == 0 {
			continue
		}
		g, err := gone(e)
		if err != nil {
			return added, fmt.Errorf("%s %s: %w", e.Kind, e.Key(), err)
		}
		if !g {
			continue
		}
		v := *e
		v.Op, v.RV, v.Seq, v.Lost = Deleted, to, -2, true
		v.Recv, v.Stage, v.Code, v.Bracketed, v.FromInformers = time.Time{}, time.Time{}, 0, false, false
		audit.Events = append(audit.Events, v)
		added = append(added, fmt.Sprintf("%s %s removed by rv %d", e.Kind, e.Key(), to))
	}
	if len(added) > 0 {
		sort.Strings(added)
		audit.Sort()
	}
	return added, nil
}

// removalsLast moves each removal after every version of the object it
// removed (the same UID), and reports whether it moved any. The log can
// place a removal below a version only the informers saw: a graceless
// DELETE of a Pod first writes its zero grace period (inside the request,
// not a request the log shows), and when another request (an eviction of
// the terminating Pod) removes the Pod in between, the DELETE finds it
// gone and is answered with the Pod as it was before its own write, so it
// is placed after the writes answered before it began, below that
// version. Nothing is written to an object once it is gone: the version
// came first, and a version after the removal would bring the object
// back to life in the checker's world. The events must be sorted. A
// removal answered with a Status names no UID: it removed the object of
// the last event before it that names one.
func removalsLast(evs []Event) bool {
	removes := map[int]object{}
	newest := map[object]int{}
	for i, o := range identities(evs) {
		switch {
		case o.kind == "":
		case evs[i].Op == Deleted:
			removes[i] = o
		default:
			newest[o] = i
		}
	}
	moved := false
	for i, o := range removes {
		j, ok := newest[o]
		if !ok || j < i {
			continue
		}
		d, v := &evs[i], &evs[j]
		d.RV, d.Seq = v.RV, max(d.Seq, v.Seq+1)
		moved = true
	}
	return moved
}

// object is one object of the record: a name can be reused.
type object struct {
	kind Kind
	key  string
	uid  types.UID
}

// identities names the object of each version and removal among the
// sorted events (none, kind "", for evictions, marks and uncertain
// requests). An event without a UID (a removal answered with a Status, a
// write logged at Metadata level) is about the object of the last event
// before it that names one.
func identities(evs []Event) []object {
	out := make([]object, len(evs))
	uidOf := map[string]types.UID{}
	for i := range evs {
		e := &evs[i]
		if e.Obj == nil || e.Kind == Mark || e.Kind == Eviction || e.Op == Uncertain {
			continue
		}
		o := object{e.Kind, e.Key(), e.Obj.GetUID()}
		if o.uid == "" {
			o.uid = uidOf[ref(o.kind, o.key)]
		} else {
			uidOf[ref(o.kind, o.key)] = o.uid
		}
		out[i] = o
	}
	return out
}
