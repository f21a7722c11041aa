package machine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// PodVerdictTable is the name of the decision table the drain asks about
// every Pod (transitions/machine/pod-verdict.yaml).
const PodVerdictTable = "pod-verdict"

// PodRegistryName is the registry the Pod verdict table names.
const PodRegistryName = "pod"

// Verdicts of the Pod verdict table the drain acts on.
const (
	verdictGone            = "Gone"
	verdictRemoveFinished  = "RemoveFinished"
	verdictWaitTerminating = "WaitTerminating"
	verdictSkip            = "Skip"
	verdictEvict           = "Evict"
	verdictForceDelete     = "ForceDelete"
	verdictWaitCompleted   = "WaitCompleted"
	verdictEvictLater      = "EvictLater"
	verdictEvictSerially   = "EvictSerially"
	verdictHoldInvalidRule = "HoldInvalidRule"
)

// PodItem is what the Pod verdict table observes about one Pod: the Pod and
// what was read around it. Observers only read it.
type PodItem struct {
	Pod *corev1.Pod
	Now time.Time
	// NodeUnreachable: the Node reports Ready=Unknown.
	NodeUnreachable bool
	// DaemonSet is the daemonSet fact: No, Live or Orphaned.
	DaemonSet string
	// Force: the Machine's deletion is forced.
	Force bool
	// Rule is the MachineDrainRule that applies to the Pod, if any.
	Rule *clusterv1.MachineDrainRule
	// RuleInvalid says why Rule cannot be evaluated; then it is not known
	// to apply, only that it might (see ruleFor).
	RuleInvalid string
	// HasPVC: the Pod mounts PersistentVolumeClaims.
	HasPVC bool
	// OrderGroup (Current, Later) and VolumeTurn (Now, Waiting) are
	// computed over all the Node's Pods by the drain plan.
	OrderGroup string
	VolumeTurn string
	// WaitingOn says what a Pod whose turn has not come waits for.
	WaitingOn string
	// EvictionRefusals is the evictionRefusals fact: Below, Exhausted or
	// BudgetNeverAllows.
	EvictionRefusals string
}

// PodRegistry returns the registry of the Pod verdict table's facts.
var PodRegistry = engine.LazyRegistry(PodRegistryName, registerPodFacts)

func registerPodFacts(r *engine.Registry[*PodItem]) {
	r.Bool("finished", func(p *PodItem) bool {
		return p.Pod.Status.Phase == corev1.PodSucceeded || p.Pod.Status.Phase == corev1.PodFailed
	})
	r.Enum("terminating", func(p *PodItem) string {
		switch {
		case p.Pod.DeletionTimestamp.IsZero():
			return "No"
		case p.Now.Sub(p.Pod.DeletionTimestamp.Time) > unreachableGrace:
			return "Long"
		}
		return "Recently"
	})
	r.Bool("nodeUnreachable", func(p *PodItem) bool { return p.NodeUnreachable })
	r.Bool("mirror", func(p *PodItem) bool {
		_, ok := p.Pod.Annotations[corev1.MirrorPodAnnotationKey]
		return ok
	})
	r.Enum("daemonSet", func(p *PodItem) string { return p.DaemonSet })
	r.Enum("drainLabel", func(p *PodItem) string { return drainLabelBehavior(p.Pod) })
	r.Bool("force", func(p *PodItem) bool { return p.Force })
	r.Enum("rule", func(p *PodItem) string {
		switch {
		case p.Rule == nil:
			return "None"
		case p.RuleInvalid != "":
			return "Invalid"
		}
		return string(p.Rule.Spec.Drain.Behavior)
	})
	r.Enum("orderGroup", func(p *PodItem) string { return p.OrderGroup })
	r.Bool("hasPVC", func(p *PodItem) bool { return p.HasPVC })
	r.Enum("volumeTurn", func(p *PodItem) string { return p.VolumeTurn })
	r.Enum("evictionRefusals", func(p *PodItem) string { return p.EvictionRefusals })
}

// PodVerdicts binds the set's Pod verdict table to the Pod registry.
func PodVerdicts(set *engine.TableSet) (*engine.Decider[*PodItem], error) {
	t := set.Decision(PodVerdictTable)
	if t == nil {
		return nil, fmt.Errorf("the %s tables have no decision table %s, which the drain asks about every Pod", set.Name, PodVerdictTable)
	}
	return engine.NewDecider(t, PodRegistry())
}

// daemonSetOf reads the Pod's DaemonSet controller: No, Live, or Orphaned
// (its DaemonSet is gone, so nothing recreates the Pod).
func daemonSetOf(ctx context.Context, c client.Client, pod *corev1.Pod) (string, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "DaemonSet" || !strings.HasPrefix(ref.APIVersion, "apps/") {
		return "No", nil
	}
	ds := &appsv1.DaemonSet{}
	err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, ds)
	switch {
	case err == nil:
		// By name, as Cluster API's daemonSetFilter: a DaemonSet made
		// again under the same name counts, and the garbage collector
		// takes a Pod whose owner's UID is gone.
		return "Live", nil
	case apierrors.IsNotFound(err):
		return "Orphaned", nil
	}
	return "", fmt.Errorf("get DaemonSet %s: %v", ref.Name, err)
}

// podVerdict is one Pod's verdict, or why it could not be decided.
type podVerdict struct {
	item *PodItem
	pod  *corev1.Pod
	dec  engine.ItemDecision
	// err: a fact could not be observed (the DaemonSet lookup failed).
	err error
}

func (v podVerdict) verdict() string {
	if v.err != nil {
		return ""
	}
	return v.dec.Verdict()
}

// drainView is one drain pass's reading of the Node's Pods.
type drainView struct {
	s           *Scope
	node        *corev1.Node
	pods        []corev1.Pod
	unreachable bool
	force       bool
}

// decide asks the Pod verdict table about every Pod on the Node. The
// table decides from one Pod's facts; the facts that depend on the other
// Pods (its order group's turn, its volume turn) are read from a first
// look at everyone's verdict with those facts at their neutral values.
func (v *drainView) decide(ctx context.Context) ([]podVerdict, error) {
	if v.s.PodVerdicts == nil {
		return nil, fmt.Errorf("no Pod verdict table is loaded")
	}
	rules, err := v.drainRules(ctx)
	if err != nil {
		return nil, err
	}
	namespaces := map[string]*corev1.Namespace{}
	out := make([]podVerdict, len(v.pods))
	for i := range v.pods {
		pod := &v.pods[i]
		out[i].pod = pod
		ds, err := daemonSetOf(ctx, v.s.NodeClient, pod)
		if err != nil {
			out[i].err = err
			continue
		}
		rule, err := v.ruleFor(ctx, rules, namespaces, pod)
		if err != nil {
			out[i].err = err
			continue
		}
		refusals, err := v.evictionRefusals(ctx, pod)
		if err != nil {
			out[i].err = err
			continue
		}
		out[i].item = &PodItem{Pod: pod, Now: v.s.Now, NodeUnreachable: v.unreachable, DaemonSet: ds, Force: v.force,
			Rule: rule, RuleInvalid: ruleInvalid(rule), HasPVC: len(claimNames(pod)) > 0, OrderGroup: "Current", VolumeTurn: "Now", EvictionRefusals: refusals}
		out[i].dec, out[i].err = v.s.PodVerdicts.Decide(out[i].item)
	}
	changed, err := v.turns(ctx, out)
	if err != nil {
		return nil, err
	}
	for _, i := range changed {
		out[i].dec, out[i].err = v.s.PodVerdicts.Decide(out[i].item)
	}
	return out, nil
}

// order is the Pod's order group: its Drain rule's order, else 0.
func (it *PodItem) order() int32 {
	if it.Rule != nil && it.Rule.Spec.Drain.Behavior == clusterv1.DrainBehaviorDrain && it.Rule.Spec.Drain.Order != nil {
		return *it.Rule.Spec.Drain.Order
	}
	return 0
}

// holds reports whether a first-look verdict keeps the Pod's order group
// open: it is still to be evicted, terminating or to complete.
func holds(verdict string) bool {
	switch verdict {
	case verdictEvict, verdictWaitTerminating, verdictWaitCompleted, verdictHoldInvalidRule:
		return true
	}
	return false
}

// turns sets OrderGroup and VolumeTurn from the first look and returns the
// indexes of the Pods whose facts changed.
func (v *drainView) turns(ctx context.Context, out []podVerdict) ([]int, error) {
	var lowest *int32
	for _, pv := range out {
		if pv.err == nil && holds(pv.verdict()) {
			if o := pv.item.order(); lowest == nil || o < *lowest {
				lowest = &o
			}
		}
	}
	if lowest == nil {
		return nil, nil
	}
	var changed []int
	var serial []int // Pods with PVC volumes to evict now, in the current group
	var leaving []string
	for i, pv := range out {
		if pv.err != nil {
			continue
		}
		it := pv.item
		switch {
		case pv.verdict() == verdictEvict && it.order() > *lowest:
			it.OrderGroup = "Later"
			it.WaitingOn = fmt.Sprintf("order group %d waits for group %d", it.order(), *lowest)
			changed = append(changed, i)
		case pv.verdict() == verdictWaitCompleted && it.order() > *lowest:
			// Waited for all the same; the message puts it after the
			// lower groups, as Cluster API's PodsToWaitCompletedLater.
			it.OrderGroup = "Later"
		case pv.verdict() == verdictEvict && it.HasPVC:
			serial = append(serial, i)
		case pv.verdict() == verdictWaitTerminating && it.HasPVC && it.order() == *lowest:
			leaving = append(leaving, podName(pv.pod))
		}
	}
	if len(serial) == 0 {
		return changed, nil
	}
	sort.SliceStable(serial, func(a, b int) bool {
		pa, pb := priority(out[serial[a]].pod), priority(out[serial[b]].pod)
		if pa != pb {
			return pa > pb
		}
		return podName(out[serial[a]].pod) < podName(out[serial[b]].pod)
	})
	waitingOn := ""
	switch {
	case len(leaving) > 0:
		waitingOn = "Pod " + fewNames(leaving, maxNamesPerClass) + " to terminate"
	default:
		released, err := v.releasedVolumes(ctx)
		if err != nil {
			return nil, err
		}
		if len(released) > 0 {
			waitingOn = "volume " + fewNames(released, maxNamesPerClass) + " to detach"
		}
	}
	for k, i := range serial {
		if waitingOn == "" && k == 0 {
			continue // its turn
		}
		it := out[i].item
		it.VolumeTurn = "Waiting"
		it.WaitingOn = waitingOn
		if it.WaitingOn == "" {
			it.WaitingOn = "Pod " + podName(out[serial[0]].pod) + " to be evicted first"
		}
		changed = append(changed, i)
	}
	return changed, nil
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// releasedVolumes names the volumes still attached to the Node that no Pod
// on it mounts: the volumes of Pods that left, not yet detached. A
// PersistentVolume no claim binds (a disk attached by hand) was never a
// Pod's to release, so it does not hold the next Pod's turn; the volume wait
// after the drain still waits for it.
func (v *drainView) releasedVolumes(ctx context.Context) ([]string, error) {
	obs, err := observeAttached(ctx, v.s.NodeClient, v.node)
	if err != nil || obs.none() {
		return nil, err
	}
	present := make([]*corev1.Pod, len(v.pods))
	for i := range v.pods {
		present[i] = &v.pods[i]
	}
	inUse, err := volumesOfPods(ctx, v.s.NodeClient, obs.cache(v.s.NodeClient), present)
	if err != nil {
		return nil, err
	}
	return obs.released(inUse), nil
}

// drainRules lists the MachineDrainRules in the Machine's namespace that
// select the Machine, sorted by name: when several match a Pod the first
// applies, as in Cluster API.
func (v *drainView) drainRules(ctx context.Context) ([]*clusterv1.MachineDrainRule, error) {
	m := v.s.Machine
	if m == nil {
		return nil, nil
	}
	list := &clusterv1.MachineDrainRuleList{}
	if err := v.s.Client.List(ctx, list, client.InNamespace(m.Namespace)); err != nil {
		if isNoMatch(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list MachineDrainRules: %w", err)
	}
	var clusterLabels map[string]string
	if v.s.Cluster != nil {
		clusterLabels = v.s.Cluster.Labels
	}
	var out []*clusterv1.MachineDrainRule
	for i := range list.Items {
		r := &list.Items[i]
		// A rule that cannot be evaluated might select the Machine.
		if ruleInvalid(r) != "" || selectsMachine(r, m.Labels, clusterLabels) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

func selectsMachine(r *clusterv1.MachineDrainRule, machine, cluster map[string]string) bool {
	if len(r.Spec.Machines) == 0 {
		return true
	}
	for _, sel := range r.Spec.Machines {
		if selects(sel.Selector, machine) && selects(sel.ClusterSelector, cluster) {
			return true
		}
	}
	return false
}

// selects: a nil or empty selector selects everything; an invalid one
// nothing (ruleFor meets rules with one before it asks).
func selects(rs *clusterv1.LabelSelector, set map[string]string) bool {
	sel := rs.AsMeta()
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Empty() || s.Matches(labels.Set(set))
}

// ruleFor returns the first rule whose pods[] select the Pod.
func (v *drainView) ruleFor(ctx context.Context, rules []*clusterv1.MachineDrainRule, namespaces map[string]*corev1.Namespace, pod *corev1.Pod) (*clusterv1.MachineDrainRule, error) {
	for _, r := range rules {
		if len(r.Spec.Pods) == 0 || ruleInvalid(r) != "" {
			// A rule that cannot be evaluated might be the first to
			// apply: the Pod's verdict holds it rather than guess.
			return r, nil
		}
		for _, sel := range r.Spec.Pods {
			if !selects(sel.Selector, pod.Labels) {
				continue
			}
			if sel.NamespaceSelector == nil {
				return r, nil
			}
			ns, ok := namespaces[pod.Namespace]
			if !ok {
				ns = &corev1.Namespace{}
				if err := v.s.NodeClient.Get(ctx, client.ObjectKey{Name: pod.Namespace}, ns); err != nil {
					return nil, fmt.Errorf("get Namespace %s for MachineDrainRule %s: %w", pod.Namespace, r.Name, err)
				}
				namespaces[pod.Namespace] = ns
			}
			if selects(sel.NamespaceSelector, ns.Labels) {
				return r, nil
			}
		}
	}
	return nil, nil
}

// record traces the verdicts the pass acted on, naming each Pod.
func (v *drainView) record(ctx context.Context, verdicts []podVerdict) {
	for _, pv := range verdicts {
		if pv.err == nil {
			v.s.PodVerdicts.Record(ctx, v.s.Key.String(), pv.dec, "Pod "+podName(pv.pod))
		}
	}
}

// ruleInvalid says why a rule's selectors cannot be evaluated; empty when
// they can.
func ruleInvalid(r *clusterv1.MachineDrainRule) string { return r.InvalidSelector() }

// drainLabelBehavior reads a Pod's drain label as Cluster API's
// drainLabelFilter does: "skip" in any case; "wait-completed" in any case,
// with or without its dash. Any other value is no instruction.
func drainLabelBehavior(p *corev1.Pod) string {
	v, ok := p.Labels[clusterv1.PodDrainLabel]
	switch {
	case !ok:
		return "None"
	case strings.EqualFold(v, clusterv1.PodDrainLabelValueSkip):
		return "Skip"
	case strings.EqualFold(strings.Replace(v, "-", "", 1), strings.ReplaceAll(clusterv1.PodDrainLabelValueWaitCompleted, "-", "")):
		return "WaitCompleted"
	}
	return "None"
}
