package main

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// flavour is a Machine controller the bench can measure: everything that
// differs between krtt and Cluster API. The lifecycle, the waits and the
// measurements are shared (lifecycle.go), so both are measured by the same
// code.
type flavour struct {
	name    string
	version string
	// machine is the Machine kind the controller reconciles.
	machine schema.GroupVersionKind
	// start prepares namespace ns (Cluster, Secrets) and starts the
	// controller (one process per instance with -instances); it returns
	// once the controller can manage the Cluster's Machines.
	start func(ctx context.Context, b *bench, ns string) (procs, error)
	// newMachine is a Machine named name of Cluster clusterName whose
	// bootstrap config and infrastructure are the sim objects of the same
	// name.
	newMachine func(ns, name string, controlPlane bool) *unstructured.Unstructured
}

const clusterName = "bench"

// simRefs are the provider references of a Machine, the same for both
// controllers (both follow the Cluster API provider contract).
func simRefs(name string) (bootstrap, infra map[string]any) {
	return map[string]any{"configRef": map[string]any{"apiGroup": "sim.krtt.dev", "kind": "SimBootstrapConfig", "name": name}},
		map[string]any{"apiGroup": "sim.krtt.dev", "kind": "SimMachine", "name": name}
}
