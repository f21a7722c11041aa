package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var availableOnLine = regexp.MustCompile(`\| available: (\d+)$`)

// The rollout scene runs end to end on a control plane of its own: it
// prints a line for the rows that scale the new MachineSet up and the old
// one down, ends with every Machine of revision 2, and no printed line
// shows fewer than 3 Machines available. The scene itself fails when the
// watch saw more than 4 Machines or fewer than 3 available.
func TestRolloutScene(t *testing.T) {
	var out bytes.Buffer
	d := &demo{start: time.Now(), out: &out}
	if err := d.run(t.TempDir(), 4, sceneRollout); err != nil {
		t.Fatalf("the rollout scene failed: %v\n%s", err, out.String())
	}
	text := out.String()
	_, rollout, found := strings.Cut(text, "Pointing "+rollout+" at new templates")
	if !found {
		t.Fatalf("no rollout step:\n%s", text)
	}
	rollout, _, _ = strings.Cut(rollout, "== Summary")
	var rows []string
	for _, l := range strings.Split(rollout, "\n") {
		if strings.Contains(l, "machinedeployment-rollout/") {
			rows = append(rows, l)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no row line during the rollout:\n%s", text)
	}
	for _, want := range []string{"machinedeployment-rollout/O08 ", "machinedeployment-rollout/O09 "} {
		if !strings.Contains(rollout, want) {
			t.Errorf("no line for %s(ScaleUpNewMachineSet / ScaleDownOldMachineSets):\n%s", want, rollout)
		}
	}
	for _, l := range rows {
		m := availableOnLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("row line without an available count: %q", l)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n < rolloutReplicas-rolloutMaxUnavailable {
			t.Errorf("a row left %d available: %q", n, l)
		}
	}
	if last := rows[len(rows)-1]; !strings.Contains(last, "Machines: revision 2: 3 |") {
		t.Errorf("the last row line does not show 3 Machines of revision 2 and no other: %q", last)
	}
	if !strings.Contains(rollout, "at most 4 Machines") || !strings.Contains(rollout, "never fewer than 3 available") {
		t.Errorf("no line on the extremes:\n%s", rollout)
	}
}
