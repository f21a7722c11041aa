package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The examples module's Door: its tables and the catalog its binary wrote.
const (
	exampleTables  = "../../examples/door/transitions"
	exampleCatalog = "../../examples/door/catalog.json"
)

func TestLintCatalogChecksForeignTables(t *testing.T) {
	code, out, errOut := krtt(t, "lint", "--catalog", exampleCatalog, exampleTables)
	if code != 0 || !strings.Contains(out, ": 0 errors, 0 warnings") {
		t.Fatalf("lint --catalog of the example: exit %d, want 0 with no finding\n%s%s", code, out, errOut)
	}

	// A misspelled action is an error, with the registered name to use.
	dir := t.TempDir()
	for _, name := range []string{"door.yaml", "door-rows.yaml"} {
		raw, err := os.ReadFile(filepath.Join(exampleTables, name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, name, strings.Replace(string(raw), "do: [RingBell, MarkOpened]", "do: [RingBel, MarkOpened]", 1))
	}
	code, out, _ = krtt(t, "lint", "--catalog", exampleCatalog, dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1 for a misspelled action\n%s", code, out)
	}
	contains(t, "lint output", out, `unknown action "RingBel"`, "did you mean RingBell?")
}

func TestLintWithoutCatalogNamesTheWayToOne(t *testing.T) {
	code, out, _ := krtt(t, "lint", exampleTables)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (an unknown registry is a warning)\n%s", code, out)
	}
	contains(t, "lint output", out, `no registry "door" is known`, "--catalog FILE")
}

func TestUnknownRegistryNamesTheCatalogsRegistries(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}
	cat := write(t, dir, "catalog.json", strings.Replace(string(raw), `"name": "door"`, `"name": "doors"`, 1))
	_, out, _ := krtt(t, "lint", "--catalog", cat, exampleTables)
	contains(t, "lint output", out, `no registry "door" is known`, "set spec.registry to one of: doors")
	if strings.Contains(out, "machine") {
		t.Errorf("the advice names krtt's registries, not the catalog's:\n%s", out)
	}
}

func TestCatalogFileInYAMLAndBadOnes(t *testing.T) {
	dir := t.TempDir()
	y := write(t, dir, "c.yaml", `apiVersion: krtt.dev/v1alpha1
kind: Catalogs
registries:
  - name: door
    entries:
      - {kind: fact, name: found}
`)
	code, out, _ := krtt(t, "lint", "--catalog", y, exampleTables)
	if code != 1 {
		t.Fatalf("exit %d, want 1: the YAML catalog lacks most of the registry\n%s", code, out)
	}
	contains(t, "lint output", out, "fact wantOpen has no observer in registry door")
	bad := write(t, dir, "bad.json", `{"kind": "Something", "registries": []}`)
	code, _, errOut := krtt(t, "lint", "--catalog", bad, exampleTables)
	if code != 1 || !strings.Contains(errOut, "Catalogs") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the kind Catalogs", code, errOut)
	}
}

// explain table reads tables from --tables DIR with the catalog; warnings
// do not stop it.
func TestExplainTableOfForeignTables(t *testing.T) {
	code, out, errOut := krtt(t, "explain", "table", "door", "--tables", exampleTables, "--catalog", exampleCatalog, "--coverage", filepath.Join(t.TempDir(), "none.json"))
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	contains(t, "explain table", out, "C01", "RingBell", "O02")
	// Without the catalog the registry is unknown: a warning, printed.
	code, out, errOut = krtt(t, "explain", "table", "door", "--tables", exampleTables, "--coverage", filepath.Join(t.TempDir(), "none.json"))
	if code != 0 {
		t.Fatalf("exit %d with warnings\n%s%s", code, out, errOut)
	}
	contains(t, "explain table stderr", errOut, `no registry "door" is known`)
	contains(t, "explain table", out, "D02")
}

func TestRenderWithCatalogDescribesActions(t *testing.T) {
	code, out, errOut := krtt(t, "render", "--catalog", exampleCatalog, exampleTables)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	contains(t, "render", out, "Create or update the bell ConfigMap, owned by the Door.")
}

// decide with --catalog checks the tables with it, as lint does, and
// describes the fired row's actions as the catalog does.
func TestDecideWithCatalog(t *testing.T) {
	facts := []string{"--state", "Closed", "--fact", "found=true", "--fact", "deleting=false", "--fact", "wantOpen=true"}
	code, out, errOut := krtt(t, append([]string{"decide", "--catalog", exampleCatalog, "--table", exampleTables}, facts...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	contains(t, "decide", out, "fires: table door row C01",
		"  do: RingBell, MarkOpened\n      RingBell: Create or update the bell ConfigMap, owned by the Door.\n      MarkOpened: Set status.openedAt")
	if errOut != "" {
		t.Errorf("the example's tables pass the checks, yet stderr says:\n%s", errOut)
	}

	code, out, _ = krtt(t, append([]string{"decide", "--catalog", exampleCatalog, "--table", exampleTables, "-o", "json"}, facts...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var rep decideReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.Actions["RingBell"]; got != "Create or update the bell ConfigMap, owned by the Door." {
		t.Errorf("actions[RingBell] = %q", got)
	}

	// krtt's own registries do not describe the Door's actions.
	_, out, _ = krtt(t, append([]string{"decide", "--table", exampleTables}, facts...)...)
	if strings.Contains(out, "RingBell: ") {
		t.Errorf("without the catalog an action is described:\n%s", out)
	}

	// A misspelled action: the catalog refuses the tables as lint does;
	// without one they are taken as they are.
	dir := t.TempDir()
	for _, name := range []string{"door.yaml", "door-rows.yaml"} {
		raw, err := os.ReadFile(filepath.Join(exampleTables, name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, name, strings.Replace(string(raw), "do: [RingBell, MarkOpened]", "do: [RingBel, MarkOpened]", 1))
	}
	code, out, errOut = krtt(t, append([]string{"decide", "--catalog", exampleCatalog, "--table", dir}, facts...)...)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and no decision for a misspelled action\n%s", code, out, errOut)
	}
	contains(t, "decide stderr", errOut, `unknown action "RingBel"`, "did you mean RingBell?", "krtt lint --catalog "+exampleCatalog+" "+dir)
	code, out, errOut = krtt(t, append([]string{"decide", "--table", dir}, facts...)...)
	if code != 0 || !strings.Contains(out, "  do: RingBel, MarkOpened\n") {
		t.Fatalf("without --catalog: exit %d\n%s%s", code, out, errOut)
	}

	bad := write(t, dir, "bad.json", `{"kind": "Something", "registries": []}`)
	code, _, errOut = krtt(t, append([]string{"decide", "--catalog", bad, "--table", exampleTables}, facts...)...)
	if code != 1 || !strings.Contains(errOut, "Catalogs") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the kind Catalogs", code, errOut)
	}
}
