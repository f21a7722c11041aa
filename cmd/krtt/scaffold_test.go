package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitAndCreateControllerBuildAndPass scaffolds a module in a
// temporary directory outside the repository (its go.mod replaces krtt
// with this checkout), adds a controller, and runs what a user would: go
// mod tidy, go vet, the envtest test the scaffold wrote (which walks every
// state of the skeleton), the binary's -dump-catalog and krtt lint
// --catalog on its tables.
func TestInitAndCreateControllerBuildAndPass(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if code, out, errOut := krtt(t, "init", "--module", "example.com/gates", "--krtt", root, dir); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := krtt(t, "create", "controller", "gate", "--kind", "Gate", "--dir", dir); code != 0 {
		t.Fatalf("create controller: exit %d\n%s%s", code, out, errOut)
	}
	for _, f := range []string{"go.mod", "main.go", "controllers.go", "Makefile", "transitions/gate/gate.yaml",
		"controllers/gate/registry.go", "controllers/gate/api.go", "controllers/gate/gate_test.go"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("scaffold lacks %s", f)
		}
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	env := append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "KUBEBUILDER_ASSETS="+assets)
	goCmd := func(args ...string) string {
		t.Helper()
		c := exec.Command("go", args...)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "tidy")
	goCmd("vet", "./...")
	if out := goCmd("test", "-count=1", "./..."); !strings.Contains(out, "ok  \texample.com/gates/controllers/gate") {
		t.Fatalf("the scaffold's test did not pass:\n%s", out)
	}
	catalog := filepath.Join(dir, "catalog.json")
	goCmd("run", ".", "-dump-catalog", catalog)
	code, out, _ := krtt(t, "lint", "--catalog", catalog, filepath.Join(dir, "transitions"))
	if code != 0 || !strings.Contains(out, "0 errors, 0 warnings") {
		t.Fatalf("lint of the scaffold: exit %d\n%s", code, out)
	}
}

func TestInitRefusesAndCreateNeedsAModule(t *testing.T) {
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	write(t, dir, "x.txt", "")
	if code, _, errOut := krtt(t, "init", "--module", "example.com/x", "--krtt", root, dir); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Errorf("init in a non-empty directory: exit %d, %q", code, errOut)
	}
	if code, _, errOut := krtt(t, "init", "--module", "example.com/x", "--krtt", t.TempDir(), t.TempDir()); code != 2 || !strings.Contains(errOut, "not a krtt checkout") {
		t.Errorf("init with a --krtt that is no checkout: exit %d, %q", code, errOut)
	}
	if code, _, errOut := krtt(t, "create", "controller", "gate", "--kind", "Gate", "--dir", t.TempDir()); code != 1 || !strings.Contains(errOut, "krtt init") {
		t.Errorf("create outside a module: exit %d, %q", code, errOut)
	}
	if code, _, _ := krtt(t, "create", "controller", "Gate", "--kind", "Gate"); code != 2 {
		t.Errorf("create with a NAME that is no package name: exit %d, want 2", code)
	}
}
