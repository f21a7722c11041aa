package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/engine"
)

// updateRender rewrites the goldens under testdata: go test ./engine/render -update
var updateRender = renderUpdateFlag()

// renderUpdateFlag registers -update unless another test file of the
// package already did, so the flag can be shared.
func renderUpdateFlag() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool("update", false, "rewrite golden files")
	return func() bool { return *b }
}

func loadDoor(t *testing.T) *engine.Table {
	t.Helper()
	// Loaded under the name the engine's own tests use, so the goldens'
	// "Defined in" lines stay the same.
	data, err := os.ReadFile("../testdata/door.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lib, fs := engine.LoadBytes("testdata/door.yaml", data)
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load door.yaml: %v", fs)
	}
	tab := lib.Table("door")
	if tab == nil {
		t.Fatal("no table door")
	}
	return tab
}

func doorCatalog() *engine.Catalog {
	return &engine.Catalog{Name: "door", Entries: []engine.Entry{
		{Kind: engine.EntryAction, Name: "Swing", Description: "Swings the door to its other position.", MayWait: true},
		{Kind: engine.EntryFact, Name: "locked", Description: "The lock is engaged."},
		{Kind: engine.EntryFact, Name: "push", Description: "What the person does."},
	}}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateRender() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Render -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden (run with -update to accept):\n--- got ---\n%s", path, got)
	}
}

func TestRenderMarkdownDoor(t *testing.T) {
	tab := loadDoor(t)
	var b bytes.Buffer
	if err := Markdown(&b, tab, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "door.md", b.Bytes())
	if strings.Contains(b.String(), "Scenarios") {
		t.Error("page without coverage has a Scenarios column")
	}
}

func TestRenderMarkdownDoorCatalogCoverage(t *testing.T) {
	tab := loadDoor(t)
	var b bytes.Buffer
	opts := Options{Coverage: map[string][]string{
		"C1": {"features/door.feature:12 a person pushes an unlocked door", "features/door.feature:30 the door swings | twice"},
		"C4": {"features/door.feature:20 a locked door stays shut"},
	}}
	if err := Markdown(&b, tab, doorCatalog(), opts); err != nil {
		t.Fatal(err)
	}
	golden(t, "door_coverage.md", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"| Row | Observed Status | Desired Spec | Trigger / Condition | Reconciliation Action | Resulting Status | Scenarios |",
		"[the door swings \\| twice](features/door.feature#L30)",
		"Scenarios cover 2 of 5 rows; not covered: `C2`, `C3`, `O1`.",
		"Swings the door to its other position.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestRenderMermaidDoor(t *testing.T) {
	var b bytes.Buffer
	if err := Mermaid(&b, loadDoor(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "door.mmd", b.Bytes())
	for _, want := range []string{"[*] --> Closed", "Closed --> Open : C1", "Closed --> Closed : C2, C4", "Gone --> [*]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("mermaid lacks %q", want)
		}
	}
}

func TestRenderDotDoor(t *testing.T) {
	var b bytes.Buffer
	if err := Dot(&b, loadDoor(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "door.dot", b.Bytes())
	if !strings.Contains(b.String(), `"Closed" -> "Open" [label="C1"];`) {
		t.Errorf("dot lacks the C1 edge:\n%s", b.String())
	}
}

func TestRenderDeterministic(t *testing.T) {
	tab := loadDoor(t)
	opts := Options{Coverage: map[string][]string{"C1": {"a:1 x"}, "C2": {"b:2 y"}, "O1": {"c:3 z"}}}
	var first string
	for i := 0; i < 20; i++ {
		var b bytes.Buffer
		if err := Markdown(&b, tab, doorCatalog(), opts); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Fatal("Markdown output differs between runs")
		}
	}
}

// A set of two tables with awkward state names, a wildcard row, guards,
// status fields and alternative outcomes that move the state.
const renderSetYAML = `apiVersion: krtt.dev/v1alpha1
kind: TableSet
metadata:
  name: lifecycle
spec:
  description: Two tables consulted in order.
  registry: lc
  initialState: New
  states:
    - {name: New, phase: Pending, description: Just created.}
    - {name: "In Use", phase: Running, description: "Serving | busy."}
    - {name: Failed, phase: Failed, terminal: true}
  facts:
    - {name: deleting, type: bool, description: The object is being deleted.}
    - {name: unused, type: bool, description: Nobody reads it.}
  statusFields:
    - {name: message, description: Last message.}
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
      observed: Any
      trigger: Deleting
      action: Clean up
      resulting: Failed
      from: "*"
      when: {deleting: true}
      guards: [hookFree]
      do: [Cleanup]
      then: {state: Failed}
      onFailure: {state: Failed, retry: true, status: {message: "cleanup failed: {detail}"}}
---
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata:
  name: normal
spec:
  set: lifecycle
  rows:
    - id: N1
      observed: New
      trigger: Created
      action: Start
      resulting: In use
      from: [New]
      do: [Start]
      then: {state: In Use, requeueAfter: 2m}
      inProgress: {requeueAfter: 5s}
    - id: N2
      observed: In use
      trigger: Always
      action: Nothing
      resulting: In use
      from: ["In Use"]
      then: {}
`

func TestRenderSet(t *testing.T) {
	lib, fs := engine.LoadBytes("lifecycle.yaml", []byte(renderSetYAML))
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load: %v", fs)
	}
	var md bytes.Buffer
	if err := Markdown(&md, lib.Table("normal"), &engine.Catalog{Name: "lc"}, Options{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{
		"| Order in set | 2 of 2: consulted after `deletion`, only when none of their rows matches |",
		"| Set | `lifecycle` |",
		"- **Then** (every action done): go to `In Use`; requeue after 2m",
		"- **In progress** (an action waits): stay in the current state; requeue after 5s",
		"| `Start` | N1 | — | not in the catalog of registry `lc` |",
		"The set also declares `deleting`, `unused`, which this table does not read.",
		"Serving \\| busy.",
		"The rows of this table read no facts.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q\n%s", want, out)
		}
	}
	md.Reset()
	if err := Markdown(&md, lib.Table("deletion"), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	out = md.String()
	for _, want := range []string{
		"1 of 2: consulted first; before `normal`",
		"- **From:** `*` (every non-terminal state: `New`, `In Use`)",
		"- **Guards:** `hookFree` (each must hold)",
		"| `hookFree` | D1 | — | — |",
		"  - status `message` = `cleanup failed: {detail}`",
		"| Field | Set by rows | Description |",
		"`first`: when several rows match",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q\n%s", want, out)
		}
	}

	var mm bytes.Buffer
	if err := Mermaid(&mm, lib.Table("normal")); err != nil {
		t.Fatal(err)
	}
	wantMM := "stateDiagram-v2\n" +
		"    state \"In Use\" as s_In_Use\n" +
		"    [*] --> New\n" +
		"    New --> s_In_Use : N1\n" +
		"    s_In_Use --> s_In_Use : N2\n"
	if mm.String() != wantMM {
		t.Errorf("mermaid:\n%s\nwant:\n%s", mm.String(), wantMM)
	}
	mm.Reset()
	if err := Mermaid(&mm, lib.Table("deletion")); err != nil {
		t.Fatal(err)
	}
	wantMM = "stateDiagram-v2\n" +
		"    state \"In Use\" as s_In_Use\n" +
		"    [*] --> New\n" +
		"    New --> Failed : D1\n" +
		"    s_In_Use --> Failed : D1\n" +
		"    Failed --> [*]\n"
	if mm.String() != wantMM {
		t.Errorf("mermaid:\n%s\nwant:\n%s", mm.String(), wantMM)
	}
	var dot bytes.Buffer
	if err := Dot(&dot, lib.Table("deletion")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dot.String(), `"In Use" -> "Failed" [label="D1"];`) || !strings.Contains(dot.String(), `"Failed" [peripheries=2];`) {
		t.Errorf("dot:\n%s", dot.String())
	}
}

func TestRenderAltEdges(t *testing.T) {
	y := strings.Replace(renderSetYAML, "onFailure: {state: Failed, retry: true", "onFailure: {state: New, retry: true", 1)
	lib, fs := engine.LoadBytes("lifecycle.yaml", []byte(y))
	if lib == nil || fs.HasErrors() {
		t.Fatalf("load: %v", fs)
	}
	var mm, dot bytes.Buffer
	if err := Mermaid(&mm, lib.Table("deletion")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mm.String(), "s_In_Use --> New : (D1 onFailure)") {
		t.Errorf("mermaid lacks the onFailure edge:\n%s", mm.String())
	}
	if strings.Contains(mm.String(), "New --> New") {
		t.Errorf("onFailure back to the same state drawn as a loop:\n%s", mm.String())
	}
	if err := Dot(&dot, lib.Table("deletion")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dot.String(), `"In Use" -> "New" [label="D1 onFailure", style=dashed];`) {
		t.Errorf("dot lacks the dashed edge:\n%s", dot.String())
	}
}

// TestResultSummaryTellsWarning: a row marked warning: true says in the
// docs that its Event is a Warning, next to what else its result does.
func TestResultSummaryTellsWarning(t *testing.T) {
	res := &engine.Result{State: "Failed", Warning: true}
	if got := mdResultSummary(res); !strings.Contains(got, "Warning Event") {
		t.Errorf("summary %q does not tell the Warning Event", got)
	}
	res.Warning = false
	if got := mdResultSummary(res); strings.Contains(got, "Warning") {
		t.Errorf("summary %q tells a Warning for a row without one", got)
	}
}
