package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	krttexplain "github.com/krtt-dev/krtt/engine/explain"
)

const parcel = "../../engine/testdata/decision/parcel.yaml"

// krtt decide with --name naming a decision table: the facts of one item
// decide, with no state.
func TestDecideDecisionTable(t *testing.T) {
	code, out, errOut := krtt(t, "decide", "--table", parcel, "--name", "parcel", "--fact", "fragile=false", "--fact", "size=Large")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	contains(t, "decide parcel", out,
		"decision table parcel (one Parcel), facts: fragile=false size=Large",
		"verdict: Hand — hand it over in person",
		"decided by row P2 (",
		"  Trigger:   Does not fit",
		"P1 (line ", "fragile=false, the row wants fragile=true",
		"P3 (line ", "matches too, but row P2 comes first (hitPolicy first)")

	// A fact no row before the deciding one reads may be left out.
	code, out, _ = krtt(t, "decide", "--table", parcel, "--name", "parcel", "--fact", "fragile=true", "-o", "json")
	var rep itemReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Decides == nil || rep.Decides.Row != "P1" || rep.Decides.Verdict != "Hand" {
		t.Fatalf("decide -o json: exit %d, %+v\n%s", code, rep, out)
	}

	// An earlier row that reads a missing fact: no verdict, exit 1, the fact named.
	code, out, _ = krtt(t, "decide", "--table", parcel, "--name", "parcel", "--fact", "size=Small")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	contains(t, "decide parcel without fragile", out, "no verdict: row P1 comes first and may match: give fragile")

	// The shipped Pod verdict table.
	code, out, errOut = krtt(t, "decide", "--table", "../../transitions", "--name", "pod-verdict",
		"--fact", "finished=false", "--fact", "force=true", "--fact", "mirror=false", "--fact", "daemonSet=No")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	contains(t, "decide pod-verdict", out, "verdict: ForceDelete", "decided by row P10 (")

	for _, args := range [][]string{
		{"decide", "--table", parcel, "--name", "parcel", "--state", "Open", "--fact", "fragile=true"},
		{"decide", "--table", parcel, "--name", "parcel", "--fact", "colour=red"},
		{"decide", "--table", parcel, "--name", "parcel", "--fact", "size=Huge"},
	} {
		if code, _, errOut := krtt(t, args...); code != 2 || errOut == "" {
			t.Errorf("%s: exit %d, want 2 with a message\n%s", strings.Join(args, " "), code, errOut)
		}
	}
}

// krtt explain table of a decision table: every row's when and verdict,
// with the scenarios that cover it.
func TestExplainDecisionTable(t *testing.T) {
	dir := t.TempDir()
	cov := write(t, dir, "coverage.json", `{"pod-verdict": {"P10": ["features/force_deletion.feature:13 the force-deletion label"], "P99": ["x"]}}`)
	code, out, errOut := krtt(t, "explain", "table", "pod-verdict", "--coverage", cov)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	goldenCompare(t, "table-pod-verdict-coverage.txt", out)

	code, out, _ = krtt(t, "explain", "table", "pod-verdict", "-o", "json", "--coverage", filepath.Join(dir, "missing.json"))
	var rep krttexplain.TableReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Kind != "DecisionTable" || rep.Subject != "Pod" ||
		rep.CoverageKnown || len(rep.Rows) == 0 || rep.Rows[0].Verdict == "" {
		t.Errorf("explain table pod-verdict -o json: exit %d, %+v\n%s", code, rep, out)
	}

	// With the features directory: every row is linked to a scenario.
	code, out, _ = krtt(t, "explain", "table", "pod-verdict", "--features", "../../features")
	if code != 0 || strings.Contains(out, "not covered") {
		t.Errorf("explain table pod-verdict --features: exit %d\n%s", code, out)
	}
	contains(t, "explain table pod-verdict --features", out, "features/drain_pod_verdicts.feature:")
}
