// Package v1alpha1 holds the sim.krtt.dev API: a simulated bootstrap
// provider (SimBootstrapConfig) and a simulated infrastructure provider
// (SimMachine) that follow the bootstrap and infrastructure contracts the
// Machine controller reads.
//
// +kubebuilder:object:generate=true
// +groupName=sim.krtt.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: "sim.krtt.dev", Version: "v1alpha1"}

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
