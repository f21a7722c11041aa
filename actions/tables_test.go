package actions_test

import (
	"github.com/krtt-dev/krtt/actions"
	clusteractions "github.com/krtt-dev/krtt/actions/cluster"
	machineactions "github.com/krtt-dev/krtt/actions/machine"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

func TestLoadTablesEmbedded(t *testing.T) {
	set, err := actions.Load(machineactions.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Tables) != 5 {
		t.Fatalf("want the workload-cluster, errors, normal, node-guard and deletion tables, got %d", len(set.Tables))
	}
	cs, err := actions.Load(clusteractions.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Tables) != 2 {
		t.Fatalf("want the cluster-deletion and cluster-status tables, got %d", len(cs.Tables))
	}
}

// An operator given reviewed tables with a lint finding refuses to start,
// and says where the problem is.
func TestLoadTablesRefusesFindings(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(localcp.RepoRoot(), "transitions", "machine")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "deletion.yaml" {
			// D04 now also matches when hooks remain: it overlaps D03.
			b = []byte(strings.Replace(string(b), "when: {preDrainHooks: false}", "when: {preDrainHooks: [true, false]}", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := actions.Load(machineactions.Name, dir); err == nil {
		t.Fatal("tables with an overlap were accepted")
	} else if !strings.Contains(err.Error(), "deletion.yaml") || !strings.Contains(err.Error(), "D03") || !strings.Contains(err.Error(), "D04") {
		t.Fatalf("the error does not name the file and rows: %v", err)
	}
	if _, err := actions.Load(machineactions.Name, filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing directory was accepted")
	}
}
