//go:build tools

// Package tools pins the build tools krtt needs (kube-apiserver, etcd,
// controller-gen) in a module of their own, so their large dependency graphs
// never leak into the main module.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
