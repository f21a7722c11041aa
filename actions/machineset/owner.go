package machineset

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/krtt-dev/krtt/actions/clusterowner"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// ownerAndLabelsSet: the set is as Cluster API's
// reconcileMachineSetOwnerAndLabels leaves it: the cluster-name label on
// it, in its selector and in its template's labels (so it selects only its
// Cluster's Machines), and a stand-alone set owned by its Cluster.
func ownerAndLabelsSet(s *Scope) bool {
	if s.Set == nil || s.Cluster == nil {
		return true
	}
	ms, name := s.Set, s.Set.Spec.ClusterName
	if ms.Labels[clusterv1.ClusterNameLabel] != name || ms.Spec.Selector.MatchLabels[clusterv1.ClusterNameLabel] != name ||
		ms.Spec.Template.ObjectMeta.Labels[clusterv1.ClusterNameLabel] != name {
		return false
	}
	return !standAlone(ms) || clusterowner.HasRef(ms.OwnerReferences, s.Cluster)
}

// standAlone: no MachineDeployment or Cluster owns the set and no
// deployment made it (Cluster API shouldAdopt, isDeploymentChild: a set
// restored from a backup before its deployment is not the Cluster's).
func standAlone(ms *clusterv1.MachineSet) bool {
	for _, ref := range ms.OwnerReferences {
		if ref.APIVersion == clusterv1.GroupVersion.String() && (ref.Kind == "MachineDeployment" || ref.Kind == "Cluster") {
			return false
		}
	}
	_, made := ms.Labels[clusterv1.DeploymentNameLabel]
	return !made
}

// setClusterOwnerAndLabels changes the MachineSet in memory; the kit
// patches it.
func setClusterOwnerAndLabels(_ context.Context, s *Scope) engine.Outcome {
	ms, name := s.Set, s.Set.Spec.ClusterName
	put := func(m *map[string]string) {
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[clusterv1.ClusterNameLabel] = name
	}
	put(&ms.Labels)
	put(&ms.Spec.Selector.MatchLabels)
	put(&ms.Spec.Template.ObjectMeta.Labels)
	if !standAlone(ms) {
		return engine.OKf("labelled for Cluster %s", name)
	}
	ms.OwnerReferences = clusterowner.WithRef(ms.OwnerReferences, s.Cluster)
	return engine.OKf("labelled for Cluster %s, which is the owner", name)
}

// templates are the set's templates that were read.
func (s *Scope) templates() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, t := range []*unstructured.Unstructured{s.BootstrapTemplate, s.InfrastructureTemplate} {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

// templatesOwned: every template the set reads carries an owner reference
// to the Cluster (Cluster API reconcileExternalTemplateReference), so the
// garbage collector deletes them with it. Without a Cluster there is no
// owner to give.
func templatesOwned(s *Scope) bool {
	if s.Cluster == nil {
		return true
	}
	for _, t := range s.templates() {
		if !clusterowner.HasRef(t.GetOwnerReferences(), s.Cluster) {
			return false
		}
	}
	return true
}

// ownTemplates gives the templates the Cluster as owner. The write tests the
// owner list it replaces, so an owner added meanwhile makes it conflict
// instead of being lost. The observed copies take the answer in.
func ownTemplates(ctx context.Context, s *Scope) engine.Outcome {
	var owned []string
	for _, t := range s.templates() {
		if clusterowner.HasRef(t.GetOwnerReferences(), s.Cluster) {
			continue
		}
		if err := reconciler.PatchOwnersAndLabels(ctx, s.Client, t, clusterowner.WithRef(t.GetOwnerReferences(), s.Cluster), nil); err != nil {
			return engine.Fail(fmt.Errorf("set the Cluster as owner of %s %s: %w", t.GetKind(), t.GetName(), err))
		}
		owned = append(owned, t.GetKind()+" "+t.GetName())
	}
	return engine.OKf("Cluster %s owns %s", s.Cluster.Name, strings.Join(owned, " and "))
}
