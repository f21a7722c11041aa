package engine

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// maxPoints bounds how many assignments the property test enumerates per
// state; above it, it samples maxSamples random assignments instead.
const (
	maxPoints  = 1 << 20
	maxSamples = 1 << 15
)

// EnumerateAssignments calls fn with every combination of values of the
// given facts (indexes into set.Facts); every other fact is set to its
// first value. fn returns false to stop. The Facts passed to fn is reused
// between calls; Clone it to keep it.
func EnumerateAssignments(set *TableSet, facts []int, fn func(Facts) bool) {
	f := set.NewFacts()
	for i := range f.v {
		f.v[i] = 0
	}
	enumerateFrom(set, f, facts, fn)
}

// enumerateFrom is EnumerateAssignments with every other fact at its value
// in f.
func enumerateFrom(set *TableSet, f Facts, facts []int, fn func(Facts) bool) {
	var rec func(k int) bool
	rec = func(k int) bool {
		if k == len(facts) {
			return fn(f)
		}
		fi := facts[k]
		for v := range set.Facts[fi].Values {
			f.v[fi] = uint8(v)
			if !rec(k + 1) {
				return false
			}
		}
		f.v[fi] = 0
		return true
	}
	rec(0)
}

// stateFacts lists the facts the rows applying in the state mention, and
// then the facts of impossible combinations if that keeps the product
// within maxPoints. It returns the product too.
func stateFacts(set *TableSet, st *State) ([]int, int) {
	rel := make([]bool, len(set.Facts))
	mark := func(c cube) {
		for i, m := range c {
			if m != fullMask(set.Facts[i]) {
				rel[i] = true
			}
		}
	}
	for _, t := range set.Tables {
		for _, r := range t.Rows {
			if r.AppliesIn(st) {
				mark(r.cube)
			}
		}
	}
	points := func() int {
		n := 1
		for i, ok := range rel {
			if ok {
				n *= len(set.Facts[i].Values)
				if n > maxPoints {
					return n
				}
			}
		}
		return n
	}
	for _, im := range set.Impossible {
		saved := append([]bool(nil), rel...)
		mark(im.cube)
		if points() > maxPoints {
			rel = saved
		}
	}
	var out []int
	for i, ok := range rel {
		if ok {
			out = append(out, i)
		}
	}
	return out, points()
}

// possibleAssignment samples random assignments until one is possible.
func possibleAssignment(set *TableSet, rng *rand.Rand) (Facts, bool) {
	f := set.NewFacts()
	for range maxSamples {
		for i, fact := range set.Facts {
			f.v[i] = uint8(rng.Intn(len(fact.Values)))
		}
		if !impossibleAssignment(set, f) {
			return f, true
		}
	}
	return f, false
}

func impossibleAssignment(set *TableSet, f Facts) bool {
	for _, im := range set.Impossible {
		if im.cube.matches(f.v) {
			return true
		}
	}
	return false
}

// checkDecideAgrees checks, for every non-terminal state and every possible
// assignment of the facts its rows mention, that the compiled machines pick
// the same row as direct evaluation, and that some row is picked (the set
// passed Check, so it is complete).
func checkDecideAgrees(t *testing.T, set *TableSet) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	for _, st := range set.States {
		if st.Terminal || st.Abstract {
			continue
		}
		facts, points := stateFacts(set, st)
		n, failures := 0, 0
		visit := func(f Facts) bool {
			if impossibleAssignment(set, f) {
				return true
			}
			n++
			d, err := set.Decide(ctx, st.Name, f)
			dd := set.DecideDirect(st.Name, f)
			switch {
			case dd == nil:
				t.Errorf("set %s state %s %v: no row matches, though the set passed Check", set.Name, st.Name, f)
				failures++
			case err != nil:
				t.Errorf("set %s state %s %v: Decide: %v (direct: %s/%s)", set.Name, st.Name, f, err, dd.Table.Name, dd.Row.ID)
				failures++
			case d.Row != dd.Row || d.Table != dd.Table:
				t.Errorf("set %s state %s %v: compiled picks %s/%s, direct %s/%s", set.Name, st.Name, f, d.Table.Name, d.Row.ID, dd.Table.Name, dd.Row.ID)
				failures++
			}
			return failures < 5
		}
		if points <= maxPoints {
			EnumerateAssignments(set, facts, visit)
			if n == 0 && failures == 0 {
				// The facts left at their first values form an impossible
				// combination (stateFacts could not take in every fact of
				// the impossible combinations): enumerate again around a
				// possible assignment.
				if base, ok := possibleAssignment(set, rng); ok {
					enumerateFrom(set, base, facts, visit)
				}
			}
		} else {
			f := set.NewFacts()
			for range maxSamples {
				for i, fact := range set.Facts {
					f.v[i] = uint8(rng.Intn(len(fact.Values)))
				}
				if !visit(f) {
					break
				}
			}
		}
		if n == 0 && failures == 0 {
			t.Errorf("set %s state %s: every assignment is impossible", set.Name, st.Name)
		}
	}
}

func TestEnumerateAssignments(t *testing.T) {
	s := mustLoadSet(t, "door", "testdata/door.yaml")
	seen := map[string]bool{}
	EnumerateAssignments(s, []int{s.Fact("locked").Index(), s.Fact("push").Index()}, func(f Facts) bool {
		seen[f.String()] = true
		return true
	})
	if len(seen) != 6 || !seen["locked=true push=Remove"] {
		t.Errorf("enumerated %v", seen)
	}
	count := 0
	EnumerateAssignments(s, []int{s.Fact("push").Index()}, func(f Facts) bool {
		count++
		if f.Get("locked") != "false" {
			t.Errorf("unlisted fact not at its first value: %v", f)
		}
		return count < 2
	})
	if count != 2 {
		t.Errorf("stop: count %d", count)
	}
}

// TestDecideMatchesDirect is the property test: the compiled stateless
// machines and direct row evaluation agree everywhere, on door.yaml, on
// every fixture that passes Check and on the shipped tables.
func TestDecideMatchesDirect(t *testing.T) {
	t.Run("door", func(t *testing.T) {
		checkDecideAgrees(t, mustLoadSet(t, "door", "testdata/door.yaml"))
	})
	t.Run("first", func(t *testing.T) {
		checkDecideAgrees(t, mustLoadBytes(t, "first", firstPolicy))
	})
	t.Run("branches", func(t *testing.T) {
		checkDecideAgrees(t, mustLoadBytes(t, "branches", branches))
	})
	t.Run("big", func(t *testing.T) {
		lib, fs := LoadBytes("big.yaml", bigTable(30, 60, 7, false))
		if fs.HasErrors() {
			t.Fatal(fs)
		}
		checkDecideAgrees(t, lib.Sets[0])
	})
	files, _ := filepath.Glob("testdata/broken/*.yaml")
	for _, file := range files {
		lib, fs := LoadPaths(file)
		if lib == nil || fs.HasErrors() || Check(lib, nil).HasErrors() {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			for _, s := range lib.Sets {
				checkDecideAgrees(t, s)
			}
		})
	}
	t.Run("shipped", func(t *testing.T) {
		lib := loadShipped(t)
		for _, s := range lib.Sets {
			t.Run(s.Name, func(t *testing.T) {
				if fs := Check(&Library{Sets: []*TableSet{s}}, nil).Errors(); len(fs) > 0 {
					t.Fatalf("set %s does not pass Check:\n%s", s.Name, lines(fs))
				}
				checkDecideAgrees(t, s)
			})
		}
	})
}

// shippedDir is where the operator's tables live, relative to this package.
var shippedDir = filepath.Join("..", "transitions")

// loadShipped loads the shipped tables; a missing or broken set fails the
// test rather than letting it pass without checking anything.
func loadShipped(t testing.TB) *Library {
	t.Helper()
	found := false
	_ = filepath.WalkDir(shippedDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isYAML(p) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	if !found {
		t.Fatalf("no tables under %s", shippedDir)
	}
	lib, fs := LoadPaths(shippedDir)
	if lib == nil || fs.HasErrors() {
		t.Fatalf("tables under %s do not load:\n%s", shippedDir, lines(fs.Errors()))
	}
	return lib
}
