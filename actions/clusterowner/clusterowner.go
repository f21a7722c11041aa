// Package clusterowner is what every Machine, MachineSet and
// MachineDeployment of a Cluster carries, as Cluster API's controllers give
// it: the cluster-name label and, when nothing else controls the object,
// an owner reference (not a controller reference) to its Cluster, so the
// Cluster's teardown and the garbage collector find it.
package clusterowner

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Ref is the owner reference to the Cluster.
func Ref(c *clusterv1.Cluster) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: c.Name, UID: c.UID}
}

// Set reports whether obj carries the label for clusterName and, unless
// another object controls it (that owner's teardown is the one that
// counts), an owner reference to c (its UID included: a Cluster
// recreated under the same name is another Cluster). Without a Cluster
// (nil) only the label is asked for.
func Set(obj client.Object, clusterName string, c *clusterv1.Cluster) bool {
	if obj.GetLabels()[clusterv1.ClusterNameLabel] != clusterName {
		return false
	}
	if c == nil || metav1.GetControllerOf(obj) != nil {
		return true
	}
	return HasRef(obj.GetOwnerReferences(), c)
}

// HasRef reports whether refs hold the owner reference to c, its UID
// included.
func HasRef(refs []metav1.OwnerReference, c *clusterv1.Cluster) bool {
	want := Ref(c)
	for _, ref := range refs {
		if ref.APIVersion == want.APIVersion && ref.Kind == want.Kind && ref.Name == want.Name && ref.UID == want.UID {
			return true
		}
	}
	return false
}

// WithRef is refs with the owner reference to c: one to an earlier Cluster
// of the same name is replaced, not added to (Cluster API EnsureOwnerRef).
func WithRef(refs []metav1.OwnerReference, c *clusterv1.Cluster) []metav1.OwnerReference {
	want := Ref(c)
	out := append([]metav1.OwnerReference(nil), refs...)
	for i, ref := range out {
		if ref.APIVersion == want.APIVersion && ref.Kind == want.Kind && ref.Name == want.Name {
			out[i] = want
			return out
		}
	}
	return append(out, want)
}

// Ensure sets what Set asks for on obj in memory (the kit patches it) and
// says what it set. A reference to an earlier Cluster of the same name is
// replaced, not added to.
func Ensure(obj client.Object, clusterName string, c *clusterv1.Cluster) string {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[clusterv1.ClusterNameLabel] = clusterName
	obj.SetLabels(labels)
	if c == nil || metav1.GetControllerOf(obj) != nil {
		return "labelled for Cluster " + clusterName
	}
	obj.SetOwnerReferences(WithRef(obj.GetOwnerReferences(), c))
	return "Cluster " + c.Name + " is the owner"
}
