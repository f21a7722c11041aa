package reconciler

import (
	"maps"
	"testing"
)

// TestFollowManaged: a key the source dropped goes only when it was copied
// before; keys others added stay; the record names what is copied now.
func TestFollowManaged(t *testing.T) {
	const record = "example.dev/managed"
	have := map[string]string{"team": "a", "old": "x", "mine": "y", record: "old,team"}
	want := map[string]string{"team": "b", "new": "z"}
	got := FollowManaged(have, ManagedKeys(have, record), want)
	Record(got, record, want)
	if exp := map[string]string{"team": "b", "new": "z", "mine": "y", record: "new,team"}; !maps.Equal(got, exp) {
		t.Errorf("got %v, want %v", got, exp)
	}
	if have["old"] != "x" {
		t.Errorf("have was changed: %v", have)
	}
	none := FollowManaged(got, ManagedKeys(got, record), nil)
	Record(none, record, nil)
	if exp := map[string]string{"mine": "y"}; !maps.Equal(none, exp) {
		t.Errorf("with nothing to copy: got %v, want %v", none, exp)
	}
	if got := ManagedKeys(map[string]string{}, record); got != nil {
		t.Errorf("no record: %v, want none", got)
	}
}
