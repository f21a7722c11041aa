package main

import (
	"github.com/krtt-dev/krtt/actions/machine"
	"github.com/krtt-dev/krtt/engine"
)

// catalogs are the registries krtt knows, by registry name (a table set's
// spec.registry). lint checks the tables against them; render and docs take
// action and guard descriptions from them.
var catalogs = byName(
	machine.Registry().Catalog(),
)

// knownCatalogs returns the catalogs krtt was built with.
func knownCatalogs() map[string]*engine.Catalog { return catalogs }

func byName(cats ...*engine.Catalog) map[string]*engine.Catalog {
	m := make(map[string]*engine.Catalog, len(cats))
	for _, c := range cats {
		m[c.Name] = c
	}
	return m
}
