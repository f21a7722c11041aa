// Package timeline records what happens to Machines and everything their
// deletion touches (provider objects, bootstrap Secrets, Nodes, Pods,
// PodDisruptionBudgets, VolumeAttachments, evictions) as a timeline, and
// checks the deletion invariants on it after a run (see Check). The
// timeline is read from kube-apiserver's audit log (ReadAuditLog), every
// write; a Recorder's informers watch the same objects, to cross-check the
// log (Complete) and to time the faults of a run by its progress.
//
// Events are ordered by resourceVersion: on a control plane backed by one
// etcd, every write gets the next etcd revision whatever the kind, so the
// order is the API server's own, not the order anything observed them in.
package timeline

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// Kind is what a recorded object is.
type Kind string

// The recorded kinds, and Mark for notes the driver of a run adds (a kill,
// a restart) so excerpts show them in place.
const (
	Machine            Kind = "Machine"
	SimMachine         Kind = "SimMachine"
	SimBootstrapConfig Kind = "SimBootstrapConfig"
	Secret             Kind = "Secret"
	Node               Kind = "Node"
	Pod                Kind = "Pod"
	PDB                Kind = "PodDisruptionBudget"
	VolumeAttachment   Kind = "VolumeAttachment"
	// MachineEvent is an events.k8s.io Event about a Machine: the kit
	// records one per state change naming the table and row, also for the
	// last step, whose status is never written (the Machine goes with it).
	MachineEvent Kind = "Event"
	// Eviction is a request to the Eviction API (pods/eviction) as the
	// audit log shows it: Code 201 evicted the Pod, 429 is a budget's
	// refusal. Obj names the Pod.
	Eviction Kind = "Eviction"
	Mark     Kind = "Mark"
)

// Op is what happened to the object.
type Op string

// Ops.
const (
	Added   Op = "Added"
	Updated Op = "Updated"
	Deleted Op = "Deleted"
	// Uncertain is a write the audit log shows answered with a server
	// error or not at all: it may or may not have been applied.
	Uncertain Op = "Uncertain"
)

// Event is one recorded change.
type Event struct {
	// Seq is the order the recorder received events in.
	Seq int
	// At is when the recorder received the event.
	At time.Time
	// RV is the object's resourceVersion (for Deleted: the revision of the
	// deletion), which orders events across kinds.
	RV uint64
	// Approx marks a deletion seen only as a tombstone after a re-list
	// (e.g. across an API server restart): it happened at or before RV,
	// which is the newest revision seen when it was noticed.
	Approx bool
	Kind   Kind
	Op     Op
	// Obj is the object after the change (for Deleted: its last state);
	// nil for a Mark.
	Obj client.Object
	// Note is the text of a Mark.
	Note string

	// From the audit log: when the API server received the request and
	// answered it, and the answer's code.
	Recv, Stage time.Time
	Code        int
	// Bracketed marks a write whose answer carried no resourceVersion: RV
	// is the newest revision answered before the request was received, so
	// its order against requests running at the same time is unknown.
	Bracketed bool
	// FromInformers marks a version the audit log lacks and the informers
	// saw (see Complete).
	FromInformers bool
	// Lost marks a removal neither the log nor the informers saw, of an
	// object the API server no longer holds (see LostRemovals).
	Lost bool
	// Applied marks an eviction placed at its own write, which the
	// informers saw: it evicted the Pod, whatever its answer.
	Applied bool
}

// Key is namespace/name (name for cluster-scoped objects).
func (e *Event) Key() string {
	if e.Obj == nil {
		return ""
	}
	return key(e.Obj)
}

func key(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// Timeline is a run's events in resourceVersion order.
type Timeline struct {
	// Start is when recording started (for relative times in excerpts).
	Start  time.Time
	Events []Event
	// Blind are the spans the recorder may have missed changes in (its
	// watches broke and re-listed, e.g. across an API server restart).
	Blind []Window
	// FromAudit: the events are kube-apiserver's audit log (ReadAuditLog),
	// every write, with no blind spans.
	FromAudit bool
}

// Window is a span of resourceVersions (From, To].
type Window struct {
	From, To uint64
}

// blindAt reports the blind window holding rv, if any.
func (t *Timeline) blindAt(rv uint64) (Window, bool) {
	for _, w := range t.Blind {
		if rv > w.From && rv <= w.To {
			return w, true
		}
	}
	return Window{}, false
}

// Sort orders the events by resourceVersion, then by arrival.
func (t *Timeline) Sort() {
	sort.SliceStable(t.Events, func(i, j int) bool {
		a, b := &t.Events[i], &t.Events[j]
		if a.RV != b.RV {
			return a.RV < b.RV
		}
		return a.Seq < b.Seq
	})
}

// ParseRV reads a resourceVersion as the etcd revision it is here.
func ParseRV(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}

// Format renders one event as a line of an excerpt.
func (t *Timeline) Format(e *Event) string {
	rel := e.At.Sub(t.Start).Seconds()
	head := fmt.Sprintf("%+8.3fs rv=%-7d", rel, e.RV)
	if e.Kind == Mark {
		return head + " ---- " + e.Note
	}
	approx := ""
	if e.Approx {
		approx = " (tombstone: deleted at or before)"
	}
	if e.Bracketed {
		approx = " (no resourceVersion in the answer: after rv)"
	}
	if e.FromInformers {
		approx = " (not in the audit log: seen by the informers)"
	}
	if e.Lost {
		approx = " (lost by kube-apiserver's kill: gone from the API server, at the latest revision it can have)"
	}
	if e.Kind == Eviction {
		return fmt.Sprintf("%s %-7s %s %s%s code=%d", head, "Create", e.Kind, e.Key(), approx, e.Code)
	}
	return fmt.Sprintf("%s %-7s %s %s%s %s", head, e.Op, e.Kind, e.Key(), approx, Describe(e.Obj))
}

// Describe summarises the fields of an object the invariants look at.
func Describe(o client.Object) string {
	var parts []string
	if ts := o.GetDeletionTimestamp(); ts != nil {
		parts = append(parts, "deleting")
	}
	if f := o.GetFinalizers(); len(f) > 0 {
		parts = append(parts, "finalizers="+strings.Join(f, ","))
	}
	switch x := o.(type) {
	case *clusterv1.Machine:
		parts = append(parts, "state="+x.Status.State)
		if lt := x.Status.LastTransition; lt != nil {
			parts = append(parts, fmt.Sprintf("row=%s/%s(%s %s→%s)", lt.Table, lt.Row, lt.Outcome, lt.From, lt.To))
		}
		if x.Status.NodeRef != nil {
			parts = append(parts, "node="+x.Status.NodeRef.Name)
		}
		var hooks []string
		for k := range x.Annotations {
			if strings.HasPrefix(k, clusterv1.PreDrainDeleteHookAnnotationPrefix) || strings.HasPrefix(k, clusterv1.PreTerminateDeleteHookAnnotationPrefix) {
				hooks = append(hooks, k[:strings.Index(k, ".")]+"/"+k[strings.LastIndex(k, "/")+1:])
			}
		}
		if len(hooks) > 0 {
			sort.Strings(hooks)
			parts = append(parts, "hooks="+strings.Join(hooks, ","))
		}
	case *corev1.Node:
		if x.Spec.Unschedulable {
			parts = append(parts, "cordoned")
		}
	case *corev1.Pod:
		parts = append(parts, "node="+x.Spec.NodeName, "phase="+string(x.Status.Phase))
		if podHealthy(x) {
			parts = append(parts, "ready")
		}
		if r := disruptionReason(x); r != "" {
			parts = append(parts, "DisruptionTarget="+r)
		}
	case *policyv1.PodDisruptionBudget:
		parts = append(parts, fmt.Sprintf("allowed=%d healthy=%d/%d", x.Status.DisruptionsAllowed, x.Status.CurrentHealthy, x.Status.DesiredHealthy))
	case *storagev1.VolumeAttachment:
		parts = append(parts, "node="+x.Spec.NodeName, fmt.Sprintf("attached=%t", x.Status.Attached))
	case *eventsv1.Event:
		parts = append(parts, fmt.Sprintf("about %s %s: %s", x.Regarding.Kind, x.Regarding.Name, x.Note))
	case *simv1.SimMachine:
		if x.Status.FailureReason != nil {
			parts = append(parts, "failureReason="+*x.Status.FailureReason)
		}
	}
	return strings.Join(parts, " ")
}

// eventRow is the row an Event of the kit names ("" for another Event):
// the kit sets the Event's action to the row id and lists the rows of its
// path in its note, "<from> → <to> (rows <id>, …): …".
func eventRow(e *eventsv1.Event) (machine, row string) {
	if e.Regarding.Kind != "Machine" || e.Action == "" {
		return "", ""
	}
	_, rows, ok := strings.Cut(e.Note, " (row")
	if !ok {
		return "", ""
	}
	rows, _, _ = strings.Cut(strings.TrimPrefix(strings.TrimPrefix(rows, "s"), " "), ")")
	if !slices.Contains(strings.Split(rows, ", "), e.Action) {
		return "", ""
	}
	return e.Regarding.Namespace + "/" + e.Regarding.Name, e.Action
}

// podHealthy is how the disruption controller counts a Pod: Ready and not
// being deleted.
func podHealthy(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// disruptionReason is the reason of the Pod's DisruptionTarget condition
// ("" without one). The Eviction API sets it, reason
// EvictionByEvictionAPI, before it deletes the Pod; a plain DELETE does not.
func disruptionReason(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return c.Reason
		}
	}
	return ""
}
