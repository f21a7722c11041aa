// Package tables loads the shipped KRTT tables (or a reviewed copy from a
// directory) and checks them against the registries krtt is built with. The
// CLI, the operator and the tests share it, so none of them needs to import a
// controller to get at its tables.
package actions

import (
	"fmt"

	clusteractions "github.com/krtt-dev/krtt/actions/cluster"
	machineactions "github.com/krtt-dev/krtt/actions/machine"
	machinesetactions "github.com/krtt-dev/krtt/actions/machineset"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/transitions"
)

// Set names of the shipped controllers (a TableSet's metadata.name).
const (
	Machine    = "machine"
	MachineSet = "machineset"
	Cluster    = "cluster"
)

// Catalogs are the registries krtt is built with, by registry name (a table
// set's spec.registry). lint checks tables against them; render and docs take
// action and fact descriptions from them.
func Catalogs() map[string]*engine.Catalog {
	out := map[string]*engine.Catalog{}
	for _, c := range []*engine.Catalog{machineactions.Registry().Catalog(), machineactions.PodRegistry().Catalog(), machinesetactions.Registry().Catalog(), clusteractions.Registry().Catalog()} {
		out[c.Name] = c
	}
	return out
}

// Load loads the set named set from dir, or from the embedded tables when dir
// is empty, and refuses tables with any lint finding: an operator must never
// run tables that were not clean.
func Load(set, dir string) (*engine.TableSet, error) {
	var (
		lib      *engine.Library
		findings engine.Findings
	)
	if dir == "" {
		lib, findings = engine.LoadFS(transitions.FS(), ".")
	} else {
		lib, findings = engine.LoadPaths(dir)
	}
	if lib != nil {
		findings = append(findings, engine.Check(lib, Catalogs())...)
	}
	if len(findings) > 0 {
		return nil, fmt.Errorf("the tables have lint findings; fix them (krtt lint shows the same):\n%s", findings.Error())
	}
	s := lib.TableSet(set)
	if s == nil {
		return nil, fmt.Errorf("no TableSet named %q in the tables", set)
	}
	return s, nil
}
