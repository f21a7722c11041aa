package machine

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/krtt-dev/krtt/actions/controller"
	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// LabelsFromMachineAnnotation and AnnotationsFromMachineAnnotation on a
// Node list, comma-separated and sorted (empty when none), the label and
// annotation keys krtt copied from the Machine, so one removed from the
// Machine is removed from the Node too (and those others set are left
// alone).
const (
	LabelsFromMachineAnnotation      = "cluster.krtt.dev/labels-from-machine"
	AnnotationsFromMachineAnnotation = "cluster.krtt.dev/annotations-from-machine"
)

// TaintsFromMachineAnnotation on a Node lists, comma-separated and sorted,
// the Always taints of the Machine krtt keeps there (key:effect), so one
// that leaves the Machine's spec.taints is removed from the Node. Once
// set, even empty, it also says the Node was initialized: OnInitialization
// taints go on only while it is absent (Cluster API's
// cluster.x-k8s.io/taints-from-machine).
const TaintsFromMachineAnnotation = "cluster.krtt.dev/taints-from-machine"

// inDomain: the part of key before "/" is domain or a subdomain of it.
func inDomain(key, domain string) bool {
	d, _, _ := strings.Cut(key, "/")
	return d == domain || strings.HasSuffix(d, "."+domain)
}

// syncedLabels returns the Machine labels that belong on the Node (Cluster
// API GetManagedLabels): node-role.kubernetes.io, the node-restriction and
// krtt node domains with their subdomains, and those extra selects.
func syncedLabels(labels map[string]string, extra []*regexp.Regexp) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		d, _, _ := strings.Cut(k, "/")
		if d == clusterv1.NodeRoleLabelDomain || inDomain(k, clusterv1.NodeRestrictionLabelDomain) || inDomain(k, clusterv1.ManagedNodeDomain) ||
			controller.Matches(extra, k) {
			out[k] = v
		}
	}
	return out
}

// commonNodeAnnotations are krtt's own; a Machine without a controller
// leaves the owner ones off the Node.
var commonNodeAnnotations = []string{clusterv1.MachineAnnotation, clusterv1.ClusterNameAnnotation, clusterv1.ClusterNamespaceAnnotation,
	clusterv1.OwnerKindAnnotation, clusterv1.OwnerNameAnnotation}

// syncedAnnotations returns the annotations that belong on the Node
// (Cluster API GetManagedAnnotations): krtt's own, naming the Machine, its
// Cluster and its controller, and the Machine's annotations in the krtt
// node domain or that extra selects.
func syncedAnnotations(m *clusterv1.Machine, extra []*regexp.Regexp) map[string]string {
	out := map[string]string{
		clusterv1.MachineAnnotation:          m.Name,
		clusterv1.ClusterNameAnnotation:      m.Spec.ClusterName,
		clusterv1.ClusterNamespaceAnnotation: m.Namespace,
	}
	if owner := metav1.GetControllerOfNoCopy(m); owner != nil {
		out[clusterv1.OwnerKindAnnotation] = owner.Kind
		out[clusterv1.OwnerNameAnnotation] = owner.Name
	}
	for k, v := range m.Annotations {
		if inDomain(k, clusterv1.ManagedNodeDomain) || controller.Matches(extra, k) {
			out[k] = v
		}
	}
	return out
}

// fromMachine is the key list a bookkeeping annotation holds.
func fromMachine(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// interruptible reads status.interruptible of the infrastructure object
// (false when it does not say).
func (s *Scope) interruptible() (bool, error) {
	if s.Infrastructure == nil {
		return false, nil
	}
	v, _, err := unstructured.NestedBool(s.Infrastructure.Object, "status", "interruptible")
	if err != nil {
		return false, fmt.Errorf("read status.interruptible of %s %s: %w", s.Infrastructure.GetKind(), s.Infrastructure.GetName(), err)
	}
	return v, nil
}

// outdatedRevision: the Machine's MachineSet is of an older revision than
// its MachineDeployment (Cluster API shouldNodeHaveOutdatedTaint); nil when
// the owners could not be read.
func (s *Scope) outdatedRevision() *bool {
	if s.OwnersErr != nil {
		return nil
	}
	outdated := s.Set != nil && s.Deployment != nil && uptodate.Revision(s.Set) < uptodate.Revision(s.Deployment)
	return &outdated
}

// nodeTaints is the Node's taints without the uninitialized one, with the
// outdated-revision taint when outdated and without it when not (as it is
// when outdated is nil). untainted says the uninitialized taint goes;
// revision that the outdated-revision taint comes or goes.
func nodeTaints(current []corev1.Taint, outdated *bool) (taints []corev1.Taint, untainted, revision bool) {
	outdatedTaint := corev1.Taint{Key: clusterv1.NodeOutdatedRevisionTaint, Effect: corev1.TaintEffectPreferNoSchedule}
	has := false
	for _, t := range current {
		switch {
		case t.Key == clusterv1.NodeUninitializedTaint && t.Effect == corev1.TaintEffectNoSchedule:
			untainted = true
			continue
		case t.MatchTaint(&outdatedTaint):
			if outdated != nil && !*outdated {
				revision = true
				continue
			}
			has = true
		}
		taints = append(taints, t)
	}
	if outdated != nil && *outdated && !has {
		taints = append(taints, outdatedTaint)
		revision = true
	}
	return taints, untainted, revision
}

// machineTaints applies the Machine's taints to the Node's (Cluster API
// propagateMachineTaintsToNode): each Always taint is set with its value,
// each OnInitialization one too while the Node is not initialized yet, and
// the Always taints tracked before that the Machine no longer has (in
// either list) are removed. owned is the new tracking annotation; current
// is not changed.
func machineTaints(current []corev1.Taint, want []clusterv1.MachineTaint, tracked string, initialized bool) (taints []corev1.Taint, changed bool, owned string) {
	taints = slices.Clone(current)
	var always, listed []string
	for _, mt := range want {
		id := mt.Key + ":" + string(mt.Effect)
		listed = append(listed, id)
		if mt.Propagation == clusterv1.TaintPropagationAlways {
			always = append(always, id)
		} else if initialized {
			continue
		}
		t := corev1.Taint{Key: mt.Key, Value: mt.Value, Effect: mt.Effect}
		switch i := slices.IndexFunc(taints, func(c corev1.Taint) bool { return c.MatchTaint(&t) }); {
		case i < 0:
			taints = append(taints, t)
			changed = true
		case taints[i].Value != t.Value:
			taints[i] = t
			changed = true
		}
	}
	for _, id := range fromMachine(tracked) {
		if slices.Contains(listed, id) {
			continue
		}
		i := strings.LastIndex(id, ":")
		if i < 0 {
			continue
		}
		gone := corev1.Taint{Key: id[:i], Effect: corev1.TaintEffect(id[i+1:])}
		n := len(taints)
		taints = slices.DeleteFunc(taints, func(c corev1.Taint) bool { return c.MatchTaint(&gone) })
		changed = changed || len(taints) != n
	}
	slices.Sort(always)
	return taints, changed, strings.Join(always, ",")
}

// syncNode sets the managed Machine labels and annotations on the Node,
// removes those the Machine no longer has, labels the Node of an
// interruptible instance, removes the uninitialized taint, keeps the
// outdated-revision taint on the Node of a Machine a rollout will replace
// and the Machine's own taints (Cluster API reconcileNode, patchNode). It
// patches the Node only when something differs.
func syncNode(ctx context.Context, s *Scope) engine.Outcome {
	node := s.Node()
	if node == nil {
		return engine.OK()
	}
	m := s.Machine

	desired := syncedLabels(m.Labels, s.NodeSync.Labels)
	interruptible, err := s.interruptible()
	if err != nil {
		return engine.Fail(err)
	}
	if interruptible {
		desired[clusterv1.InterruptibleLabel] = ""
	}
	keys := slices.Sorted(maps.Keys(desired))

	// The patch names only what changes (nil removes); other writers'
	// labels and annotations are left alone.
	labels, annotations := map[string]any{}, map[string]any{}
	var set, removed []string
	for _, k := range keys {
		if v, ok := node.Labels[k]; !ok || v != desired[k] {
			labels[k] = desired[k]
			set = append(set, k)
		}
	}
	for _, k := range fromMachine(node.Annotations[LabelsFromMachineAnnotation]) {
		if _, still := desired[k]; still {
			continue
		}
		if _, ok := node.Labels[k]; ok {
			labels[k] = nil
			removed = append(removed, k)
		}
	}
	sort.Strings(removed)

	var annotated []string
	setAnnotation := func(k, v string) {
		if cur, ok := node.Annotations[k]; !ok || cur != v {
			annotations[k] = v
			annotated = append(annotated, k)
		}
	}
	wanted := syncedAnnotations(m, s.NodeSync.Annotations)
	var copied []string
	for _, k := range slices.Sorted(maps.Keys(wanted)) {
		setAnnotation(k, wanted[k])
		if !slices.Contains(commonNodeAnnotations, k) {
			copied = append(copied, k)
		}
	}
	for _, k := range append(fromMachine(node.Annotations[AnnotationsFromMachineAnnotation]), commonNodeAnnotations...) {
		if _, still := wanted[k]; still {
			continue
		}
		if _, ok := node.Annotations[k]; ok {
			annotations[k] = nil
			annotated = append(annotated, k)
		}
	}
	setAnnotation(LabelsFromMachineAnnotation, strings.Join(keys, ","))
	setAnnotation(AnnotationsFromMachineAnnotation, strings.Join(copied, ","))

	taints, untainted, revision := nodeTaints(node.Spec.Taints, s.outdatedRevision())
	tracked, initialized := node.Annotations[TaintsFromMachineAnnotation]
	taints, propagated, owned := machineTaints(taints, m.Spec.Taints, tracked, initialized)
	setAnnotation(TaintsFromMachineAnnotation, owned)

	if len(set) == 0 && len(removed) == 0 && len(annotated) == 0 && !untainted && !revision && !propagated {
		return engine.OKf("Node %s in sync", node.Name)
	}
	md := map[string]any{}
	if len(labels) > 0 {
		md["labels"] = labels
	}
	if len(annotations) > 0 {
		md["annotations"] = annotations
	}
	patch := map[string]any{"metadata": md}
	if untainted || revision || propagated {
		// A merge patch replaces the whole list: the observed
		// resourceVersion makes a taint added meanwhile conflict instead
		// of being lost.
		md["resourceVersion"] = node.ResourceVersion
		patch["spec"] = map[string]any{"taints": taints}
	}
	// The observed Node takes the answer in; a failed write leaves it as
	// observed.
	if err := reconciler.PatchFields(ctx, s.NodeClient, node, patch); err != nil {
		return engine.Fail(fmt.Errorf("sync Node %s: %w", node.Name, err))
	}
	if slices.Contains(set, clusterv1.InterruptibleLabel) {
		// Once, when the label arrives (Cluster API reconcileNode).
		s.Told.Tell(reconciler.Tell{Reason: "SuccessfulSetInterruptibleNodeLabel", Related: node, Note: node.Name})
	}
	var parts []string
	if len(set) > 0 {
		parts = append(parts, "labels "+strings.Join(set, ","))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed labels "+strings.Join(removed, ","))
	}
	if len(annotated) > 0 {
		parts = append(parts, "annotations "+strings.Join(annotated, ","))
	}
	if untainted {
		parts = append(parts, "removed taint "+clusterv1.NodeUninitializedTaint)
	}
	if propagated {
		parts = append(parts, "taints from the Machine")
	}
	// The outdated-revision taint follows the MachineDeployment, not the
	// Machine: the row's message (the Machine's lastTransition) does not
	// name it, so a rollout's step writes no Machine status on the way
	// there and back. The Node shows it.
	if len(parts) == 0 {
		return engine.OKf("Node %s in sync", node.Name)
	}
	return engine.OKf("updated Node %s: %s", node.Name, strings.Join(parts, "; "))
}
