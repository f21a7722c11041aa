package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const door = "../../engine/testdata/door.yaml"

// krtt runs the command in-process.
func krtt(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestLintDoor(t *testing.T) {
	code, out, errOut := krtt(t, "lint", door)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
	}
	contains(t, "lint output", out, "1 tables, 5 rows: 0 errors, ")
}

// A table whose rows C1 and C2 overlap, so lint must fail with the file and
// line of C2.
const overlapping = `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata:
  name: broken
spec:
  initialState: A
  states:
    - {name: A}
    - {name: B, terminal: true}
  facts:
    - {name: go, type: bool, description: Go on.}
  rows:
    - id: C1
      observed: A
      trigger: go
      action: move
      resulting: B
      from: [A]
      then: {state: B}
    - id: C2
      observed: A
      trigger: go
      action: move
      resulting: B
      from: [A]
      when: {go: true}
      then: {state: B}
`

func TestLintBroken(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "broken.yaml", overlapping)
	code, out, _ := krtt(t, "lint", p)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	contains(t, "lint output", out, p+":20:7: error determinism [broken row C2]", "1 tables, 2 rows: 1 errors")

	// A schema error stops loading; it still names file, line and column.
	p = write(t, dir, "schema.yaml", strings.Replace(overlapping, "      when: {go: true}", "      wen: {go: true}", 1))
	code, out, _ = krtt(t, "lint", p)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	contains(t, "lint output", out, p+":26:7: error schema [broken row C2]: unknown field \"wen\"", "0 tables, 0 rows: 1 errors, 0 warnings")

	// Directories are walked.
	sub := t.TempDir()
	write(t, sub, "broken.yaml", overlapping)
	code, out, _ = krtt(t, "lint", sub)
	if code != 1 || !regexp.MustCompile(`broken\.yaml:\d+:\d+: error`).MatchString(out) {
		t.Errorf("lint of a directory: exit %d\n%s", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"lint"},
		{"render", "--format", "svg", door},
		{"render", "--table", "nope", door},
		{"decide", "--state", "Closed"},
		{"decide", "--table", door},
		{"decide", "--table", door, "--state", "Ajar"},
		{"decide", "--table", door, "--state", "Closed", "--fact", "push"},
		{"decide", "--table", door, "--state", "Closed", "--fact", "push=Pull", "--fact", "locked=false"},
		{"decide", "--table", door, "--state", "Closed", "--fact", "colour=red"},
		{"docs", door},
		{"lint", "--bogus", door},
	} {
		code, out, errOut := krtt(t, args...)
		if code != 2 {
			t.Errorf("krtt %s: exit %d, want 2\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		if errOut == "" {
			t.Errorf("krtt %s: nothing on stderr", strings.Join(args, " "))
		}
	}
	_, _, errOut := krtt(t, "decide", "--table", door, "--state", "Closed", "--fact", "push=Pull", "--fact", "locked=false")
	contains(t, "stderr", errOut, `fact push has no value "Pull" (values: None, Push, Remove)`)
}

func TestRenderFormats(t *testing.T) {
	for format, wants := range map[string][]string{
		"markdown": {"# door — A door with a lock", "| Row | Observed Status | Desired Spec | Trigger / Condition | Reconciliation Action | Resulting Status |",
			"## Machine-checkable rows", "```mermaid", "### Impossible combinations"},
		"mermaid": {"stateDiagram-v2\n", "    Closed --> Open : C1\n"},
		"dot":     {"digraph \"door\" {", `"Closed" -> "Open" [label="C1"];`},
	} {
		code, out, errOut := krtt(t, "render", "--format", format, door)
		if code != 0 {
			t.Fatalf("render %s: exit %d\n%s", format, code, errOut)
		}
		contains(t, "render "+format, out, wants...)
	}
	code, out, _ := krtt(t, "render", "--table", "door", door)
	if code != 0 || !strings.HasPrefix(out, "# door") {
		t.Errorf("render --table door: exit %d\n%s", code, out)
	}
	// A table that does not load is not rendered.
	dir := t.TempDir()
	p := write(t, dir, "bad.yaml", "apiVersion: krtt.dev/v1alpha1\nkind: Table\n")
	code, _, errOut := krtt(t, "render", p)
	if code != 1 || !strings.Contains(errOut, p+":") {
		t.Errorf("render of a broken file: exit %d\n%s", code, errOut)
	}
}

func TestDecideDoor(t *testing.T) {
	code, out, errOut := krtt(t, "decide", "--table", door, "--state", "Closed", "--fact", "locked=false", "--fact", "push=Push")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	contains(t, "decide", out,
		"set door, state Closed, facts: locked=false push=Push",
		"fires: table door row C1 (",
		"  Observed Status:       Door closed\n",
		"  Desired Spec:          Door open\n",
		"  Trigger / Condition:   Pushed, not locked\n",
		"  Reconciliation Action: Swing it open\n",
		"  Resulting Status:      Door open\n",
		"  do: Swing\n",
		"then (every action done):      Closed -> Open",
		`condition Open=True reason Opened message "opened: {detail}"`,
		"inProgress (an action waits):  stays Closed; requeue after 10s (default: the row gives no inProgress)",
		"onFailure (an action failed):  stays Closed; return an error",
		"other rows of state Closed:",
	)
	for _, want := range []string{
		`door C2 \(line \d+\): push=Push, the row wants push=None`,
		`door C4 \(line \d+\): locked=false, the row wants locked=true`,
		`door C3 \(line \d+\): push=Push, the row wants push=Remove`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("decide output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "O1") {
		t.Errorf("row O1 of state Open is explained for state Closed:\n%s", out)
	}
}

func TestDecideJSON(t *testing.T) {
	code, out, errOut := krtt(t, "decide", "--table", door, "--state", "Closed", "--fact", "locked=false", "--fact", "push=Push", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var rep decideReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Decision == nil || rep.Decision.Table != "door" || rep.Decision.Row != "C1" {
		t.Fatalf("decision = %+v", rep.Decision)
	}
	if rep.Facts["locked"] != "false" || rep.Facts["push"] != "Push" {
		t.Errorf("facts = %v", rep.Facts)
	}
	if n := len(rep.Decision.Outcomes); n != 3 {
		t.Fatalf("%d outcomes", n)
	}
	then, wait, fail := rep.Decision.Outcomes[0], rep.Decision.Outcomes[1], rep.Decision.Outcomes[2]
	if then.Branch != "then" || then.To != "Open" || !then.Changed || len(then.Conditions) != 1 || then.Conditions[0].Reason != "Opened" {
		t.Errorf("then = %+v", then)
	}
	if wait.Branch != "inProgress" || wait.Given || wait.To != "Closed" || wait.RequeueAfter != "10s" {
		t.Errorf("inProgress = %+v", wait)
	}
	if fail.Branch != "onFailure" || fail.Given || !fail.Retry {
		t.Errorf("onFailure = %+v", fail)
	}
	got := map[string]string{}
	for _, o := range rep.Others {
		if o.Verdict != "mismatch" {
			t.Errorf("row %s: verdict %s", o.Row, o.Verdict)
		}
		if len(o.Mismatches) == 0 {
			t.Fatalf("row %s: no mismatch named", o.Row)
		}
		m := o.Mismatches[0]
		got[o.Row] = m.Fact + "=" + m.Value + " wants " + strings.Join(m.Wants, ",")
	}
	want := map[string]string{"C2": "push=Push wants None", "C4": "locked=false wants true", "C3": "push=Push wants Remove"}
	if len(got) != len(want) {
		t.Errorf("others = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("row %s: %q, want %q", k, got[k], v)
		}
	}
}

func TestDecideDefaultsAndNoRow(t *testing.T) {
	// No row of Open reads a fact, so none needs to be given.
	code, out, _ := krtt(t, "decide", "--table", door, "--state", "Open")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	contains(t, "decide", out, "defaulted (no row of the state reads them): locked=false push=None", "fires: table door row O1")

	// Rows of Closed read both facts: the missing one is listed with its values.
	code, _, errOut := krtt(t, "decide", "--table", door, "--state", "Closed", "--fact", "push=None")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	contains(t, "stderr", errOut, "--fact locked=false|true")

	// The impossible combination locked=true push=Remove has no row.
	code, out, _ = krtt(t, "decide", "--table", door, "--state", "Closed", "--fact", "push=Remove", "--fact", "locked=true")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	contains(t, "decide", out, "no row fires: no row of set door matches in state Closed", "door C3 (line")
}

// Two tables in a set: deletion is consulted before normal.
const lifecycle = `apiVersion: krtt.dev/v1alpha1
kind: TableSet
metadata:
  name: lifecycle
spec:
  initialState: Running
  states:
    - {name: Running}
    - {name: Gone, terminal: true}
  facts:
    - {name: deleting, type: bool, description: Deletion was requested.}
    - {name: hooks, type: bool, description: Hooks are present.}
  tables: [deletion, normal]
---
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata:
  name: deletion
spec:
  set: lifecycle
  hitPolicy: first
  rows:
    - id: D1
      observed: Running
      trigger: deleting, hooks present
      action: wait
      resulting: Running
      from: [Running]
      when: {deleting: true, hooks: true}
      then: {requeueAfter: 10s}
    - id: D2
      observed: Running
      trigger: deleting
      action: remove
      resulting: Gone
      from: [Running]
      when: {deleting: true}
      guards: [finalizerPresent]
      do: [RemoveFinalizer]
      then: {state: Gone}
      onFailure: {retry: true, conditions: [{type: Deleting, status: "False", reason: Failed, message: "{detail}"}]}
---
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata:
  name: normal
spec:
  set: lifecycle
  rows:
    - id: N1
      observed: Running
      trigger: always
      action: nothing
      resulting: Running
      from: [Running]
      when: {deleting: true}
      then: {requeueAfter: 1m}
    - id: N2
      observed: Running
      trigger: never
      action: nothing
      resulting: Running
      from: [Running]
      when: {deleting: false}
      then: {}
`

func TestDecideSet(t *testing.T) {
	p := write(t, t.TempDir(), "lifecycle.yaml", lifecycle)
	code, out, errOut := krtt(t, "decide", "--table", p, "--state", "Running",
		"--fact", "deleting=true", "--fact", "hooks=true", "--fact", "finalizerPresent=true")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	contains(t, "decide", out,
		"fires: table deletion row D1",
		"onFailure (an action failed):  does not arise: the row runs no actions",
		"deletion D2 (line ",
		"matches too, but row D1 comes first (hitPolicy first)",
		"normal N1 (line ",
		"shadowed: it would match, but table deletion, earlier in the set, decided",
		"normal N2 (line ",
		"not consulted: table deletion, earlier in the set, decided (it would not match anyway: deleting=true, the row wants deleting=false)",
	)

	code, out, _ = krtt(t, "decide", "--table", p, "--state", "Running",
		"--fact", "deleting=true", "--fact", "hooks=false", "--fact", "guard:finalizerPresent=false", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var rep decideReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Decision == nil || rep.Decision.Table != "normal" || rep.Decision.Row != "N1" {
		t.Fatalf("decision = %+v", rep.Decision)
	}
	verdicts := map[string]string{}
	for _, o := range rep.Others {
		verdicts[o.Table+"/"+o.Row] = o.Verdict + ": " + o.Reason
	}
	for row, want := range map[string]string{
		"deletion/D1": "mismatch: hooks=false, the row wants hooks=true",
		"deletion/D2": "mismatch: guard finalizerPresent is false, the row needs it true",
		"normal/N2":   "mismatch: deleting=true, the row wants deleting=false",
	} {
		if verdicts[row] != want {
			t.Errorf("%s: %q, want %q", row, verdicts[row], want)
		}
	}

	// The guard must be given: a row of the state reads it.
	code, _, errOut = krtt(t, "decide", "--table", p, "--state", "Running", "--fact", "deleting=true", "--fact", "hooks=false")
	if code != 2 || !strings.Contains(errOut, "--fact guard:finalizerPresent=false|true") {
		t.Errorf("exit %d\n%s", code, errOut)
	}

	// Two sets loaded: --name picks one.
	code, _, errOut = krtt(t, "decide", "--table", p, "--table", door, "--state", "Open")
	if code != 2 || !strings.Contains(errOut, "pick one with --name") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	code, out, _ = krtt(t, "decide", "--table", p, "--table", door, "--name", "door", "--state", "Open")
	if code != 0 || !strings.Contains(out, "fires: table door row O1") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = krtt(t, "decide", "--table", p, "--table", door, "--name", "normal", "--state", "Running", "--fact", "deleting=false", "--fact", "hooks=false", "--fact", "finalizerPresent=true")
	if code != 0 || !strings.Contains(out, "fires: table normal row N2") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestDocs(t *testing.T) {
	dir := t.TempDir()
	lc := write(t, dir, "lifecycle.yaml", lifecycle)
	cov := write(t, dir, "coverage.json", `{
  "door": {"C1": ["features/door.feature:12 a person pushes an unlocked door"], "C9": ["features/door.feature:99 stale"]},
  "ghost": {"X1": ["x:1 y"]}
}`)
	out := filepath.Join(dir, "site")
	code, stdout, errOut := krtt(t, "docs", "--out", out, "--coverage", cov, door, lc)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	contains(t, "stdout", stdout, "wrote 3 table pages and README.md to "+out)
	contains(t, "stderr", errOut, `coverage names row "C9" of table door, which does not exist`, `coverage names table "ghost", which was not loaded`)
	for _, name := range []string{"door.md", "deletion.md", "normal.md", "README.md"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(out, "README.md"))
	contains(t, "README.md", string(readme),
		"3 tables, 9 rows.",
		"| [door](door.md) | A door with a lock | `door` | 1 of 1 | 5 | 1 of 5 |",
		"| [deletion](deletion.md) | - | `lifecycle` | 1 of 2 | 2 | 0 of 2 |",
		"| [normal](normal.md) | - | `lifecycle` | 2 of 2 | 2 | 0 of 2 |",
	)
	page, _ := os.ReadFile(filepath.Join(out, "door.md"))
	contains(t, "door.md", string(page), "| Scenarios |", "[a person pushes an unlocked door](features/door.feature#L12)", "Scenarios cover 1 of 5 rows")
	page, _ = os.ReadFile(filepath.Join(out, "normal.md"))
	contains(t, "normal.md", string(page), "| Scenarios |", "Scenarios cover 0 of 2 rows", "2 of 2: consulted after `deletion`")

	// Without coverage there is no Scenarios column.
	out2 := filepath.Join(dir, "plain")
	if code, _, errOut := krtt(t, "docs", "--out", out2, door); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	page, _ = os.ReadFile(filepath.Join(out2, "door.md"))
	if strings.Contains(string(page), "Scenarios") {
		t.Error("door.md has a Scenarios column without --coverage")
	}
}
