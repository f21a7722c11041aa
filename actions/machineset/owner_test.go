package machineset

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// S13 leaves a set as Cluster API's reconcileMachineSetOwnerAndLabels
// does: the cluster-name label on it, in its selector and template labels;
// the Cluster as owner only of a stand-alone set (shouldAdopt).
func TestOwnerAndLabels(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: types.UID("u1")}}
	newSet := func(mutate func(*clusterv1.MachineSet)) *clusterv1.MachineSet {
		ms := &clusterv1.MachineSet{Spec: clusterv1.MachineSetSpec{ClusterName: "c1",
			Selector: clusterv1.MachineSetSelector{MatchLabels: map[string]string{"pool": "a"}}}}
		ms.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": "a"}
		if mutate != nil {
			mutate(ms)
		}
		return ms
	}
	mdRef := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: "md", UID: "md1"}
	for _, tc := range []struct {
		name  string
		set   *clusterv1.MachineSet
		owned bool
	}{
		{"stand-alone", newSet(nil), true},
		{"a MachineDeployment's, not its controller", newSet(func(ms *clusterv1.MachineSet) { ms.OwnerReferences = []metav1.OwnerReference{mdRef} }), false},
		{"made by a MachineDeployment (label only)", newSet(func(ms *clusterv1.MachineSet) {
			ms.Labels = map[string]string{clusterv1.DeploymentNameLabel: "md"}
		}), false},
	} {
		s := &Scope{Set: tc.set, Cluster: c}
		if ownerAndLabelsSet(s) {
			t.Fatalf("%s: a set without the cluster-name label reads as set", tc.name)
		}
		setClusterOwnerAndLabels(context.Background(), s)
		if !ownerAndLabelsSet(s) {
			t.Errorf("%s: after S13 still not set: labels %v, selector %v, template %v, owners %v", tc.name,
				tc.set.Labels, tc.set.Spec.Selector.MatchLabels, tc.set.Spec.Template.ObjectMeta.Labels, tc.set.OwnerReferences)
		}
		for what, m := range map[string]map[string]string{"labels": tc.set.Labels, "selector": tc.set.Spec.Selector.MatchLabels,
			"template labels": tc.set.Spec.Template.ObjectMeta.Labels} {
			if m[clusterv1.ClusterNameLabel] != "c1" {
				t.Errorf("%s: %s %v lack the cluster-name label", tc.name, what, m)
			}
		}
		owned := false
		for _, ref := range tc.set.OwnerReferences {
			owned = owned || ref.Kind == "Cluster"
		}
		if owned != tc.owned {
			t.Errorf("%s: owned by the Cluster %v, want %v", tc.name, owned, tc.owned)
		}
	}
}

// Messages and index lookups leave out the cluster-name label every set of
// the Cluster shares, unless it is all the selector has.
func TestOwnLabels(t *testing.T) {
	shared := clusterv1.ClusterNameLabel
	ms := &clusterv1.MachineSet{}
	ms.Spec.Selector.MatchLabels = map[string]string{shared: "c1", "pool": "a"}
	if got := selectorWords(ms); got != "pool=a" {
		t.Errorf("selector words %q, want pool=a", got)
	}
	ms.Spec.Selector.MatchLabels = map[string]string{shared: "c1"}
	if got := selectorWords(ms); got != shared+"=c1" {
		t.Errorf("selector words %q, want the cluster-name label alone", got)
	}
}

// A deployment wakes its sets when its template (generation) or revision
// moves on, not on its status writes.
func TestRevisionMovedWakesOnlyOnTemplateOrRevision(t *testing.T) {
	md := func(gen int64, rev string) *clusterv1.MachineDeployment {
		return &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Generation: gen,
			Annotations: map[string]string{clusterv1.RevisionAnnotation: rev}}}
	}
	p := revisionMoved()
	for _, tc := range []struct {
		name     string
		old, new *clusterv1.MachineDeployment
		want     bool
	}{
		{"status only", md(1, "1"), md(1, "1"), false},
		{"template", md(1, "1"), md(2, "1"), true},
		{"revision", md(2, "1"), md(2, "2"), true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: wakes %v, want %v", tc.name, got, tc.want)
		}
	}
}
