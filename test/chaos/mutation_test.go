package chaos

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/krtt-dev/krtt/actions"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/timeline"
)

// mutation is an edit of the tables that breaks one promise of the
// deletion: the operator run on them (--tables) must be caught breaking it.
type mutation struct {
	name      string
	edits     []edit
	invariant string
}

// edit replaces the first occurrence of old in file (under transitions/).
type edit struct{ file, old, new string }

var mutations = []mutation{
	{
		// D03, which holds the Machine while pre-drain hooks are there,
		// goes on to draining instead, and C20 no longer holds a drain a
		// hook is found in.
		name: "no-pre-drain-hold",
		edits: []edit{
			{"machine/deletion.yaml",
				"      do: [RecordPreDrainHookWait]\n      then:\n        conditions:\n",
				"      do: [RecordPreDrainHookWait]\n      then:\n        state: DrainingNode\n        conditions:\n"},
			{"machine/deletion-checks.yaml",
				"      from: [DrainingNode, WaitingForVolumeDetach]\n      when: {preDrainHooks: true}\n",
				"      from: [WaitingForVolumeDetach]\n      when: {preDrainHooks: true}\n"},
		},
		invariant: timeline.NoDrainDuringPreDrain,
	},
	{
		// D05, the drain done, skips the volume wait: the infrastructure
		// goes while volumes are attached.
		name: "infra-before-volumes",
		edits: []edit{{"machine/deletion.yaml",
			"        state: WaitingForVolumeDetach\n        conditions:\n          - {type: Deleting, status: \"True\", reason: WaitingForVolumeDetach, message: \"Drain completed: {detail}\"}\n",
			"        state: WaitingForPreTerminateHook\n        conditions:\n          - {type: Deleting, status: \"True\", reason: WaitingForPreTerminateHook, message: \"Drain completed: {detail}\"}\n"}},
		invariant: timeline.InfraAfterVolumes,
	},
}

// TestMutations runs the operator on tables each mutation breaks, lint
// clean (the operator loads them), with kube-apiserver restarted as soon
// as the deletion makes progress: the recorder's informers are blind for
// much of the run, and the checker, reading the audit log, must name the
// broken invariant all the same.
func TestMutations(t *testing.T) {
	for i, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			dir := mutateTables(t, m)
			res := shared.run(context.Background(), spec{name: "mutation-" + m.name, machines: 4, restarts: 1, restartDown: time.Second,
				tables: dir, timeout: stalledEviction, seed: uint64(i + 1)}, t.Logf)
			if res.report == nil {
				t.Fatalf("no report: %v", res.err)
			}
			found := 0
			for _, v := range res.report.Violations {
				if v.Invariant == m.invariant {
					found++
				}
			}
			if found == 0 {
				t.Fatalf("the checker did not name %q; it reported %v (run error: %v)", m.invariant, res.report.ByInvariant(), res.err)
			}
			t.Logf("%d× %q named; %d violations in all, %d inside a window the informers were blind in", found, m.invariant,
				len(res.report.Violations), res.blindViolations)
		})
	}
}

// mutateTables copies transitions/ into a temporary directory with m's
// edit, and checks that the tables load (lint clean).
func mutateTables(t *testing.T, m mutation) string {
	t.Helper()
	src := filepath.Join(localcp.RepoRoot(), "transitions")
	dir := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, e := range m.edits {
			if rel != filepath.FromSlash(e.file) {
				continue
			}
			if !strings.Contains(string(b), e.old) {
				t.Fatalf("%s: the text to mutate is not there any more:\n%s", e.file, e.old)
			}
			b = []byte(strings.Replace(string(b), e.old, e.new, 1))
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := actions.LoadSets(dir); err != nil {
		t.Fatalf("the mutated tables do not load: %v", err)
	}
	return dir
}
