package engine

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateGoldens rewrites the goldens under testdata/broken:
// go test ./engine -run TestBrokenFixtures -update
var updateGoldens = checkUpdateFlag()

// checkUpdateFlag registers -update unless another test file of the package
// already did, so the flag can be shared.
func checkUpdateFlag() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool("update", false, "rewrite golden files")
	return func() bool { return *b }
}

// testCatalogs returns the registries the fixtures name: door (what
// door.yaml needs, nothing more) and lab (for the registry checks).
func testCatalogs() map[string]*Catalog {
	noop := func(context.Context, struct{}) Outcome { return OK() }
	door := NewRegistry[struct{}]("door")
	door.Bool("locked", func(struct{}) bool { return false })
	door.Enum("push", func(struct{}) string { return "None" })
	door.Action("Swing", "Swing the door.", noop, Offers("side"))

	lab := NewRegistry[struct{}]("lab")
	lab.Bool("locked", func(struct{}) bool { return false })
	lab.Enum("push", func(struct{}) string { return "None" })
	lab.Bool("spare", func(struct{}) bool { return false })
	lab.Guard("keyHolder", "The person holds the key.", []string{"locked"}, func(struct{}) bool { return false })
	lab.Action("Swing", "Swing the door.", noop)
	lab.Action("Drill", "Drill the lock out; takes a while.", noop, MayWait())
	return map[string]*Catalog{"door": door.Catalog(), "lab": lab.Catalog()}
}

// lint loads the files and, when they load, checks them: what `krtt lint`
// prints.
func lint(catalogs map[string]*Catalog, paths ...string) Findings {
	lib, out := LoadPaths(paths...)
	if lib != nil {
		out = append(out, Check(lib, catalogs)...)
	}
	out.Sort()
	return out
}

func lines(fs Findings) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// brokenFixtures maps each fixture to the check that must report it.
var brokenFixtures = map[string]string{
	// loader
	"syntax":               "schema",
	"unknown_field":        "schema",
	"bad_condition_status": "schema",
	"duplicate_id":         "reference",
	"unknown_state":        "reference",
	"unknown_fact":         "reference",
	"unknown_value":        "reference",
	// checker
	"overlap":                 "determinism",
	"gap":                     "completeness",
	"uncovered_state":         "completeness",
	"unreachable":             "reachability",
	"deadend":                 "reachability",
	"no_terminal":             "reachability",
	"masked":                  "masking",
	"masked_across":           "masking",
	"impossible_row":          "masking",
	"unknown_action":          "registry",
	"unknown_placeholder":     "registry",
	"registry":                "registry",
	"no_registry":             "registry",
	"then_retry":              "result",
	"warning_silent":          "result",
	"event_reason_no_warning": "result",
	"quiet_warning":           "result",
	"event_reason_shape":      "schema",
}

func TestBrokenFixtures(t *testing.T) {
	cats := testCatalogs()
	files, err := filepath.Glob("testdata/broken/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			fs := lint(cats, file)
			got := lines(fs)
			check, ok := brokenFixtures[name]
			if !ok {
				t.Fatalf("fixture %s is not listed in brokenFixtures", name)
			}
			found := false
			for _, f := range fs {
				found = found || f.Check == check
				if f.Pos.File != file || f.Pos.Line == 0 {
					t.Errorf("finding without a position in the fixture: %s", f)
				}
				if f.Message == "" || f.Hint == "" {
					t.Errorf("finding without a message or hint: %s", f)
				}
			}
			if !found {
				t.Errorf("no %s finding for %s; got:\n%s", check, name, got)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if updateGoldens() {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./engine -run TestBrokenFixtures -update)", err)
			}
			if got != string(want) {
				t.Errorf("findings differ from %s (rerun with -update if intended)\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
	for name := range brokenFixtures {
		if !seen[name] {
			t.Errorf("fixture testdata/broken/%s.yaml is missing", name)
		}
	}
}

func TestDoorPassesCheck(t *testing.T) {
	for _, cats := range []map[string]*Catalog{testCatalogs(), nil} {
		if fs := lint(cats, "testdata/door.yaml"); len(fs) > 0 {
			t.Errorf("door.yaml has findings:\n%s", lines(fs))
		}
	}
}

func TestCheckSkipsRegistryWithoutCatalogs(t *testing.T) {
	for _, name := range []string{"unknown_action", "registry", "no_registry"} {
		for _, f := range lint(nil, "testdata/broken/"+name+".yaml") {
			if f.Check == "registry" {
				t.Errorf("%s: registry finding without catalogs: %s", name, f)
			}
		}
	}
}

func TestCheckNilLibrary(t *testing.T) {
	if fs := Check(nil, nil); len(fs) != 0 {
		t.Fatalf("Check(nil) = %v", fs)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"Swing", "Swing", 0}, {"Swnig", "Swing", 1}, {"Swig", "Swing", 1}, {"", "ab", 2}, {"kitten", "sitting", 3}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
	if h := suggest("Swnig", []string{"Lock", "Swing"}, "actions", "Registry.Action"); h != "did you mean Swing?" {
		t.Errorf("suggest = %q", h)
	}
	if h := suggest("Paint", []string{"Lock", "Swing"}, "actions", "Registry.Action"); !strings.Contains(h, "Lock, Swing") {
		t.Errorf("suggest = %q", h)
	}
}

// bigTable writes a table the size of the shipped ones (facts × rows) whose
// rows are the leaves of a random decision tree over the facts: unique and
// complete, so every check has to prove it rather than find a quick
// counterexample. With gap, one leaf is dropped.
func bigTable(facts, rows int, seed int64, gap bool) []byte {
	rng := rand.New(rand.NewSource(seed))
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: big}
spec:
  initialState: Working
  states:
    - {name: Working, description: busy}
    - {name: Done, description: finished, terminal: true}
  facts:
`)
	domain := make([]int, facts)
	for i := range facts {
		if i%3 == 0 {
			domain[i] = 4
			fmt.Fprintf(&b, "    - {name: f%d, type: enum, description: x, values: [{name: a}, {name: b}, {name: c}, {name: d}]}\n", i)
		} else {
			domain[i] = 2
			fmt.Fprintf(&b, "    - {name: f%d, type: bool, description: x}\n", i)
		}
	}
	b.WriteString("  rows:\n")
	values := func(f int, vals []int) string {
		names := make([]string, len(vals))
		for i, v := range vals {
			if domain[f] == 2 {
				names[i] = []string{"false", "true"}[v]
			} else {
				names[i] = string(rune('a' + v))
			}
		}
		return "[" + strings.Join(names, ", ") + "]"
	}
	// Grow a decision tree: split a random leaf on a random unused fact.
	type leaf struct {
		when map[int][]int
	}
	leaves := []leaf{{when: map[int][]int{}}}
	for len(leaves) < rows {
		i := rng.Intn(len(leaves))
		l := leaves[i]
		f := rng.Intn(facts)
		if _, used := l.when[f]; used {
			continue
		}
		var parts [][]int
		if domain[f] == 2 {
			parts = [][]int{{0}, {1}}
		} else {
			parts = [][]int{{0, 1}, {2}, {3}}
		}
		leaves = append(leaves[:i], leaves[i+1:]...)
		for _, p := range parts {
			w := map[int][]int{f: p}
			for k, v := range l.when {
				w[k] = v
			}
			leaves = append(leaves, leaf{when: w})
		}
	}
	if gap {
		leaves = leaves[1:]
	}
	for i, l := range leaves {
		var when []string
		for f := range facts {
			if v, ok := l.when[f]; ok {
				when = append(when, fmt.Sprintf("f%d: %s", f, values(f, v)))
			}
		}
		to := "{}"
		if i == 0 {
			to = "{state: Done}"
		}
		fmt.Fprintf(&b, "    - {id: R%d, observed: o, trigger: t, action: a, resulting: r, from: [Working], when: {%s}, then: %s}\n",
			i, strings.Join(when, ", "), to)
	}
	return []byte(b.String())
}

// TestCheckScales runs the checks on tables the size of the shipped ones;
// they must stay well under a second.
func TestCheckScales(t *testing.T) {
	for _, size := range [][2]int{{30, 60}, {60, 200}} {
		for seed := int64(1); seed <= 3; seed++ {
			for _, gap := range []bool{false, true} {
				checkBigTable(t, size[0], size[1], seed, gap)
			}
		}
	}
}

func checkBigTable(t *testing.T, facts, rows int, seed int64, gap bool) {
	t.Helper()
	lib, fs := LoadBytes("big.yaml", bigTable(facts, rows, seed, gap))
	if fs.HasErrors() {
		t.Fatalf("big table does not load:\n%s", lines(fs))
	}
	fs = Check(lib, nil)
	if gap != fs.HasErrors() {
		t.Errorf("%dx%d seed %d gap %v: findings:\n%s", facts, rows, seed, gap, lines(fs))
	}
}

// BenchmarkCheck measures Check on the tables TestCheckScales checks for
// correctness (make bench-engine; how long it takes is no test's business:
// on a shared machine a wall-clock bound only flakes).
func BenchmarkCheck(b *testing.B) {
	for _, size := range [][2]int{{30, 60}, {60, 200}} {
		b.Run(fmt.Sprintf("%dfactsx%drows", size[0], size[1]), func(b *testing.B) {
			lib, fs := LoadBytes("big.yaml", bigTable(size[0], size[1], 1, false))
			if fs.HasErrors() {
				b.Fatal(fs)
			}
			b.ReportAllocs()
			for b.Loop() {
				Check(lib, nil)
			}
		})
	}
}

// TestGapAgreesWithUncovered compares the checker's cover search with
// uncovered and with brute force on random covers.
func TestGapAgreesWithUncovered(t *testing.T) {
	lib, fs := LoadBytes("small.yaml", bigTable(7, 3, 1, false))
	if fs.HasErrors() {
		t.Fatal(fs)
	}
	s := lib.Sets[0]
	rng := rand.New(rand.NewSource(42))
	randomCube := func(density int) cube {
		c := s.fullCube()
		for i, f := range s.Facts {
			if rng.Intn(density) == 0 {
				m := uint64(rng.Intn(int(fullMask(f)))) + 1
				c[i] = m
			}
		}
		return c
	}
	inside := func(v []uint8, c cube) bool {
		for i, x := range v {
			if c[i]&(uint64(1)<<x) == 0 {
				return false
			}
		}
		return true
	}
	brute := func(region cube, cover []cube) bool { // reports whether some point is uncovered
		var facts []int
		for i := range s.Facts {
			facts = append(facts, i)
		}
		found := false
		EnumerateAssignments(s, facts, func(f Facts) bool {
			if !inside(f.v, region) {
				return true
			}
			for _, c := range cover {
				if inside(f.v, c) {
					return true
				}
			}
			found = true
			return false
		})
		return found
	}
	for n := range 3000 {
		region := randomCube(4)
		cover := make([]cube, rng.Intn(12))
		for i := range cover {
			cover[i] = randomCube(2)
		}
		g, u, b := gap(s, region, cover), uncovered(s, region, cover), brute(region, cover)
		if (g != nil) != b || (u != nil) != b {
			t.Fatalf("case %d: gap %v uncovered %v brute force %v", n, g, u, b)
		}
		if g == nil {
			continue
		}
		if !inside(g, region) {
			t.Fatalf("case %d: witness %v outside the region", n, g)
		}
		for _, c := range cover {
			if inside(g, c) {
				t.Fatalf("case %d: witness %v is covered by %v", n, g, c)
			}
		}
	}
}
