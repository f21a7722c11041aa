// Package v1alpha1 holds the krtt core API: Cluster and Machine in the
// cluster.krtt.dev group.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.krtt.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.krtt.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the objects of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})

	// AddToScheme adds the objects of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// register adds objects to what AddToScheme registers; each type's file
// registers its own kinds.
func register(objs ...runtime.Object) {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, objs...)
		return nil
	})
}
