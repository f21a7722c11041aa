package machineset

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/krtt-dev/krtt/actions/clusterowner"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

func ownerAndLabelsSet(s *Scope) bool {
	if s.Set == nil || s.Cluster == nil {
		return true
	}
	return clusterowner.Set(s.Set, s.Set.Spec.ClusterName, s.Cluster)
}

// setClusterOwnerAndLabels changes the MachineSet in memory; the kit
// patches it.
func setClusterOwnerAndLabels(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s", clusterowner.Ensure(s.Set, s.Set.Spec.ClusterName, s.Cluster))
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
