// Package layout checks the import graph of the module's packages: the
// operator's code never imports the test rig, and no package imports one
// from a layer above its own.
package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/krtt-dev/krtt"

// rig marks the packages that build, run and test the operator: they may
// import anything, and nothing of the operator may import them.
const rig = -1

// layers gives each package (by path in the module) its layer: a package
// imports only from its own layer or below. The longest matching prefix
// wins; "x/..." matches x and everything under it.
var layers = []struct {
	prefix string
	layer  int
}{
	{"api/...", 0}, {"engine/...", 0},
	{"transitions/...", 1}, {"reconciler/...", 1}, {"internal/...", 1},
	// actions/<controller> and the parts they share (contract, controller).
	{"actions/...", 2},
	{"actions", 3},
	{"cmd/krtt-operator/...", 4}, {"cmd/krtt", 4},
	{"cmd/krtt-local/...", rig}, {"cmd/krtt-sim/...", rig}, {"cmd/krtt-demo/...", rig}, {"cmd/krtt-bench/...", rig},
	{"test/...", rig}, {"features/...", rig}, {"hack/...", rig},
}

// exceptions are imports known to break the layering, to be removed with
// the import ("from -> to", package paths in the module). The test fails
// when one is no longer needed.
var exceptions = map[string]string{}

// layerOf returns a package's layer and whether the table places it.
func layerOf(pkg string) (int, bool) {
	best, layer := -1, 0
	for _, l := range layers {
		p, tree := strings.CutSuffix(l.prefix, "/...")
		if pkg == p || tree && strings.HasPrefix(pkg, p+"/") {
			if len(p) > best {
				best, layer = len(p), l.layer
			}
		}
	}
	return layer, best >= 0
}

func name(layer int) string {
	if layer == rig {
		return "the test rig"
	}
	return fmt.Sprintf("layer %d", layer)
}

// check returns what breaks the layering in imports (package → the
// module's packages it imports), and the exceptions it used.
func check(imports map[string][]string) (problems []string, used map[string]bool) {
	used = map[string]bool{}
	for pkg, imps := range imports {
		from, ok := layerOf(pkg)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no layer: add it to layers in test/layout", pkg))
			continue
		}
		if from == rig {
			continue
		}
		for _, imp := range imps {
			to, ok := layerOf(imp)
			if !ok || to != rig && to <= from {
				continue // an unplaced package is reported as such
			}
			edge := pkg + " -> " + imp
			if _, known := exceptions[edge]; known {
				used[edge] = true
				continue
			}
			problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s)", pkg, name(from), imp, name(to)))
		}
	}
	slices.Sort(problems)
	return problems, used
}

// TestLayers runs go list on the module: every package's non-test imports.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		imports[pkg] = nil
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
	}
	if len(imports) < 10 || imports["actions"] == nil {
		t.Fatalf("go list found only %v", imports)
	}
	problems, used := check(imports)
	for _, p := range problems {
		t.Error(p)
	}
	for edge := range exceptions {
		if !used[edge] {
			t.Errorf("exception %q is no longer needed: remove it", edge)
		}
	}
}

// TestCheck: the check names each kind of bad import, and lets the rig and
// downward imports be.
func TestCheck(t *testing.T) {
	problems, _ := check(map[string][]string{
		"engine":                  {"reconciler"},
		"reconciler":              {"api/kit", "engine"},
		"actions/machine":         {"test/framework/poll", "actions/contract", "reconciler"},
		"actions":                 {"actions/machine"},
		"cmd/krtt":                {"actions", "features"},
		"test/framework/harness":  {"actions", "cmd/krtt"},
		"cmd/krtt-bench/internal": {"test/chaos"},
		"tools/new":               nil,
	})
	want := []string{
		"actions/machine (layer 2) imports test/framework/poll (the test rig)",
		"cmd/krtt (layer 4) imports features (the test rig)",
		"engine (layer 0) imports reconciler (layer 1)",
		"tools/new has no layer: add it to layers in test/layout",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("check found\n %s\nwant\n %s", strings.Join(problems, "\n "), strings.Join(want, "\n "))
	}
}
