// Package observertest holds what the fact observers' fuzz targets share:
// binding a shipped table set to its registry, and the check that every
// observed fact took one of the values its table declares. An observer that
// returns anything else would leave the tables deciding on a value no row
// was written for.
package observertest

import (
	"slices"
	"testing"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/transitions"
)

// Shipped loads the shipped tables and returns them with a runner binding
// the set named name to reg; tb fails when either does not load or bind.
func Shipped[E any](tb testing.TB, name string, reg *engine.Registry[E]) (*engine.Library, *engine.Runner[E], *engine.TableSet) {
	tb.Helper()
	lib, findings := engine.LoadFS(transitions.FS(), ".")
	if findings.HasErrors() {
		tb.Fatal(findings)
	}
	set := lib.TableSet(name)
	r, err := engine.NewRunner(set, reg)
	if err != nil {
		tb.Fatal(err)
	}
	return lib, r, set
}

// Observe runs every observer of r on env and fails tb unless each fact of
// set got one of its declared values.
func Observe[E any](tb testing.TB, r *engine.Runner[E], set *engine.TableSet, env E) {
	tb.Helper()
	facts, err := r.Observe(env)
	if err != nil {
		tb.Fatalf("an observer returned an undeclared value: %v", err)
	}
	Declared(tb, set.Facts, facts)
}

// Declared fails tb unless each of facts' values is one its fact declares.
func Declared(tb testing.TB, declared []*engine.Fact, facts engine.Facts) {
	tb.Helper()
	for _, fact := range declared {
		if v := facts.Get(fact.Name); !IsDeclared(fact.Values, v) {
			tb.Fatalf("fact %s = %q, not a declared value", fact.Name, v)
		}
	}
}

// IsDeclared says whether v is one of values.
func IsDeclared(values []engine.Value, v string) bool {
	return slices.ContainsFunc(values, func(d engine.Value) bool { return d.Name == v })
}
