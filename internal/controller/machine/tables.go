package machine

import (
	"fmt"

	machineactions "github.com/krtt-dev/krtt/actions/machine"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/transitions"
)

// SetName is the Machine TableSet's metadata.name.
const SetName = "machine"

// LoadTables loads the Machine tables from dir, or the embedded ones when
// dir is empty, and refuses any table with a lint finding: an operator must
// never run tables that were not clean.
func LoadTables(dir string) (*engine.Set, error) {
	var (
		lib      *engine.Library
		findings engine.Findings
	)
	if dir == "" {
		lib, findings = engine.LoadFS(transitions.FS(), transitions.MachineDir)
	} else {
		lib, findings = engine.LoadPaths(dir)
	}
	if lib != nil {
		findings = append(findings, engine.Check(lib, map[string]*engine.Catalog{
			machineactions.RegistryName: machineactions.Registry().Catalog(),
		})...)
	}
	if len(findings) > 0 {
		return nil, fmt.Errorf("the Machine tables have lint findings; fix them (krtt lint shows the same):\n%s", findings.Error())
	}
	set := lib.Set(SetName)
	if set == nil {
		return nil, fmt.Errorf("no TableSet named %q in the tables", SetName)
	}
	return set, nil
}
