package explain

import (
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/engine"
)

// Check decides with the facts given: a fact no row before the deciding one
// reads may be left out; an earlier row that reads a missing fact makes the
// decision unknown and names that fact.
func TestDecisionTableCheckPartialFacts(t *testing.T) {
	_, d := loadParcel(t)
	for _, tc := range []struct {
		name    string
		facts   map[string]string
		decides string
		err     string
		others  map[string]string // row → words its Reason contains
	}{
		{name: "first row decides without size", facts: map[string]string{"fragile": "true"}, decides: "P1",
			others: map[string]string{"P2": "may match: give size", "P3": "matches too, but row P1 comes first"}},
		{name: "all given", facts: map[string]string{"fragile": "false", "size": "Large"}, decides: "P2",
			others: map[string]string{"P1": "fragile=false, the row wants fragile=true", "P3": "row P2 comes first"}},
		{name: "an earlier row needs a missing fact", facts: map[string]string{"size": "Small"},
			err:    "row P1 comes first and may match: give fragile",
			others: map[string]string{"P1": "may match: give fragile", "P3": "matches, but an earlier row may match first"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := d.NewFacts()
			for k, v := range tc.facts {
				if err := f.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			c, err := CheckDecision(d, f)
			if err != nil {
				t.Fatal(err)
			}
			if tc.decides != "" && (c.Decides == nil || c.Decides.ID != tc.decides) {
				t.Fatalf("decides %v (error %q), want %s", c.Decides, c.Error, tc.decides)
			}
			if tc.err != "" && (c.Decides != nil || c.Error != tc.err) {
				t.Fatalf("decides %v, error %q; want error %q", c.Decides, c.Error, tc.err)
			}
			for _, o := range c.Others {
				if want, ok := tc.others[o.Row.ID]; ok && !strings.Contains(o.Reason(), want) {
					t.Errorf("row %s: reason %q, want it to contain %q", o.Row.ID, o.Reason(), want)
				}
			}
		})
	}
}

func TestDecisionTableCheckRefusesForeignFacts(t *testing.T) {
	_, d := loadParcel(t)
	other := (&engine.TableSet{}).NewFacts()
	if _, err := CheckDecision(d, other); err == nil {
		t.Fatal("want an error for facts of another table")
	}
}
