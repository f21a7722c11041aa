package explain

import (
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/engine"
)

// The engine's own fixtures (../testdata), loaded as its tests load them.

func mustLoadSet(t testing.TB, name string, paths ...string) *engine.TableSet {
	t.Helper()
	lib, fs := engine.LoadPaths(paths...)
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load %v:\n%v", paths, fs)
	}
	s := lib.TableSet(name)
	if s == nil {
		t.Fatalf("no set %s in %v", name, paths)
	}
	return s
}

// mustLoadBytes loads an inline document that must load without errors.
func mustLoadBytes(t testing.TB, name, doc string) *engine.TableSet {
	t.Helper()
	lib, fs := engine.LoadBytes(name+".yaml", []byte(doc))
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load %s:\n%v", name, fs)
	}
	return lib.TableSet(name)
}

func doorFacts(t testing.TB, s *engine.TableSet, locked bool, push string) engine.Facts {
	t.Helper()
	f := s.NewFacts()
	if err := f.SetBool("locked", locked); err != nil {
		t.Fatal(err)
	}
	if err := f.Set("push", push); err != nil {
		t.Fatal(err)
	}
	return f
}

func loadParcel(t *testing.T) (*engine.Library, *engine.DecisionTable) {
	t.Helper()
	lib, fs := engine.LoadPaths("../testdata/decision/parcel.yaml")
	if fs.HasErrors() {
		t.Fatalf("load: %v", fs)
	}
	d := lib.Decision("parcel")
	if d == nil {
		t.Fatal("decision table parcel not loaded")
	}
	return lib, d
}

// factsOf sets every fact from name=value words; later words win.
func factsOf(t *testing.T, s *engine.TableSet, words ...string) engine.Facts {
	t.Helper()
	f := s.NewFacts()
	for _, w := range strings.Fields(strings.Join(words, " ")) {
		k, v, _ := strings.Cut(w, "=")
		if err := f.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if m := f.Missing(); len(m) > 0 {
		t.Fatalf("facts missing: %v", m)
	}
	return f
}
