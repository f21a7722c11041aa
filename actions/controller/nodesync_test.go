package controller

import (
	"slices"
	"strings"
	"testing"
)

func TestCompileNodeSync(t *testing.T) {
	s, err := CompileNodeSync([]string{"^tier$", "^team\\.example\\.com/"}, []string{"^note$"})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"tier": true, "tiers": false, "team.example.com/owner": true, "x.team.example.com/owner": false} {
		if got := Matches(s.Labels, key); got != want {
			t.Errorf("label %q matches %v, want %v", key, got, want)
		}
	}
	if !Matches(s.Annotations, "note") || Matches(s.Annotations, "tier") {
		t.Error("annotations match the wrong keys")
	}
	if Matches(nil, "tier") {
		t.Error("no expression matches a key")
	}

	_, err = CompileNodeSync([]string{"ok", "a["}, []string{"(b"})
	if err == nil {
		t.Fatal("bad expressions compiled")
	}
	for _, want := range []string{`--additional-sync-machine-labels "a[" is not a regular expression`, `--additional-sync-machine-annotations "(b" is not a regular expression`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
}

// The list flags take a comma-separated list, repeated flags, and a quoted
// expression with a comma in it.
func TestListFlag(t *testing.T) {
	var l listFlag
	for _, v := range []string{"a,b", "", `"x{1,3}"`} {
		if err := l.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if want := []string{"a", "b", "x{1,3}"}; !slices.Equal(l, want) {
		t.Errorf("list %q, want %q", l, want)
	}
	if err := l.Set(`"open`); err == nil {
		t.Error("an unclosed quote was taken")
	}
}
