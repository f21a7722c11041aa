//go:build tools

// Package capi pins the Cluster API core manager that `make bench-peer`
// runs next to krtt. It is a module of its own so Cluster API and its
// dependencies never enter krtt's module graph; nothing from it is vendored
// or committed besides go.mod and go.sum.
package capi

import (
	_ "sigs.k8s.io/cluster-api/api/core/v1beta2"
	_ "sigs.k8s.io/cluster-api/core"
)
