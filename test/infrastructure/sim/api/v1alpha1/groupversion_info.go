// Package v1alpha1 holds the sim.krtt.dev API: a simulated bootstrap
// provider (SimBootstrapConfig) and a simulated infrastructure provider
// (SimMachine) that follow the bootstrap and infrastructure contracts the
// Machine controller reads.
//
// +kubebuilder:object:generate=true
// +groupName=sim.krtt.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: "sim.krtt.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the objects of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the objects of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
