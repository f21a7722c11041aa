package controller

import (
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
