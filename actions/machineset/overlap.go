package machineset

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// Two MachineSets overlap when one can select the Machines the other
// creates: those carry the other's template labels (which include its
// selector), so one set's selector matching the other's template labels is
// what lets both claim the same Machine. Identical selectors overlap, and so
// does a selector that is a subset of the other's. Sets of different Clusters
// never do: a Machine matches only the sets of its own Cluster (Matches).

// Field indexes that find the sets a set may overlap with without reading
// every set of the namespace: each key is "<cluster>/<label>=<value>".
const (
	// SelectorLabelIndex holds one key per selector label of a set.
	SelectorLabelIndex = "machineset.selectorLabel"
	// TemplateLabelIndex holds one key per template label of a set.
	TemplateLabelIndex = "machineset.templateLabel"
)

// SelectorUniqueCondition says whether another set can select the same
// Machines (rows S14, S15).
const SelectorUniqueCondition = "SelectorUnique"

func labelKey(cluster, k, v string) string { return cluster + "/" + k + "=" + v }

// ownLabels leaves out the cluster-name label every set of the Cluster has
// in its selector and template (S13), unless it is the only one: it tells
// no set of the Cluster from another, so it neither narrows a lookup nor
// says anything in a message that names the Cluster.
func ownLabels(set map[string]string) map[string]string {
	if _, ok := set[clusterv1.ClusterNameLabel]; !ok || len(set) == 1 {
		return set
	}
	out := make(map[string]string, len(set)-1)
	for k, v := range set {
		if k != clusterv1.ClusterNameLabel {
			out[k] = v
		}
	}
	return out
}

// selectorWords is a set's selector as a message shows it.
func selectorWords(ms *clusterv1.MachineSet) string {
	return labels.SelectorFromSet(ownLabels(ms.Spec.Selector.MatchLabels)).String()
}

func labelKeys(cluster string, set map[string]string) []string {
	out := make([]string, 0, len(set))
	for k, v := range set {
		out = append(out, labelKey(cluster, k, v))
	}
	sort.Strings(out)
	return out
}

// SelectorLabelIndexer extracts the SelectorLabelIndex keys.
func SelectorLabelIndexer(obj client.Object) []string {
	ms, ok := obj.(*clusterv1.MachineSet)
	if !ok {
		return nil
	}
	return labelKeys(ms.Spec.ClusterName, ms.Spec.Selector.MatchLabels)
}

// TemplateLabelIndexer extracts the TemplateLabelIndex keys.
func TemplateLabelIndexer(obj client.Object) []string {
	ms, ok := obj.(*clusterv1.MachineSet)
	if !ok {
		return nil
	}
	return labelKeys(ms.Spec.ClusterName, ms.Spec.Template.ObjectMeta.Labels)
}

func subset(small, big map[string]string) bool {
	if len(small) == 0 {
		return false
	}
	for k, v := range small {
		if got, ok := big[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Overlap reports whether a and b, two distinct sets, can select the same
// Machines. A set being deleted adopts nothing more, so it overlaps nothing.
func Overlap(a, b *clusterv1.MachineSet) bool {
	if a.UID == b.UID || a.Namespace != b.Namespace || a.Spec.ClusterName != b.Spec.ClusterName ||
		!a.DeletionTimestamp.IsZero() || !b.DeletionTimestamp.IsZero() {
		return false
	}
	return subset(a.Spec.Selector.MatchLabels, b.Spec.Template.ObjectMeta.Labels) ||
		subset(b.Spec.Selector.MatchLabels, a.Spec.Template.ObjectMeta.Labels)
}

// overlapping lists, by name, the sets ms overlaps with. Through the indexes
// it reads only the sets that share a label with it: those whose template
// carries its first selector label, and those with a selector label its
// template carries. A reader without them (krtt explain) lists the namespace.
func overlapping(ctx context.Context, c client.Reader, ms *clusterv1.MachineSet) ([]*clusterv1.MachineSet, error) {
	found := map[string]*clusterv1.MachineSet{}
	keep := func(list *clusterv1.MachineSetList) {
		for i := range list.Items {
			if other := &list.Items[i]; Overlap(ms, other) {
				found[other.Name] = other
			}
		}
	}
	sel := labelKeys(ms.Spec.ClusterName, ownLabels(ms.Spec.Selector.MatchLabels))
	lookups := []client.MatchingFields{}
	if len(sel) > 0 {
		// A template carrying every selector label carries the first.
		lookups = append(lookups, client.MatchingFields{TemplateLabelIndex: sel[0]})
	}
	for _, key := range labelKeys(ms.Spec.ClusterName, ownLabels(ms.Spec.Template.ObjectMeta.Labels)) {
		lookups = append(lookups, client.MatchingFields{SelectorLabelIndex: key})
	}
	for _, by := range lookups {
		list := &clusterv1.MachineSetList{}
		if err := c.List(ctx, list, client.InNamespace(ms.Namespace), by); err != nil {
			list = &clusterv1.MachineSetList{}
			if err := c.List(ctx, list, client.InNamespace(ms.Namespace)); err != nil {
				return nil, fmt.Errorf("list MachineSets: %w", err)
			}
			keep(list)
			break
		}
		keep(list)
	}
	out := make([]*clusterv1.MachineSet, 0, len(found))
	for _, other := range found {
		out = append(out, other)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// contested reports whether an orphan is also selected by a set ms
// overlaps with: neither adopts it, so it cannot go back and forth.
func contested(overlaps []*clusterv1.MachineSet, m *clusterv1.Machine) bool {
	for _, other := range overlaps {
		if Matches(other, m) {
			return true
		}
	}
	return false
}

// overlapMessage is what SelectorUnique says; the selectorConditionCurrent
// fact compares the condition with it, so it depends only on the sets.
func overlapMessage(s *Scope) string {
	ms := s.Set
	if len(s.Overlaps) == 0 {
		return fmt.Sprintf("No other MachineSet of Cluster %s can select the Machines of selector %s",
			ms.Spec.ClusterName, selectorWords(ms))
	}
	others := make([]string, 0, len(s.Overlaps))
	for _, o := range s.Overlaps {
		others = append(others, fmt.Sprintf("%s (selector %s)", o.Name, selectorWords(o)))
	}
	shown := others
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(others)-3))
	}
	word := "MachineSet"
	if len(others) > 1 {
		word = "MachineSets"
	}
	return fmt.Sprintf("The selector %s can select the same Machines as %s %s of Cluster %s: an orphan Machine both select is adopted by neither; give each set a selector label of its own",
		selectorWords(ms), word, strings.Join(shown, ", "), ms.Spec.ClusterName)
}

// selectorConditionCurrent: SelectorUnique already says what is observed.
func selectorConditionCurrent(s *Scope) bool {
	if s.Set == nil {
		return true
	}
	c := meta.FindStatusCondition(s.Set.Status.Conditions, SelectorUniqueCondition)
	if len(s.Overlaps) == 0 {
		return c == nil || c.Status == metav1.ConditionTrue
	}
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "SelectorOverlap" && c.Message == overlapMessage(s)
}

// describeSelectorOverlap names the sets whose selectors overlap (rows S14,
// S15); the row writes the condition.
func describeSelectorOverlap(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s", overlapMessage(s))
}
