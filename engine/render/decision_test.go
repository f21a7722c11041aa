package render

import (
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/engine"
)

func loadParcel(t *testing.T) *engine.DecisionTable {
	t.Helper()
	lib, fs := engine.LoadPaths("../testdata/decision/parcel.yaml")
	if fs.HasErrors() {
		t.Fatalf("load: %v", fs)
	}
	d := lib.Decision("parcel")
	if d == nil {
		t.Fatal("decision table parcel not loaded")
	}
	return d
}

func TestDecisionMarkdown(t *testing.T) {
	d := loadParcel(t)
	var b strings.Builder
	if err := DecisionMarkdown(&b, d, Options{Coverage: map[string][]string{"P1": {"features/post.feature:3 a fragile parcel"}}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"# parcel — What the post room does with one parcel",
		"| P1 | A fragile parcel | Marked fragile | `Hand` | Hand it over | [a fragile parcel](features/post.feature#L3) |",
		"| P3 | Any other parcel | Small and sturdy | `Post` | Post it | — |",
		"Scenarios cover 1 of 3 rows; not covered: `P2`, `P3`.",
		"| `Hand` | P1, P2 | hand it over in person |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}
