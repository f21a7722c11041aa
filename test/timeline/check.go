package timeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// The invariants Check enforces.
const (
	InfraAfterDrain       = "infrastructure deleted only after the Node's evictable Pods are gone"
	FinalizerLast         = "finalizer removed only after the infrastructure and bootstrap objects are gone"
	NoDrainDuringPreDrain = "no cordon or eviction while a pre-drain hook is present"
	NoInfraDuringPreTerm  = "no infrastructure deletion while a pre-terminate hook is present"
	PDBRespected          = "no eviction beyond what a PodDisruptionBudget allows"
	EvictionOnly          = "no Pod deleted without the Eviction API except by a force-deletion row"
	StateForwardOnly      = "a Machine's persisted state never moves backwards in the deletion order"
	NothingLeaks          = "nothing leaks"
	// evictionReason is the DisruptionTarget reason kube-apiserver writes
	// when the Eviction API evicts a Pod (k8s.io/api has no constant).
	evictionReason           = "EvictionByEvictionAPI"
	excerptLines             = 14
	describeStateUnknownRank = -1
)

// Invariants lists every invariant, in the order reports show them.
var Invariants = []string{InfraAfterDrain, FinalizerLast, NoDrainDuringPreDrain, NoInfraDuringPreTerm, PDBRespected,
	EvictionOnly, StateForwardOnly, NothingLeaks}

// DrainAction is the registered action that drains a Node: a row running
// it with outcome done says the drain finished.
const DrainAction = "DrainNode"

// Rules is what the checker takes from the tables.
type Rules struct {
	// States in the table set's order: the deletion order.
	States []string
	// DrainStates are the states whose rows drain the Node.
	DrainStates map[string]bool
	// DrainRows are the rows (table/id) that run DrainAction.
	DrainRows map[string]bool
	// ForceDeleteRows are rows (table/id) allowed to delete Pods without
	// the Eviction API: rows running an action whose name says it forces.
	ForceDeleteRows map[string]bool
	// NodeKeptRows are rows (table/id) that remove the finalizer without
	// deleting the Node and without the Node being gone: a Node they leave
	// is their documented outcome (the Node deletion timeout, E08; a
	// Cluster going away), not a leak.
	NodeKeptRows map[string]string
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
	r := Rules{DrainStates: map[string]bool{}, DrainRows: map[string]bool{}, ForceDeleteRows: map[string]bool{}, NodeKeptRows: map[string]string{}}
	for _, s := range set.States {
		r.States = append(r.States, s.Name)
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
				if strings.HasPrefix(a, "Force") {
					r.ForceDeleteRows[id] = true
				}
			}
			if keepsNode(row) {
				r.NodeKeptRows[t.Name+"/"+row.ID] = row.Trigger
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

// drainRank is the position of the last drain state in the order.
func (r Rules) drainRank() int {
	out := describeStateUnknownRank
	for s := range r.DrainStates {
		out = max(out, r.rank(s))
	}
	return out
}

// Violation is one broken invariant.
type Violation struct {
	Invariant string
	Object    string
	Message   string
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
	// (Rules.NodeKeptRows), as the Machine's last Event names it: the
	// row's outcome, not a leak (a note each names the row).
	KeptNodes []string
	// AwaitingGC are bootstrap Secrets whose owner is gone: the garbage
	// collector removes them, and these control planes run none.
	AwaitingGC []string
	// Counts of what was checked.
	Evictions, InfraDeletions, FinalizerRemovals, Cordons, MachinesDeleted int
	// Unverifiable counts checks that failed inside a blind window, where
	// the state they were checked against may have been stale (a note
	// each, not a violation).
	Unverifiable int
}

// Failed reports whether any invariant was broken.
func (r *Report) Failed() bool { return len(r.Violations) > 0 }

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
		world:      map[Kind]map[string]client.Object{},
		gone:       map[Kind]map[string]*Event{},
		machineOf:  map[string]string{},
		nodeOwner:  map[string]string{},
		lastState:  map[string]int{},
		history:    map[string][]transition{},
		lastMach:   map[string]*clusterv1.Machine{},
		involved:   map[string][]int{},
		machineSet: map[string]bool{},
		blind:      map[string]bool{},
		lastRow:    map[string]string{},
	}
	for i := range t.Events {
		if e := &t.Events[i]; e.Approx && e.Op == Deleted {
			c.blind[ref(e.Kind, e.Key())] = true
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

func ref(kind Kind, k string) string { return string(kind) + "/" + k }

func (c *checker) get(kind Kind, k string) client.Object { return c.world[kind][k] }

func (c *checker) step(i int) {
	e := &c.t.Events[i]
	if e.Kind == Mark {
		return
	}
	k := e.Key()
	c.involved[ref(e.Kind, k)] = append(c.involved[ref(e.Kind, k)], i)
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
			if c.get(kind, pk) != nil && c.blind[ref(kind, pk)] {
				c.note("%s: %s %s was seen gone only after a re-list; its deletion could not be ordered against the finalizer removal", k, kind, pk)
			} else if c.get(kind, pk) != nil {
				c.violate(i, FinalizerLast, Machine, k, fmt.Sprintf("the finalizer went while %s %s still exists", kind, pk), ref(kind, pk))
			} else if g := c.gone[kind][pk]; g != nil && g.Approx {
				c.note("%s: %s %s was seen gone only after a re-list; its deletion could not be ordered against the finalizer removal", k, kind, pk)
			}
		}
	}
	if e.Op == Deleted && m.DeletionTimestamp != nil {
		c.rep.MachinesDeleted++
	}
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
	c.rep.InfraDeletions++
	k := e.Key()
	mk := c.machineOf[ref(SimMachine, k)]
	if e.Approx {
		// Seen only as a tombstone after a re-list: when it started is
		// unknown, so nothing can be checked against it.
		c.rep.Unverifiable++
		c.note("unverifiable: infrastructure %s of %s was seen deleted only after a re-list", k, mk)
		return
	}
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
	var left []string
	for _, p := range c.evictablePods(node) {
		if c.blind[ref(Pod, p)] {
			c.note("%s: Pod %s was seen gone only after a re-list; its deletion could not be ordered against the infrastructure deletion", mk, p)
			continue
		}
		left = append(left, p)
	}
	if len(left) == 0 {
		return
	}
	// Pods remain: only a row that skipped the drain allows that.
	if tr, ok := c.leftDrain(mk); ok && !c.rules.DrainRows[tr.row] {
		c.note("%s: infrastructure deleted with %d Pods on Node %s: the drain was skipped by row %s (%s→%s)", mk, len(left), node, tr.row, tr.from, tr.to)
		return
	} else if ok {
		c.violate(i, InfraAfterDrain, SimMachine, k, fmt.Sprintf("Pods %v still on Node %s although drain row %s reported done", left, node, tr.row), podRefs(left, Machine, mk)...)
		return
	}
	c.violate(i, InfraAfterDrain, SimMachine, k, fmt.Sprintf("Pods %v still on Node %s and no recorded row completed or skipped the drain", left, node), podRefs(left, Machine, mk)...)
}

// leftDrain finds the transition that took the Machine past the drain
// states (from at or before them to after them).
func (c *checker) leftDrain(mk string) (transition, bool) {
	dr := c.rules.drainRank()
	for _, tr := range c.history[mk] {
		from, to := c.rules.rank(tr.from), c.rules.rank(tr.to)
		if from >= 0 && from <= dr && to > dr {
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
	if e.Op == Deleted || !n.Spec.Unschedulable || (prev != nil && prev.(*corev1.Node).Spec.Unschedulable) {
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
			c.note("Pod %s was seen gone only after a re-list; how it was deleted is unknown", k)
		} else {
			c.violate(i, EvictionOnly, Pod, k, fmt.Sprintf("deleted without the Eviction API (no DisruptionTarget=%s) on Node %s (Machine %q, row %q)", evictionReason, p.Spec.NodeName, mk, row), ref(Machine, mk))
		}
		return
	}
	c.rep.Evictions++
	if m != nil {
		if hooks := hookNames(m, clusterv1.PreDrainDeleteHookAnnotationPrefix); len(hooks) > 0 {
			c.violate(i, NoDrainDuringPreDrain, Pod, k, fmt.Sprintf("evicted while Machine %s has pre-drain hooks %v", mk, hooks), ref(Machine, mk))
		}
	}
	c.budgets(i, p)
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
			c.violate(i, PDBRespected, Pod, key(evicted), fmt.Sprintf("evicted leaving %d healthy Pods of PDB %s, which needs %d", healthy, pk, want), ref(PDB, pk))
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
		c.rep.Leaked = append(c.rep.Leaked, "Node "+n)
	}
	for k, o := range c.world[VolumeAttachment] {
		if nodes[o.(*storagev1.VolumeAttachment).Spec.NodeName] {
			c.rep.Leaked = append(c.rep.Leaked, "VolumeAttachment "+k)
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

// violate records a violation with an excerpt of the events of the object
// and of the others named (Kind/key refs), up to event i.
func (c *checker) violate(i int, invariant string, kind Kind, k, msg string, others ...string) {
	if w, ok := c.t.blindAt(c.t.Events[i].RV); ok {
		// The state it was checked against may be stale: changes in the
		// window were not all seen.
		c.rep.Unverifiable++
		c.note("unverifiable (rv %d in a window the recorder could not see, rv %d..%d): %s: %s %s: %s", c.t.Events[i].RV, w.From, w.To, invariant, kind, k, msg)
		return
	}
	refs := append([]string{ref(kind, k)}, others...)
	var idx []int
	for _, r := range refs {
		idx = append(idx, c.involved[r]...)
	}
	sort.Ints(idx)
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
	c.rep.Violations = append(c.rep.Violations, Violation{Invariant: invariant, Object: string(kind) + " " + k, Message: msg, Excerpt: lines})
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
