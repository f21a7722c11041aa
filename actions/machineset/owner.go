package machineset

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// clusterRef is the owner reference a stand-alone MachineSet gets to its
// Cluster: an owner, not a controller (Cluster API's
// reconcileMachineSetOwnerAndLabels), so the Cluster's teardown deletes it.
func clusterRef(c *clusterv1.Cluster) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: c.Name, UID: c.UID}
}

func ownerAndLabelsSet(s *Scope) bool {
	ms := s.Set
	if ms == nil || s.Cluster == nil {
		return true
	}
	if ms.Labels[clusterv1.ClusterNameLabel] != ms.Spec.ClusterName {
		return false
	}
	if metav1.GetControllerOf(ms) != nil {
		// Another controller owns it: its teardown is that owner's.
		return true
	}
	want := clusterRef(s.Cluster)
	for _, ref := range ms.OwnerReferences {
		if ref.APIVersion == want.APIVersion && ref.Kind == want.Kind && ref.Name == want.Name && ref.UID == want.UID {
			return true
		}
	}
	return false
}

// setClusterOwnerAndLabels changes the MachineSet in memory; the kit
// patches it.
func setClusterOwnerAndLabels(_ context.Context, s *Scope) engine.Outcome {
	ms := s.Set
	if ms.Labels == nil {
		ms.Labels = map[string]string{}
	}
	ms.Labels[clusterv1.ClusterNameLabel] = ms.Spec.ClusterName
	if metav1.GetControllerOf(ms) != nil {
		return engine.OKf("labelled for Cluster %s", ms.Spec.ClusterName)
	}
	want := clusterRef(s.Cluster)
	for i, ref := range ms.OwnerReferences {
		if ref.APIVersion == want.APIVersion && ref.Kind == want.Kind && ref.Name == want.Name {
			ms.OwnerReferences[i] = want
			return engine.OKf("Cluster %s is the owner", want.Name)
		}
	}
	ms.OwnerReferences = append(ms.OwnerReferences, want)
	return engine.OKf("Cluster %s is the owner", want.Name)
}
