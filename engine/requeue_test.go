package engine

import (
	"context"
	"strings"
	"testing"
	"time"
)

const requeueSet = `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata:
  name: oven
spec:
  title: An oven
  description: A row that looks again when the observation says.
  registry: oven
  initialState: Baking
  hitPolicy: unique
  states:
    - {name: Baking, description: Baking.}
    - {name: Done, description: Baked., terminal: true}
  facts:
    - {name: baked, type: bool, description: The timer rang.}
  rows:
    - {id: O1, observed: o, desired: d, trigger: t, action: a, resulting: r, from: [Baking], when: {baked: true}, then: {state: Done}}
    - {id: O2, observed: o, desired: d, trigger: t, action: a, resulting: r, from: [Baking], when: {baked: false}, then: {requeueAt: timerRings, requeueAfter: 1m}}
`

// oven is the environment: when its timer rings (zero: no timer).
type oven struct{ rings time.Time }

func ovenRegistry(hook bool) *Registry[oven] {
	reg := NewRegistry[oven]("oven")
	reg.Bool("baked", func(oven) bool { return false })
	if hook {
		reg.RequeueAt("timerRings", "When the oven's timer rings.", func(o oven) time.Time { return o.rings })
	}
	return reg
}

// TestRequeueAt: a row's requeueAt hook says when to look again (WakeAt,
// a time by the runner's clock, which the controller keeps as a deadline);
// a time that has come is looked at again shortly; a hook without a time
// adds none. requeueAfter stays as written.
func TestRequeueAt(t *testing.T) {
	lib, fs := LoadBytes("oven.yaml", []byte(requeueSet))
	if len(fs) > 0 || lib == nil {
		t.Fatalf("load: %v", fs)
	}
	set := lib.Sets[0]
	run, err := NewRunner(set, ovenRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	run.SetClock(func() time.Time { return now })
	for _, tc := range []struct {
		name  string
		rings time.Time
		want  time.Time
	}{
		{"in 7 seconds", now.Add(7 * time.Second), now.Add(7 * time.Second)},
		{"in 5 minutes", now.Add(5 * time.Minute), now.Add(5 * time.Minute)},
		{"already past", now.Add(-time.Second), now.Add(MinWakeDelay)},
		{"no time", time.Time{}, time.Time{}},
	} {
		env := oven{rings: tc.rings}
		st, err := run.Step(context.Background(), "o1", "Baking", env)
		if err != nil {
			t.Fatal(err)
		}
		if st.Trace.Row != "O2" || !st.Result.WakeAt.Equal(tc.want) || st.Result.RequeueAfter != time.Minute {
			t.Errorf("%s: row %s wakes at %v and requeues after %v, want O2 at %v and after 1m", tc.name, st.Trace.Row, st.Result.WakeAt, st.Result.RequeueAfter, tc.want)
		}
	}
	if _, err := NewRunner(set, ovenRegistry(false)); err == nil || !strings.Contains(err.Error(), "requeueAt hook timerRings (table oven row O2)") {
		t.Errorf("NewRunner without the hook: %v", err)
	}
	fsUnknown := Check(lib, map[string]*Catalog{"oven": ovenRegistry(false).Catalog()})
	if !strings.Contains(fsUnknown.Error(), "requeueAt hook timerRings is not registered in registry oven") {
		t.Errorf("lint without the hook:\n%s", fsUnknown)
	}
	if fsOK := Check(lib, map[string]*Catalog{"oven": ovenRegistry(true).Catalog()}); strings.Contains(fsOK.Error(), "requeueAt") {
		t.Errorf("lint with the hook:\n%s", fsOK)
	}
}
