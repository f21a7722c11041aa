package actions_test

import (
	"github.com/krtt-dev/krtt/actions"
	machineactions "github.com/krtt-dev/krtt/actions/machine"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/test/framework/badtables"
)

// updateBad rewrites test/framework/badtables/testdata/bad/*/want.golden from what Load says:
// KRTT_UPDATE_GOLDEN=1 go test ./tables -run TestLoadRefusesBadTables
var updateBad = os.Getenv("KRTT_UPDATE_GOLDEN") == "1"

func TestGoodFixtureHasNoErrors(t *testing.T) {
	_, err := actions.Load(machineactions.Name, badtables.Root()+"/good")
	// The cut-down set leaves most of the registry unused, which is a
	// warning; Load refuses warnings too, but there must be no error.
	if err == nil {
		t.Fatal("Load accepted a set that leaves most of the registry unused; it refuses every finding")
	}
	if errs := badtables.Errors(err.Error(), badtables.Root()+"/good"); len(errs) > 0 {
		t.Fatalf("the good fixture has errors:\n%s", strings.Join(errs, "\n"))
	}
}

// Every malformed table set is refused by the loader the operator's --tables
// flag uses, with file:line:col, and the row where the problem is in a row.
func TestLoadRefusesBadTables(t *testing.T) {
	cases, err := badtables.Cases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 15 {
		t.Fatalf("%d malformed fixtures, want at least 15", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			_, err := actions.Load(machineactions.Name, c.Dir)
			if err == nil {
				t.Fatal("Load accepted the tables")
			}
			got := badtables.Errors(err.Error(), c.Dir)
			if updateBad {
				if err := os.WriteFile(badtables.GoldenFile(c), []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if len(got) == 0 {
				t.Fatalf("no error finding, only:\n%v", err)
			}
			if !slices.Equal(got, c.Want) {
				t.Fatalf("findings differ from %s (KRTT_UPDATE_GOLDEN=1 rewrites it)\n--- got\n%s\n--- want\n%s",
					badtables.GoldenFile(c), strings.Join(got, "\n"), strings.Join(c.Want, "\n"))
			}
			for _, l := range got {
				if !posRE.MatchString(l) {
					t.Errorf("finding without file:line:col: %s", l)
				}
				if c.Row != "" && !strings.Contains(l, " row "+c.Row+"]") {
					t.Errorf("finding does not name row %s: %s", c.Row, l)
				}
			}
		})
	}
}

func TestLoadRefusesHugeFile(t *testing.T) {
	dir := t.TempDir()
	want, err := badtables.Huge(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = actions.Load(machineactions.Name, dir)
	if err == nil {
		t.Fatal("Load accepted a file over the size limit")
	}
	if got := badtables.Errors(err.Error(), dir); !slices.Equal(got, []string{want}) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}

var posRE = regexp.MustCompile(`^machine\.yaml:[1-9][0-9]*:[1-9][0-9]*: error `)
