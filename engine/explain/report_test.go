package explain

import (
	"context"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/transitions"
)

// machineSet is the shipped Machine table set, as the operator embeds it.
func machineSet(t *testing.T) *engine.TableSet {
	t.Helper()
	lib, fs := engine.LoadFS(transitions.FS(), ".")
	if fs.HasErrors() {
		t.Fatalf("load tables: %v", fs.Errors())
	}
	return lib.TableSet("machine")
}

// drainingFacts are the facts of a Machine whose drain is in progress.
func drainingFacts(t *testing.T, set *engine.TableSet) engine.Facts {
	t.Helper()
	f := set.NewFacts()
	for k, v := range map[string]string{
		"machineFound": "true", "apiError": "false", "hasFinalizer": "true", "deleting": "true", "paused": "false",
		"cluster": "Found", "ownerAndLabelsSet": "true", "dataSecretNameSet": "true", "bootstrapConfig": "Ready",
		"infrastructure": "Provisioned", "wasProvisioned": "true", "hasProviderID": "true", "hasNodeRef": "true",
		"node": "Found", "controlPlane": "ExternallyManaged", "controlPlaneMachine": "false", "otherControlPlaneMachines": "false", "bootstrapControlledByOther": "false", "infrastructureControlledByOther": "false", "bootstrapAdoptable": "false", "infrastructureAdoptable": "false", "providerIDMismatch": "false", "infrastructureDeleting": "false", "nodeUnreachable": "false", "providerFailure": "false", "preDrainHooks": "false", "excludeDrain": "false",
		"drainTimedOut": "false", "excludeVolumeWait": "false", "volumeWaitTimedOut": "false",
		"preTerminateHooks": "false", "nodeDeletionTimedOut": "false", "nodeHealth": "Healthy", "healthTimedOut": "false", "nodeConditionsGraceTimedOut": "false", "creationTimedOut": "false", "forceDeletion": "No", "onDrainTimeout": "Skip", "workloadCluster": "SelfHosted", "availabilityPending": "false",
	} {
		if err := f.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if m := f.Missing(); len(m) > 0 {
		t.Fatalf("facts missing: %v", m)
	}
	return f
}

func TestReleasesAndMismatches(t *testing.T) {
	set := machineSet(t)
	f := drainingFacts(t, set)
	st := set.State("DrainingNode")
	d, err := set.Decide(context.Background(), st.Name, f)
	if err != nil || d.Row.ID != "D05" {
		t.Fatalf("decide: %v %+v", err, d)
	}
	var got []string
	for _, r := range Releases(set, st, f, d) {
		got = append(got, r.Fact+"="+r.To+"→"+r.Row)
	}
	if want := "excludeDrain=true→D06 drainTimedOut=true→E06 node=Gone→D07 nodeUnreachable=true→D20 forceDeletion=Label→D21 forceDeletion=NodeUnhealthy→D22"; strings.Join(got, " ") != want {
		t.Errorf("releases %v, want %s", got, want)
	}
	// E02 wants apiError=true and deleting=false: both are reported.
	for _, o := range OtherRows(set, st, f, d, 0) {
		if o.Row == "E02" && len(o.Mismatches) != 2 {
			t.Errorf("E02 mismatches %+v, want apiError and deleting", o.Mismatches)
		}
	}
}

func TestTableCoverage(t *testing.T) {
	set := machineSet(t)
	rep, err := Table(set, "machine-deletion", map[string]map[string][]string{"machine-deletion": {"D05": {"f:1 s"}}})
	if err != nil || !rep.CoverageKnown || rep.Covered != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	var b strings.Builder
	rep.Text(&b)
	if !strings.Contains(b.String(), "covered by:\n    f:1 s") || !strings.Contains(b.String(), "covered: not covered") {
		t.Errorf("text:\n%s", b.String())
	}
	rep, _ = Table(set, "machine-deletion", nil)
	b.Reset()
	rep.Text(&b)
	if !strings.Contains(b.String(), "coverage unknown") {
		t.Errorf("text without coverage:\n%s", b.String())
	}
	if _, err := Table(set, "nope", nil); err == nil {
		t.Error("unknown table accepted")
	}
}
