package actions

import (
	"fmt"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/transitions"
)

// Catalogs are the registries krtt is built with, by registry name (a table
// set's spec.registry). lint checks tables against them; render and docs take
// action and fact descriptions from them.
func Catalogs() map[string]*engine.Catalog {
	out := map[string]*engine.Catalog{}
	for _, c := range Controllers {
		for _, cat := range c.Catalogs() {
			out[cat.Name] = cat
		}
	}
	return out
}

// TableSets are every controller's table set, by set name.
type TableSets map[string]*engine.TableSet

// LoadSets loads every controller's table set from dir (the embedded tables
// when dir is empty), so `krtt-operator --tables DIR` runs all of them from
// DIR; a finding in any table of DIR refuses the whole directory.
func LoadSets(dir string) (TableSets, error) {
	out := TableSets{}
	for _, c := range Controllers {
		set, err := Load(c.Name, dir)
		if err != nil {
			return nil, err
		}
		out[c.Name] = set
	}
	return out, nil
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
