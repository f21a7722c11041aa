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
	// long keeps a mutation to -chaos.long (make chaos): each costs a run
	// against a restarted kube-apiserver, too much for make test.
	long bool
}

// edit replaces the first occurrence of old in file (under transitions/).
type edit struct{ file, old, new string }

// Two invariants have no mutation, because no table edit can break them:
// PDBRespected, since every eviction goes through the Eviction API, which
// refuses what a budget does not allow whatever row asks for it (deleting
// the Pods instead is EvictionOnly's mutation); and CompleteRecord, which
// is about the audit log and the recorder, not about what the operator
// does.
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
		// goes while volumes are attached. Long only: under make test's
		// load the checker has twice named nothing here in a fresh-clone
		// run (never alone or under a lighter load); a failure prints the
		// record of the provider objects and volumes, which is what the
		// cause is still to be read from.
		name: "infra-before-volumes",
		edits: []edit{{"machine/deletion.yaml",
			"        state: WaitingForVolumeDetach\n        conditions:\n          - {type: Deleting, status: \"True\", reason: WaitingForVolumeDetach, message: \"Drain completed: {detail}\"}\n",
			"        state: WaitingForPreTerminateHook\n        conditions:\n          - {type: Deleting, status: \"True\", reason: WaitingForPreTerminateHook, message: \"Drain completed: {detail}\"}\n"}},
		invariant: timeline.InfraAfterVolumes,
		long:      true,
	},
	{
		// D05 reports the drain done without evicting, and skips the volume
		// wait the Pods left would hold: the infrastructure goes under them.
		// DrainNode moves to D22 (a Node unhealthy for 5 minutes, which no
		// run has) only because lint rejects a registered action no table
		// uses.
		name: "drain-without-evicting",
		edits: []edit{{"machine/deletion.yaml",
			"      do: [MarkDrainStart, DrainNode]\n      then:\n        state: WaitingForVolumeDetach\n        conditions:\n          - {type: Deleting, status: \"True\", reason: WaitingForVolumeDetach, message: \"Drain completed: {detail}\"}\n      inProgress:\n        requeueAfter: 20s\n        conditions:\n          - {type: Deleting, status: \"True\", reason: DrainingNode, message: \"{detail}\"}\n",
			"      do: [MarkDrainStart]\n      then:\n        state: WaitingForPreTerminateHook\n        conditions:\n          - {type: Deleting, status: \"True\", reason: WaitingForPreTerminateHook, message: \"Drain completed\"}\n"},
			{"machine/deletion.yaml",
				"forceDeletion: NodeUnhealthy}\n      do: [MarkDrainStart, ForceDrainNode, DeleteVolumeAttachments]\n",
				"forceDeletion: NodeUnhealthy}\n      do: [MarkDrainStart, DrainNode, DeleteVolumeAttachments]\n"}},
		invariant: timeline.InfraAfterDrain,
		long:      true,
	},
	{
		// D13 deletes the Node as it starts on the infrastructure.
		name: "node-before-infra",
		edits: []edit{{"machine/deletion.yaml",
			"      do: [DeleteInfrastructure]\n",
			"      do: [DeleteNode, DeleteInfrastructure]\n"}},
		invariant: timeline.NodeAfterInfra,
		long:      true,
	},
	{
		// D13 lets the Machine go as it starts on the infrastructure.
		name: "finalizer-before-infra",
		edits: []edit{{"machine/deletion.yaml",
			"      do: [DeleteInfrastructure]\n",
			"      do: [RemoveFinalizer, DeleteInfrastructure]\n"}},
		invariant: timeline.FinalizerLast,
		long:      true,
	},
	{
		// D11 goes on to the infrastructure while pre-terminate hooks are
		// there, and C21 no longer holds it: its from names a state whose
		// infrastructure is always gone, so it never matches.
		name: "no-pre-terminate-hold",
		edits: []edit{
			{"machine/deletion.yaml",
				"      do: [RecordPreTerminateHookWait]\n      then:\n        conditions:\n",
				"      do: [RecordPreTerminateHookWait]\n      then:\n        state: WaitingForInfrastructureDeletion\n        conditions:\n"},
			{"machine/deletion-checks.yaml",
				"      from: [WaitingForInfrastructureDeletion, WaitingForBootstrapDeletion, DeletingNode]\n      when: {preTerminateHooks: true}",
				"      from: [WaitingForBootstrapDeletion, DeletingNode]\n      when: {preTerminateHooks: true}"},
		},
		invariant: timeline.NoInfraDuringPreTerm,
		long:      true,
	},
	{
		// D05 deletes the Pods (the forced drain of D21) instead of evicting
		// them; D21 gets the eviction in exchange, since lint rejects a
		// registered action no table uses, and no run sets the force label.
		name: "drain-by-deleting",
		edits: []edit{
			{"machine/deletion.yaml",
				"      do: [MarkDrainStart, DrainNode]\n",
				"      do: [MarkDrainStart, ForceDrainNode]\n"},
			{"machine/deletion.yaml",
				"      do: [MarkDrainStart, ForceDrainNode, DeleteVolumeAttachments]\n",
				"      do: [MarkDrainStart, DrainNode, DeleteVolumeAttachments]\n"},
		},
		invariant: timeline.EvictionOnly,
		long:      true,
	},
	{
		// D18 deletes the Node and goes back to the pre-terminate step,
		// which (no hooks, infrastructure and bootstrap gone) comes to
		// DeletingNode again, where D19 ends it: a step back, not a loop
		// that would never finish. Back past the infrastructure step: that
		// is the last state persisted before D18 (the simulated bootstrap
		// object has no finalizer, so D14, D15, D16 and D18 run in one
		// reconcile, one status patch), and going back to it would persist
		// no move.
		name: "node-deletion-steps-back",
		edits: []edit{{"machine/deletion.yaml",
			"      do: [MarkNodeDeletionStart, DeleteNode, RemoveFinalizer]\n      then:\n        state: DeletionCompleted\n        conditions:\n          - {type: Deleting, status: \"True\", reason: DeletionCompleted, message: \"Deletion completed\"}\n",
			"      do: [MarkNodeDeletionStart, DeleteNode]\n      then:\n        state: WaitingForPreTerminateHook\n        conditions:\n          - {type: Deleting, status: \"True\", reason: WaitingForPreTerminateHook, message: \"The Node is deleted\"}\n"}},
		invariant: timeline.StateForwardOnly,
		long:      true,
	},
	{
		// D13 and D25 swap their cases: the Machine's own infrastructure
		// object is released (left in place as if it belonged to something
		// else) and the SimMachine outlives its Machine.
		name: "infra-left-behind",
		edits: []edit{
			{"machine/deletion.yaml",
				"infrastructureControlledByOther: false}\n      do: [DeleteInfrastructure]\n",
				"infrastructureControlledByOther: true}\n      do: [DeleteInfrastructure]\n"},
			{"machine/deletion.yaml",
				"infrastructureControlledByOther: true}\n      do: [ReleaseInfrastructure]\n",
				"infrastructureControlledByOther: false}\n      do: [ReleaseInfrastructure]\n"},
		},
		invariant: timeline.NothingLeaks,
		long:      true,
	},
}

// TestMutations runs the operator on tables each mutation breaks, lint
// clean (the operator loads them), with kube-apiserver restarted as soon
// as the deletion makes progress: the recorder's informers are blind for
// much of the run, and the checker, reading the audit log, must name the
// broken invariant all the same.
func TestMutations(t *testing.T) {
	for i, m := range mutations {
		// The long-only mutations are not run at all in the short suite
		// (make test): TestMutationsLoad keeps their edits applying there.
		if m.long && !*long {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			dir := mutateTables(t, m)
			res := shared.run(context.Background(), spec{name: "mutation-" + m.name, machines: 4, restarts: 1, restartDown: time.Second,
				tables: dir, timeout: stalledEviction, seed: uint64(i + 1)}, t.Logf)
			if res.report == nil {
				t.Fatalf("no report: %v", res.err)
			}
			found := 0
			var named []string
			for _, v := range res.report.Violations {
				if v.Invariant == m.invariant {
					found++
					named = append(named, v.Object+": "+v.Message)
				}
			}
			if found == 0 {
				t.Fatalf("the checker did not name %q; it reported %v (run error: %v); its notes:\n%s\nthe record of its Machines, provider objects and volumes:\n%s",
					m.invariant, res.report.ByInvariant(), res.err, strings.Join(res.report.Notes, "\n"), recordOf(res.record, "Machine", "SimMachine", "VolumeAttachment"))
			}
			t.Logf("%d× %q named; %d violations in all, %d inside a window the informers were blind in (%s); notes:\n%s", found, m.invariant,
				len(res.report.Violations), res.blindViolations, strings.Join(named[:min(3, len(named))], "; "), strings.Join(res.report.Notes, "\n"))
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

// TestMutationsLoad keeps the long mutations honest in make test too: an
// edit of the shipped tables that no longer applies, or no longer loads,
// shows here instead of only in make chaos.
func TestMutationsLoad(t *testing.T) {
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) { mutateTables(t, m) })
	}
}

// recordOf keeps the lines of a formatted record that name one of kinds.
func recordOf(record string, kinds ...string) string {
	var out []string
	for line := range strings.Lines(record) {
		for _, k := range kinds {
			if strings.Contains(line, " "+k+" ") {
				out = append(out, strings.TrimRight(line, "\n"))
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
