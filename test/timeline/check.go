package timeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// The invariants Check enforces.
const (
	InfraAfterDrain       = "infrastructure deleted only after the Node's evictable Pods are gone"
	InfraAfterVolumes     = "infrastructure deleted only after the Node's VolumeAttachments are gone"
	NodeAfterInfra        = "Node deleted only after the infrastructure and bootstrap objects are gone"
	FinalizerLast         = "finalizer removed only after the infrastructure and bootstrap objects are gone"
	NoDrainDuringPreDrain = "no cordon or eviction while a pre-drain hook is present"
	NoInfraDuringPreTerm  = "no infrastructure deletion while a pre-terminate hook is present"
	PDBRespected          = "no eviction beyond what a PodDisruptionBudget allows"
	EvictionOnly          = "no Pod deleted without the Eviction API except by a force-deletion row"
	StateForwardOnly      = "a Machine's persisted state never moves backwards in the deletion order"
	NothingLeaks          = "nothing leaks"
	CompleteRecord        = "the record is complete: every check verifiable"
	// evictionReason is the DisruptionTarget reason kube-apiserver writes
	// when the Eviction API evicts a Pod (k8s.io/api has no constant).
	evictionReason           = "EvictionByEvictionAPI"
	excerptLines             = 14
	describeStateUnknownRank = -1
)

// Invariants lists every invariant, in the order reports show them.
var Invariants = []string{InfraAfterDrain, InfraAfterVolumes, NodeAfterInfra, FinalizerLast, NoDrainDuringPreDrain,
	NoInfraDuringPreTerm, PDBRespected, EvictionOnly, StateForwardOnly, NothingLeaks, CompleteRecord}

// DrainAction is the registered action that drains a Node: a row running
// it with outcome done says the drain finished.
const DrainAction = "DrainNode"

// VolumeWaitAction is the registered action that waits for the Node's
// volumes to detach: a row running it with outcome done says they did.
const VolumeWaitAction = "WaitForVolumeDetach"

// Rules is what the checker takes from the tables.
type Rules struct {
	// States in the table set's order: the deletion order.
	States []string
	// DrainStates are the states whose rows drain the Node.
	DrainStates map[string]bool
	// DrainRows are the rows (table/id) that run DrainAction.
	DrainRows map[string]bool
	// VolumeStates are the states whose rows wait for volumes;
	// VolumeWaitRows the rows (table/id) that run VolumeWaitAction.
	VolumeStates   map[string]bool
	VolumeWaitRows map[string]bool
	// ForceDeleteRows are rows (table/id) allowed to delete Pods without
	// the Eviction API: rows running an action whose name says it forces.
	ForceDeleteRows map[string]bool
	// NodeKeptRows are rows (table/id) that remove the finalizer without
	// deleting the Node and without the Node being gone: a Node they leave
	// is their documented outcome (the Node deletion timeout, E08; a
	// Cluster going away), not a leak.
	NodeKeptRows map[string]string
	// Moves are the state changes each row (table/id) makes in the
	// tables, "from→to": a row seen making another one is not the row the
	// tables define, and excuses nothing.
	Moves map[string]map[string]bool
	// Terminal are the terminal states (the finalizer removed).
	Terminal map[string]bool
	// NodeTimeoutRows are the NodeKeptRows that keep the Node because the
	// wait of the state they leave from timed out (the Node deletion
	// timeout: E08, W09), with that state.
	NodeTimeoutRows map[string]string
}

// The actions NodeKeptRows are told by, and the fact that says a Node is
// gone (a row conditioned on it does not leave one behind).
const (
	removeFinalizerAction = "RemoveFinalizer"
	deleteNodeAction      = "DeleteNode"
	nodeFact              = "node"
)

// RulesFrom reads the rules from a loaded table set: the state order from
// set.States, the drain from the rows that run DrainAction, force deletion
// from rows whose actions are named Force*.
func RulesFrom(set *engine.TableSet) Rules {
	r := Rules{DrainStates: map[string]bool{}, DrainRows: map[string]bool{}, ForceDeleteRows: map[string]bool{}, NodeKeptRows: map[string]string{},
		VolumeStates: map[string]bool{}, VolumeWaitRows: map[string]bool{}, Moves: map[string]map[string]bool{}, Terminal: map[string]bool{},
		NodeTimeoutRows: map[string]string{}}
	for _, s := range set.States {
		r.States = append(r.States, s.Name)
		if s.Terminal {
			r.Terminal[s.Name] = true
		}
	}
	for _, t := range set.Tables {
		for _, row := range t.Rows {
			for _, a := range row.Do {
				id := t.Name + "/" + row.ID
				if a == DrainAction {
					r.DrainRows[id] = true
					for _, s := range row.FromStates() {
						r.DrainStates[s.Name] = true
					}
				}
				if a == VolumeWaitAction {
					r.VolumeWaitRows[id] = true
					for _, s := range row.FromStates() {
						r.VolumeStates[s.Name] = true
					}
				}
				if strings.HasPrefix(a, "Force") {
					r.ForceDeleteRows[id] = true
				}
			}
			id := t.Name + "/" + row.ID
			r.Moves[id] = map[string]bool{}
			for _, s := range row.FromStates() {
				to := row.Then.State
				if to == "" {
					to = s.Name
				}
				r.Moves[id][s.Name+"→"+to] = true
			}
			if keepsNode(row) {
				r.NodeKeptRows[id] = row.Trigger
				for _, s := range row.FromStates() {
					if s.Wait != nil && s.Wait.TimedOut != "" && slices.ContainsFunc(row.When, func(m engine.Match) bool {
						return m.Fact == s.Wait.TimedOut && slices.Equal(m.Values, []string{"true"})
					}) {
						r.NodeTimeoutRows[id] = s.Name
					}
				}
			}
		}
	}
	return r
}

// keepsNode: the row removes the finalizer, deletes no Node, and does not
// depend on the Node being gone.
func keepsNode(row *engine.Row) bool {
	if !slices.Contains(row.Do, removeFinalizerAction) || slices.Contains(row.Do, deleteNodeAction) {
		return false
	}
	for _, m := range row.When {
		if m.Fact == nodeFact {
			return false
		}
	}
	return true
}

func (r Rules) rank(state string) int {
	for i, s := range r.States {
		if s == state {
			return i
		}
	}
	return describeStateUnknownRank
}

// lastRank is the position of the last of states in the order.
func (r Rules) lastRank(states map[string]bool) int {
	out := describeStateUnknownRank
	for s := range states {
		out = max(out, r.rank(s))
	}
	return out
}

// Violation is one broken invariant.
type Violation struct {
	Invariant string
	Object    string
	Message   string
	// RV is where in the timeline it broke.
	RV uint64
	// Excerpt is the timeline around the violation: events of the objects
	// involved up to and including the one that broke it.
	Excerpt []string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s: %s\n    %s", v.Invariant, v.Object, v.Message, strings.Join(v.Excerpt, "\n    "))
}

// Report is the result of Check.
type Report struct {
	Violations []Violation
	// Notes say what was allowed and by which row (a skipped drain), and
	// what could not be verified (an ordering lost to a re-list).
	Notes []string
	// Leaked are objects left at the end.
	Leaked []string
	// KeptNodes are Nodes left at the end by a row that keeps the Node
	// (Rules.NodeKeptRows), as the Machine's last Event names it, or, with
	// no Event of its last step, as the record shows the Node deletion
	// timed out (Rules.NodeTimeoutRows): the row's outcome, not a leak (a
	// note each names the row).
	KeptNodes []string
	// AwaitingGC are bootstrap Secrets whose owner is gone: the garbage
	// collector removes them, and these control planes run none.
	AwaitingGC []string
	// Counts of what was checked. Refusals are evictions a budget refused
	// (429 in the audit log); HookHolds the hooks a deleting Machine was
	// seen waiting on (pre-drain and pre-terminate, one per Machine and
	// kind); VolumeWaits the Machines seen waiting for volumes while a
	// VolumeAttachment of their Node was still there.
	Evictions, Refusals, InfraDeletions, FinalizerRemovals, Cordons, MachinesDeleted, HookHolds, VolumeWaits int
	// Unverifiable counts checks whose outcome the record cannot decide: a
	// failure inside a blind window of the informers, an ordering lost to
	// a re-list, an order between requests the API server ran at the same
	// time. A note each; a run passes only with none (see Failed).
	Unverifiable int
}

// Failed reports whether any invariant was broken or any check could not
// be decided.
func (r *Report) Failed() bool { return len(r.Violations) > 0 || r.Unverifiable > 0 }

// ByInvariant counts violations per invariant.
func (r *Report) ByInvariant() map[string]int {
	out := map[string]int{}
	for _, v := range r.Violations {
		out[v.Invariant]++
	}
	return out
}

// Check replays the timeline and checks every invariant; with final, it
// also checks that nothing the Machines owned is left.
func Check(t *Timeline, rules Rules, final bool) *Report {
	c := &checker{t: t, rules: rules, rep: &Report{},
		world:       map[Kind]map[string]client.Object{},
		gone:        map[Kind]map[string]*Event{},
		machineOf:   map[string]string{},
		nodeOwner:   map[string]string{},
		lastState:   map[string]int{},
		history:     map[string][]transition{},
		lastMach:    map[string]*clusterv1.Machine{},
		involved:    map[string][]int{},
		machineSet:  map[string]bool{},
		blind:       map[string]bool{},
		lastRow:     map[string]string{},
		holds:       map[string]bool{},
		volWaits:    map[string]bool{},
		evicted:     map[string]bool{},
		removedFrom: map[string]*clusterv1.Machine{},
		removedAt:   map[string]time.Time{},
	}
	c.eventsOf = map[string][]int{}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Approx && e.Op == Deleted {
			c.blind[ref(e.Kind, e.Key())] = true
		}
		if e.Kind != Mark {
			for _, r := range refsOf(e) {
				c.eventsOf[r] = append(c.eventsOf[r], i)
			}
		}
	}
	for i := range t.Events {
		c.step(i)
	}
	if final {
		c.leaks()
	}
	return c.rep
}

type transition struct {
	row, from, to, outcome string
	rv                     uint64
}

type checker struct {
	t     *Timeline
	rules Rules
	rep   *Report

	world map[Kind]map[string]client.Object
	gone  map[Kind]map[string]*Event // last deletion event per object
	// machineOf maps "Kind/ns/name" of a provider object to its Machine.
	machineOf map[string]string
	// nodeOwner maps a Node name to the Machine whose nodeRef names it.
	nodeOwner map[string]string
	lastState map[string]int
	history   map[string][]transition
	lastMach  map[string]*clusterv1.Machine
	// involved indexes event positions by object (Kind/key) for excerpts.
	involved   map[string][]int
	machineSet map[string]bool
	// blind marks objects whose deletion was seen only as a tombstone:
	// while they look present, they may already have been gone.
	blind map[string]bool
	// lastRow is the row id the newest kit Event about a Machine names.
	lastRow map[string]string
	// holds and volWaits are the hook holds and volume waits seen.
	holds, volWaits map[string]bool
	// eventsOf indexes every event by the object it is about.
	eventsOf map[string][]int
	// evicted are the Pods an eviction (201) was checked for.
	evicted map[string]bool
	// removedFrom is each removed Machine's last version before its
	// removal, removedAt when the removal was answered (or seen).
	removedFrom map[string]*clusterv1.Machine
	removedAt   map[string]time.Time
}

// refsOf are the objects an event is about: an eviction is about its Pod.
func refsOf(e *Event) []string {
	if e.Kind == Eviction {
		return []string{ref(Eviction, e.Key()), ref(Pod, e.Key())}
	}
	return []string{ref(e.Kind, e.Key())}
}

// keptBy finds the row (table/id) that keeps the Node among NodeKeptRows
// by its id, as an Event names it (ids are unique within a set), and its
// trigger; "" when it is none of them.
func (r Rules) keptBy(id string) (row, why string) {
	for row, why := range r.NodeKeptRows {
		if id != "" && strings.HasSuffix(row, "/"+id) {
			return row, why
		}
	}
	return "", ""
}

// ends reports whether the row (by id, as an Event names it) ends the
// object's life in the tables: every state change it makes is into a
// terminal state.
func (r Rules) ends(id string) bool {
	for row, moves := range r.Moves {
		if id == "" || !strings.HasSuffix(row, "/"+id) || len(moves) == 0 {
			continue
		}
		for m := range moves {
			if _, to, _ := strings.Cut(m, "→"); !r.Terminal[to] {
				return false
			}
		}
		return true
	}
	return false
}

// timeoutRowsFrom are the NodeTimeoutRows that leave from state.
func (r Rules) timeoutRowsFrom(state string) []string {
	var rows []string
	for row, from := range r.NodeTimeoutRows {
		if from == state {
			rows = append(rows, row)
		}
	}
	sort.Strings(rows)
	return rows
}

func ref(kind Kind, k string) string { return string(kind) + "/" + k }

func (c *checker) get(kind Kind, k string) client.Object { return c.world[kind][k] }

func (c *checker) step(i int) {
	e := &c.t.Events[i]
	if e.Kind == Mark || e.Op == Uncertain {
		return
	}
	k := e.Key()
	for _, r := range refsOf(e) {
		c.involved[r] = append(c.involved[r], i)
	}
	prev := c.get(e.Kind, k)

	switch e.Kind {
	case Machine:
		c.machine(i, prev, e.Obj.(*clusterv1.Machine))
	case SimMachine:
		c.infra(i, prev)
	case Node:
		c.node(i, prev, e.Obj.(*corev1.Node))
	case Pod:
		c.pod(i, prev, e.Obj.(*corev1.Pod))
	case MachineEvent:
		if mk, row := eventRow(e.Obj.(*eventsv1.Event)); row != "" {
			c.lastRow[mk] = row
		}
	case Eviction:
		c.eviction(i)
		return
	}

	if c.world[e.Kind] == nil {
		c.world[e.Kind] = map[string]client.Object{}
		c.gone[e.Kind] = map[string]*Event{}
	}
	if e.Op == Deleted {
		delete(c.world[e.Kind], k)
		c.gone[e.Kind][k] = e
	} else {
		c.world[e.Kind][k] = e.Obj
		delete(c.gone[e.Kind], k)
	}
}

func (c *checker) machine(i int, prev client.Object, m *clusterv1.Machine) {
	e := &c.t.Events[i]
	k := key(m)
	c.machineSet[k] = true
	c.lastMach[k] = m
	ns := m.Namespace
	c.machineOf[ref(SimMachine, ns+"/"+m.Spec.InfrastructureRef.Name)] = k
	if m.Spec.Bootstrap.ConfigRef != nil {
		c.machineOf[ref(SimBootstrapConfig, ns+"/"+m.Spec.Bootstrap.ConfigRef.Name)] = k
	}
	if m.Status.NodeRef != nil {
		c.nodeOwner[m.Status.NodeRef.Name] = k
	}
	if lt := m.Status.LastTransition; lt != nil {
		tr := transition{row: lt.Table + "/" + lt.Row, from: lt.From, to: lt.To, outcome: lt.Outcome, rv: e.RV}
		h := c.history[k]
		if len(h) == 0 || h[len(h)-1].row != tr.row || h[len(h)-1].from != tr.from || h[len(h)-1].to != tr.to || h[len(h)-1].outcome != tr.outcome {
			c.history[k] = append(h, tr)
		}
	}

	// The persisted state never moves backwards once deletion started.
	if m.DeletionTimestamp != nil && m.Status.State != "" {
		r := c.rules.rank(m.Status.State)
		last, seen := c.lastState[k]
		switch {
		case r == describeStateUnknownRank:
			c.violate(i, StateForwardOnly, Machine, k, fmt.Sprintf("state %q is not a state of the tables", m.Status.State))
		case seen && r < last:
			c.violate(i, StateForwardOnly, Machine, k, fmt.Sprintf("state moved back from %s to %s", c.rules.States[last], m.Status.State))
		}
		if !seen || r > last {
			c.lastState[k] = r
		}
	}

	// Finalizer removal (an update without it, or the deletion itself).
	had := prev != nil && hasString(prev.GetFinalizers(), clusterv1.MachineFinalizer)
	has := e.Op != Deleted && hasString(m.Finalizers, clusterv1.MachineFinalizer)
	if had && !has {
		c.rep.FinalizerRemovals++
		for _, kind := range []Kind{SimMachine, SimBootstrapConfig} {
			name := m.Spec.InfrastructureRef.Name
			if kind == SimBootstrapConfig {
				if m.Spec.Bootstrap.ConfigRef == nil {
					continue
				}
				name = m.Spec.Bootstrap.ConfigRef.Name
			}
			pk := ns + "/" + name
			if (c.get(kind, pk) != nil && c.blind[ref(kind, pk)]) || (c.get(kind, pk) == nil && c.gone[kind][pk] != nil && c.gone[kind][pk].Approx) {
				c.unverifiable("%s: %s %s was seen gone only after a re-list; its deletion could not be ordered against the finalizer removal", k, kind, pk)
			} else if c.get(kind, pk) != nil {
				c.violate(i, FinalizerLast, Machine, k, fmt.Sprintf("the finalizer went while %s %s still exists", kind, pk), ref(kind, pk))
			}
		}
	}
	if e.Op == Deleted && m.DeletionTimestamp != nil {
		c.rep.MachinesDeleted++
	}
	if e.Op == Deleted {
		if pm, ok := prev.(*clusterv1.Machine); ok {
			c.removedFrom[k] = pm
		}
		c.removedAt[k] = e.At
		if !e.Stage.IsZero() {
			c.removedAt[k] = e.Stage
		}
	}
	if m.DeletionTimestamp != nil && e.Op != Deleted {
		c.exercised(k, m)
	}
}

// exercised records the waits a deleting Machine shows: on a hook it
// still carries, on volumes its Node still has attached.
func (c *checker) exercised(k string, m *clusterv1.Machine) {
	switch m.Status.State {
	case "WaitingForPreDrainHook":
		if len(hookNames(m, clusterv1.PreDrainDeleteHookAnnotationPrefix)) > 0 && !c.holds[k+"/pre-drain"] {
			c.holds[k+"/pre-drain"] = true
			c.rep.HookHolds++
		}
	case "WaitingForPreTerminateHook":
		if len(hookNames(m, clusterv1.PreTerminateDeleteHookAnnotationPrefix)) > 0 && !c.holds[k+"/pre-terminate"] {
			c.holds[k+"/pre-terminate"] = true
			c.rep.HookHolds++
		}
	}
	if c.rules.VolumeStates[m.Status.State] && m.Status.NodeRef != nil && !c.volWaits[k] && len(c.attachments(m.Status.NodeRef.Name)) > 0 {
		c.volWaits[k] = true
		c.rep.VolumeWaits++
	}
}

// attachments are the VolumeAttachments of the Node attached now (one
// being deleted is attached until its attacher says otherwise).
func (c *checker) attachments(node string) []string {
	var out []string
	for k, o := range c.world[VolumeAttachment] {
		if va := o.(*storagev1.VolumeAttachment); va.Spec.NodeName == node && va.Status.Attached {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// infra checks the start of an infrastructure object's deletion.
func (c *checker) infra(i int, prev client.Object) {
	e := &c.t.Events[i]
	if prev != nil && prev.GetDeletionTimestamp() != nil {
		return
	}
	if e.Op != Deleted && e.Obj.GetDeletionTimestamp() == nil {
		return
	}
	k := e.Key()
	mk := c.machineOf[ref(SimMachine, k)]
	if e.Approx {
		// Seen only as a tombstone after a re-list: when it started is
		// unknown, so nothing can be checked against it, and it does not
		// count as exercised.
		c.unverifiable("infrastructure %s of %s was seen deleted only after a re-list", k, mk)
		return
	}
	c.rep.InfraDeletions++
	m := c.lastMach[mk]
	if m == nil {
		return
	}
	if hooks := hookNames(m, clusterv1.PreTerminateDeleteHookAnnotationPrefix); len(hooks) > 0 {
		c.violate(i, NoInfraDuringPreTerm, SimMachine, k, fmt.Sprintf("deleted while Machine %s has pre-terminate hooks %v", mk, hooks), ref(Machine, mk))
	}
	if m.Status.NodeRef == nil {
		return
	}
	node := m.Status.NodeRef.Name
	if vas := c.attachments(node); len(vas) > 0 {
		if tr, ok := c.leftStates(mk, c.rules.VolumeStates); ok && !c.rules.VolumeWaitRows[tr.row] {
			c.note("%s: infrastructure deleted with VolumeAttachments %v on Node %s: the volume wait was skipped by row %s (%s→%s)", mk, vas, node, tr.row, tr.from, tr.to)
		} else {
			why := "no recorded row completed or skipped the volume wait"
			if ok {
				why = "volume wait row " + tr.row + " reported done"
			}
			refs := []string{ref(Machine, mk)}
			for _, v := range vas {
				refs = append(refs, ref(VolumeAttachment, v))
			}
			c.violate(i, InfraAfterVolumes, SimMachine, k, fmt.Sprintf("VolumeAttachments %v still on Node %s: %s", vas, node, why), refs...)
		}
	}
	var left []string
	for _, p := range c.evictablePods(node) {
		if c.blind[ref(Pod, p)] {
			c.unverifiable("%s: Pod %s was seen gone only after a re-list; its deletion could not be ordered against the infrastructure deletion", mk, p)
			continue
		}
		left = append(left, p)
	}
	if len(left) == 0 {
		return
	}
	// Pods remain: only a row that skipped the drain allows that.
	if tr, ok := c.leftStates(mk, c.rules.DrainStates); ok && !c.rules.DrainRows[tr.row] {
		c.note("%s: infrastructure deleted with %d Pods on Node %s: the drain was skipped by row %s (%s→%s)", mk, len(left), node, tr.row, tr.from, tr.to)
		return
	} else if ok {
		c.violate(i, InfraAfterDrain, SimMachine, k, fmt.Sprintf("Pods %v still on Node %s although drain row %s reported done", left, node, tr.row), podRefs(left, Machine, mk)...)
		return
	}
	c.violate(i, InfraAfterDrain, SimMachine, k, fmt.Sprintf("Pods %v still on Node %s and no recorded row completed or skipped the drain", left, node), podRefs(left, Machine, mk)...)
}

// leftStates finds the transition that took the Machine past states
// (from at or before the last of them to after it). A transition the
// tables do not define (a row moving between other states than its own)
// is not found: it excuses nothing.
func (c *checker) leftStates(mk string, states map[string]bool) (transition, bool) {
	dr := c.rules.lastRank(states)
	for _, tr := range c.history[mk] {
		from, to := c.rules.rank(tr.from), c.rules.rank(tr.to)
		if from >= 0 && from <= dr && to > dr {
			if c.rules.Moves != nil && !c.rules.Moves[tr.row][tr.from+"→"+tr.to] {
				c.note("%s: row %s went %s→%s, which the tables do not define", mk, tr.row, tr.from, tr.to)
				return transition{}, false
			}
			return tr, true
		}
	}
	return transition{}, false
}

func podRefs(names []string, extra Kind, extraKey string) []string {
	out := []string{ref(extra, extraKey)}
	for _, n := range names {
		out = append(out, ref(Pod, n))
	}
	return out
}

// evictablePods are the Pods on the Node the drain must remove: not
// finished, not a mirror Pod, not a DaemonSet's, not labelled to be skipped.
func (c *checker) evictablePods(node string) []string {
	var out []string
	for k, o := range c.world[Pod] {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName != node || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror || p.Labels[clusterv1.PodDrainLabel] == clusterv1.PodDrainLabelValueSkip {
			continue
		}
		if ctl := metav1.GetControllerOf(p); ctl != nil && ctl.Kind == "DaemonSet" {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *checker) node(i int, prev client.Object, n *corev1.Node) {
	e := &c.t.Events[i]
	if e.Op == Deleted || n.DeletionTimestamp != nil {
		if prev != nil && prev.GetDeletionTimestamp() == nil {
			c.nodeDeleted(i, n.Name)
		}
		return
	}
	if !n.Spec.Unschedulable || (prev != nil && prev.(*corev1.Node).Spec.Unschedulable) {
		return
	}
	c.rep.Cordons++
	mk := c.nodeOwner[n.Name]
	if m := c.currentMachine(mk); m != nil {
		if hooks := hookNames(m, clusterv1.PreDrainDeleteHookAnnotationPrefix); len(hooks) > 0 {
			c.violate(i, NoDrainDuringPreDrain, Node, n.Name, fmt.Sprintf("cordoned while Machine %s has pre-drain hooks %v", mk, hooks), ref(Machine, mk))
		}
	}
}

// nodeDeleted checks the start of a Node's deletion: the Machine's
// infrastructure and bootstrap objects go first (only the row that deletes
// the Node, from the state after the bootstrap deletion, deletes it).
func (c *checker) nodeDeleted(i int, node string) {
	mk := c.nodeOwner[node]
	m := c.currentMachine(mk)
	if m == nil || m.DeletionTimestamp == nil {
		return
	}
	names := map[Kind]string{SimMachine: m.Spec.InfrastructureRef.Name}
	if m.Spec.Bootstrap.ConfigRef != nil {
		names[SimBootstrapConfig] = m.Spec.Bootstrap.ConfigRef.Name
	}
	for _, kind := range []Kind{SimMachine, SimBootstrapConfig} {
		name, ok := names[kind]
		if !ok {
			continue
		}
		pk := m.Namespace + "/" + name
		if c.get(kind, pk) != nil && c.blind[ref(kind, pk)] {
			c.unverifiable("%s: %s %s was seen gone only after a re-list; its deletion could not be ordered against the deletion of Node %s", mk, kind, pk, node)
		} else if c.get(kind, pk) != nil {
			c.violate(i, NodeAfterInfra, Node, node, fmt.Sprintf("deleted while %s %s of Machine %s still exists", kind, pk, mk), ref(kind, pk), ref(Machine, mk))
		}
	}
}

// nodeDeletionGaveUp reports whether the record shows the conditions of
// the rows that keep the Node when the Node deletion times out
// (Rules.NodeTimeoutRows: E08, W09) at the removal of the Machine's
// finalizer: its last version before the removal is in the state those
// rows leave from (DeletingNode), the wait is armed (a Node deletion was
// attempted: status.deletion.nodeDeletionStartTime), and its timeout
// (spec.deletion.nodeDeletionTimeoutSeconds, above 0: 0 retries forever)
// had passed since the deletionTimestamp by the time the removal was
// answered. (An outage of the workload cluster only makes that time later,
// never earlier.) The fields are those the DeletingNode wait of the tables
// names.
func (c *checker) nodeDeletionGaveUp(mk string) (why string, rows []string, ok bool) {
	m, at := c.removedFrom[mk], c.removedAt[mk]
	if m == nil || m.DeletionTimestamp == nil || at.IsZero() {
		return "", nil, false
	}
	rows = c.rules.timeoutRowsFrom(m.Status.State)
	timeout := time.Duration(ptr.Deref(m.Spec.Deletion.NodeDeletionTimeoutSeconds, 0)) * time.Second
	start := m.Status.Deletion.NodeDeletionStartTime
	if len(rows) == 0 || start == nil || timeout <= 0 || at.Before(m.DeletionTimestamp.Add(timeout)) {
		return "", nil, false
	}
	return fmt.Sprintf("in %s, a Node deletion attempted at %s, and the finalizer went %s after the deletionTimestamp, past the Node deletion timeout of %s",
		m.Status.State, start.UTC().Format(time.RFC3339), at.Sub(m.DeletionTimestamp.Time).Round(time.Millisecond), timeout), rows, true
}

// currentMachine is the Machine as it is at this point of the timeline.
func (c *checker) currentMachine(mk string) *clusterv1.Machine {
	if mk == "" {
		return nil
	}
	if o := c.get(Machine, mk); o != nil {
		return o.(*clusterv1.Machine)
	}
	return nil
}

func (c *checker) pod(i int, prev client.Object, p *corev1.Pod) {
	e := &c.t.Events[i]
	wasDeleting := prev != nil && prev.GetDeletionTimestamp() != nil
	if wasDeleting || (e.Op != Deleted && p.DeletionTimestamp == nil) {
		return
	}
	if e.Op == Deleted && prev == nil {
		return // never seen alive in this run
	}
	k := key(p)
	if c.evicted[k] {
		return // its eviction was checked (see eviction)
	}
	evicted := disruptionReason(p) == evictionReason
	mk := c.nodeOwner[p.Spec.NodeName]
	m := c.currentMachine(mk)
	if !evicted {
		row := ""
		if m != nil && m.Status.LastTransition != nil {
			row = m.Status.LastTransition.Table + "/" + m.Status.LastTransition.Row
		}
		if c.rules.ForceDeleteRows[row] {
			c.note("%s: Pod %s deleted without the Eviction API by force-deletion row %s", mk, k, row)
		} else if e.Approx {
			c.unverifiable("Pod %s was seen gone only after a re-list; how it was deleted is unknown", k)
		} else {
			c.violate(i, EvictionOnly, Pod, k, fmt.Sprintf("deleted without the Eviction API (no DisruptionTarget=%s) on Node %s (Machine %q, row %q)", evictionReason, p.Spec.NodeName, mk, row), ref(Machine, mk))
		}
		return
	}
	if c.t.FromAudit {
		// Evicted by a request whose answer was lost (see eviction): it
		// is checked here, at the first version that shows it.
		c.note("Pod %s: evicted by a request cut short; its budgets are checked at rv %d", k, e.RV)
	}
	c.rep.Evictions++
	if m != nil {
		if hooks := hookNames(m, clusterv1.PreDrainDeleteHookAnnotationPrefix); len(hooks) > 0 {
			c.violate(i, NoDrainDuringPreDrain, Pod, k, fmt.Sprintf("evicted while Machine %s has pre-drain hooks %v", mk, hooks), ref(Machine, mk))
		}
	}
	c.budgets(i, p)
}

// eviction checks a request to the Eviction API from the audit log. No
// attempt, whatever its answer, may come while a pre-drain hook is
// present. A refusal (429) is counted; an eviction (201) must leave every
// budget its healthy Pods, and the Pod then counts as being deleted by the
// Eviction API (kube-apiserver's own writes of the condition and the
// deletion are not audited requests). An attempt cut short (another
// answer) may have written the Pod: if a later version shows it evicted,
// pod checks the budgets there.
func (c *checker) eviction(i int) {
	e := &c.t.Events[i]
	k := e.Key()
	o := c.get(Pod, k)
	if o == nil {
		c.note("eviction of Pod %s (answer %d), which the record does not hold", k, e.Code)
		return
	}
	p := o.(*corev1.Pod).DeepCopy()
	mk := c.nodeOwner[p.Spec.NodeName]
	if m := c.currentMachine(mk); m != nil {
		if hooks := hookNames(m, clusterv1.PreDrainDeleteHookAnnotationPrefix); len(hooks) > 0 {
			c.violate(i, NoDrainDuringPreDrain, Eviction, k, fmt.Sprintf("eviction (answer %d) while Machine %s has pre-drain hooks %v", e.Code, mk, hooks), ref(Machine, mk), ref(Pod, k))
		}
	}
	switch {
	case e.Code == 429:
		c.rep.Refusals++
		return
	case e.Code == 201 || e.Applied:
	default:
		c.note("eviction of Pod %s cut short (answer %d)", k, e.Code)
		return
	}
	c.rep.Evictions++
	c.evicted[k] = true
	if p.DeletionTimestamp == nil {
		c.budgets(i, p)
		now := metav1.NewTime(e.Stage)
		p.DeletionTimestamp = &now
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: evictionReason})
		c.world[Pod][k] = p
	}
}

// budgets checks that, without the evicted Pod, every budget selecting it
// still has the healthy Pods it asks for.
func (c *checker) budgets(i int, evicted *corev1.Pod) {
	for pk, o := range c.world[PDB] {
		pdb := o.(*policyv1.PodDisruptionBudget)
		if pdb.Namespace != evicted.Namespace || pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(evicted.Labels)) {
			continue
		}
		expected, healthy := 0, 0
		for k, po := range c.world[Pod] {
			p := po.(*corev1.Pod)
			if p.Namespace != pdb.Namespace || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				expected++
			}
			if k != key(evicted) && podHealthy(p) {
				healthy++
			}
		}
		want, ok := desiredHealthy(pdb, expected)
		if !ok {
			c.note("PDB %s: only integer minAvailable/maxUnavailable are checked", pk)
			continue
		}
		if healthy < want {
			refs := []string{ref(PDB, pk)}
			for k, po := range c.world[Pod] {
				if p := po.(*corev1.Pod); p.Namespace == pdb.Namespace && sel.Matches(labels.Set(p.Labels)) {
					refs = append(refs, ref(Pod, k))
				}
			}
			sort.Strings(refs[1:])
			c.violate(i, PDBRespected, Pod, key(evicted), fmt.Sprintf("evicted leaving %d healthy Pods of PDB %s, which needs %d", healthy, pk, want), refs...)
		}
	}
}

func desiredHealthy(pdb *policyv1.PodDisruptionBudget, expected int) (int, bool) {
	switch {
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		return pdb.Spec.MinAvailable.IntValue(), true
	case pdb.Spec.MaxUnavailable != nil && pdb.Spec.MaxUnavailable.Type == intstr.Int:
		return max(0, expected-pdb.Spec.MaxUnavailable.IntValue()), true
	}
	return 0, false
}

// leaks reports what the deleted Machines left behind.
func (c *checker) leaks() {
	nodes := map[string]bool{}
	for mk, m := range c.lastMach {
		if c.get(Machine, mk) != nil {
			c.rep.Leaked = append(c.rep.Leaked, "Machine "+mk)
		}
		if m.Status.NodeRef != nil {
			nodes[m.Status.NodeRef.Name] = true
		}
		for kind, name := range map[Kind]string{SimMachine: m.Spec.InfrastructureRef.Name} {
			if c.get(kind, m.Namespace+"/"+name) != nil {
				c.rep.Leaked = append(c.rep.Leaked, string(kind)+" "+m.Namespace+"/"+name)
			}
		}
		if m.Spec.Bootstrap.ConfigRef != nil {
			if bk := m.Namespace + "/" + m.Spec.Bootstrap.ConfigRef.Name; c.get(SimBootstrapConfig, bk) != nil {
				c.rep.Leaked = append(c.rep.Leaked, "SimBootstrapConfig "+bk)
			}
		}
	}
	for n := range nodes {
		if c.get(Node, n) == nil {
			continue
		}
		mk := c.nodeOwner[n]
		if row, why := c.rules.keptBy(c.lastRow[mk]); why != "" && c.get(Machine, mk) == nil {
			c.rep.KeptNodes = append(c.rep.KeptNodes, n)
			c.note("%s: Node %s left by row %s (%s), as the row says", mk, n, row, why)
			continue
		}
		// The last step's Event is written after the finalizer went (the
		// Machine goes with it, so its status never names that row): an
		// operator killed in between, or an Event create that failed,
		// leaves the record without it. Unless an Event names a row that
		// ended the Machine, the record decides by what those rows ask.
		if why, rows, ok := c.nodeDeletionGaveUp(mk); ok && c.get(Machine, mk) == nil && !c.rules.ends(c.lastRow[mk]) {
			c.rep.KeptNodes = append(c.rep.KeptNodes, n)
			c.note("%s: Node %s left as rows %v do (no Event names the Machine's last row): %s", mk, n, rows, why)
			continue
		}
		c.rep.Leaked = append(c.rep.Leaked, "Node "+n)
	}
	for k, o := range c.world[VolumeAttachment] {
		if nodes[o.(*storagev1.VolumeAttachment).Spec.NodeName] {
			c.rep.Leaked = append(c.rep.Leaked, "VolumeAttachment "+k)
		}
	}
	// Pods on the Nodes of the deleted Machines: one the drain must evict
	// is leaked, unless a row skipped the drain; one it skips awaits the
	// Pod garbage collector once its Node is gone (on a Node still there,
	// the Node is what leaked).
	for n := range nodes {
		if c.get(Node, n) != nil {
			continue
		}
		evictable := map[string]bool{}
		if tr, ok := c.leftStates(c.nodeOwner[n], c.rules.DrainStates); !ok || c.rules.DrainRows[tr.row] {
			for _, k := range c.evictablePods(n) {
				evictable[k] = true
			}
		}
		for k, o := range c.world[Pod] {
			switch {
			case o.(*corev1.Pod).Spec.NodeName != n:
			case evictable[k]:
				c.rep.Leaked = append(c.rep.Leaked, "Pod "+k)
			default:
				c.rep.AwaitingGC = append(c.rep.AwaitingGC, "Pod "+k)
			}
		}
	}
	// A bootstrap Secret's owner is the SimBootstrapConfig with the UID of
	// its controller reference: a namesake created after the owner went (a
	// Machine of the same name later in the run) neither keeps it alive nor
	// makes it a leak.
	bootstrapByUID := map[types.UID]string{}
	for i := range c.t.Events {
		if e := &c.t.Events[i]; e.Kind == SimBootstrapConfig && e.Obj != nil {
			bootstrapByUID[e.Obj.GetUID()] = e.Key()
		}
	}
	for k, o := range c.world[Secret] {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.Kind != "SimBootstrapConfig" {
			continue
		}
		bk, seen := bootstrapByUID[owner.UID]
		if !seen || c.machineOf[ref(SimBootstrapConfig, bk)] == "" {
			continue
		}
		if live := c.get(SimBootstrapConfig, bk); live != nil && live.GetUID() == owner.UID {
			c.rep.Leaked = append(c.rep.Leaked, "Secret "+k)
		} else {
			c.rep.AwaitingGC = append(c.rep.AwaitingGC, "Secret "+k)
		}
	}
	sort.Strings(c.rep.Leaked)
	sort.Strings(c.rep.KeptNodes)
	sort.Strings(c.rep.AwaitingGC)
	if len(c.rep.Leaked) > 0 {
		c.rep.Violations = append(c.rep.Violations, Violation{Invariant: NothingLeaks, Object: "end of run",
			Message: strings.Join(c.rep.Leaked, ", ")})
	}
}

func (c *checker) note(format string, args ...any) {
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf(format, args...))
}

// unverifiable records a check the record cannot decide.
func (c *checker) unverifiable(format string, args ...any) {
	c.rep.Unverifiable++
	c.note("unverifiable: "+format, args...)
}

// violate records a violation with an excerpt of the events of the object
// and of the others named (Kind/key refs), up to event i.
func (c *checker) violate(i int, invariant string, kind Kind, k, msg string, others ...string) {
	if w, ok := c.t.blindAt(c.t.Events[i].RV); ok {
		// The state it was checked against may be stale: changes in the
		// window were not all seen.
		c.unverifiable("rv %d in a window the recorder could not see, rv %d..%d: %s: %s %s: %s", c.t.Events[i].RV, w.From, w.To, invariant, kind, k, msg)
		return
	}
	refs := append([]string{ref(kind, k)}, others...)
	var idx []int
	for _, r := range refs {
		idx = append(idx, c.involved[r]...)
	}
	sort.Ints(idx)
	// A request without a resourceVersion of its own is placed after the
	// writes answered before it began: a write of the objects involved
	// that ran at the same time may have been applied before or after it.
	// (A budget's status is not what any check reads: its writes do not
	// count.)
	for _, j := range c.involvedAll(refs) {
		a, b := &c.t.Events[i], &c.t.Events[j]
		if j != i && b.Kind != PDB && (a.Bracketed || b.Bracketed) && concurrent(a, b) {
			c.unverifiable("%s: %s %s: %s, but it ran at the same time as %s %s %s (rv %d): their order is unknown", invariant, kind, k, msg, b.Op, b.Kind, b.Key(), b.RV)
			return
		}
	}
	var lines []string
	last := -1
	for _, j := range idx {
		if j > i || j == last {
			continue
		}
		last = j
		lines = append(lines, c.t.Format(&c.t.Events[j]))
	}
	// The driver's marks in that span (kills, restarts).
	if len(lines) > excerptLines {
		lines = lines[len(lines)-excerptLines:]
	}
	lines[len(lines)-1] += "   <== " + invariant
	c.rep.Violations = append(c.rep.Violations, Violation{Invariant: invariant, Object: string(kind) + " " + k, Message: msg, Excerpt: lines, RV: c.t.Events[i].RV})
}

// involvedAll are all the events (before and after) of the refs.
func (c *checker) involvedAll(refs []string) []int {
	var out []int
	for _, r := range refs {
		for _, j := range c.eventsOf[r] {
			out = append(out, j)
		}
	}
	return out
}

func hookNames(m *clusterv1.Machine, prefix string) []string {
	var out []string
	for k := range m.Annotations {
		if strings.HasPrefix(k, prefix) {
			out = append(out, strings.TrimPrefix(k, prefix))
		}
	}
	sort.Strings(out)
	return out
}

func hasString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// SecretLeaks judges the Secrets left in a run's namespace (as listed from
// the API server at the end; the audit log holds Secrets at Metadata
// level only) against the SimBootstrapConfigs the timeline shows created
// and those still there (live, name to UID). A Secret must be controlled
// by a SimBootstrapConfig of the run, by name and UID: with that owner
// gone it awaits the garbage collector, which these control planes do not
// run; with the owner still there (the owner leaked too, or a namesake
// reused it), or without such a reference (nothing would ever collect
// it, or the sim wrote a wrong one), it is leaked.
func SecretLeaks(t *Timeline, secrets []corev1.Secret, live map[string]types.UID) (leaked, awaitingGC []string) {
	created := map[types.UID]string{}
	for i := range t.Events {
		if e := &t.Events[i]; e.Kind == SimBootstrapConfig && e.Obj != nil && e.Obj.GetUID() != "" {
			created[e.Obj.GetUID()] = e.Obj.GetName()
		}
	}
	for i := range secrets {
		s := &secrets[i]
		owner := metav1.GetControllerOf(s)
		switch {
		case owner == nil || owner.Kind != "SimBootstrapConfig" || created[owner.UID] != owner.Name:
			leaked = append(leaked, "Secret "+s.Name+" (no controller reference to a SimBootstrapConfig of the run)")
		case live[owner.Name] == owner.UID:
			leaked = append(leaked, "Secret "+s.Name+" (its owner is still there)")
		default:
			awaitingGC = append(awaitingGC, "Secret "+s.Name)
		}
	}
	sort.Strings(leaked)
	sort.Strings(awaitingGC)
	return leaked, awaitingGC
}
