package engine

import (
	"strings"
	"testing"
	"time"
)

// fields is a WaitFields over fixed values.
type fields struct {
	now   time.Time
	times map[string]time.Time
	ints  map[string]int64
}

func (f fields) Now() time.Time { return f.now }
func (f fields) Time(p string) (time.Time, bool) {
	t, ok := f.times[p]
	return t, ok
}
func (f fields) Int(p string) (int64, bool) {
	v, ok := f.ints[p]
	return v, ok
}

func TestWaitTiming(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &StateWait{Since: "status.start", Timeout: "spec.seconds", TimedOut: "done"}
	ten := map[string]int64{"spec.seconds": 10}
	for _, tc := range []struct {
		name     string
		after    time.Duration
		ints     map[string]int64
		noStart  bool
		from     time.Duration // countFrom moves the start by this much
		armedBy  bool
		armed    bool
		want     bool
		deadline time.Duration // from start; 0 for none
	}{
		{name: "unset waits forever", after: 1000 * time.Hour},
		{name: "zero waits forever", after: 1000 * time.Hour, ints: map[string]int64{"spec.seconds": 0}},
		{name: "no start, no timeout", after: time.Hour, ints: ten, noStart: true},
		{name: "before the timeout", after: 9 * time.Second, ints: ten, deadline: 10 * time.Second},
		{name: "at the timeout", after: 10 * time.Second, ints: ten, want: true, deadline: 10 * time.Second},
		{name: "after the timeout", after: time.Minute, ints: ten, want: true, deadline: 10 * time.Second},
		{name: "countFrom restarts it", after: time.Minute, ints: ten, from: 55 * time.Second, deadline: 65 * time.Second},
		{name: "not armed", after: time.Minute, ints: ten, armedBy: true},
		{name: "armed", after: time.Minute, ints: ten, armedBy: true, armed: true, want: true, deadline: 10 * time.Second},
	} {
		f := fields{now: start.Add(tc.after), times: map[string]time.Time{}, ints: tc.ints}
		if !tc.noStart {
			f.times["status.start"] = start
		}
		ww := *w
		if tc.armedBy {
			ww.ArmedBy = "status.attempted"
			if tc.armed {
				f.times["status.attempted"] = start
			}
		}
		var from func(time.Time) time.Time
		if tc.from != 0 {
			from = func(s time.Time) time.Time { return s.Add(tc.from) }
		}
		got := ww.Timing(f, from)
		if got.TimedOut != tc.want {
			t.Errorf("%s: TimedOut = %v, want %v", tc.name, got.TimedOut, tc.want)
		}
		var want time.Time
		if tc.deadline != 0 {
			want = start.Add(tc.deadline)
		}
		if !got.Deadline.Equal(want) {
			t.Errorf("%s: Deadline = %v, want %v", tc.name, got.Deadline, want)
		}
	}
}

// A timeout written as a duration is the same for every object; no field
// is read for it.
func TestWaitFixedTimeout(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &StateWait{Since: "status.start", Timeout: "5m", TimedOut: "done"}
	if d, ok := w.FixedTimeout(); !ok || d != 5*time.Minute {
		t.Fatalf("FixedTimeout = %v, %v; want 5m, true", d, ok)
	}
	if _, ok := (&StateWait{Timeout: "spec.seconds"}).FixedTimeout(); ok {
		t.Fatal("a path is not a fixed timeout")
	}
	f := fields{now: start.Add(299 * time.Second), times: map[string]time.Time{"status.start": start},
		ints: map[string]int64{"5m": 1}}
	got := w.Timing(f, nil)
	if got.TimedOut || !got.Deadline.Equal(start.Add(5*time.Minute)) || got.Seconds == nil || *got.Seconds != 300 {
		t.Errorf("before: %+v, want deadline start+5m, not timed out, 300 seconds", got)
	}
	f.now = start.Add(5 * time.Minute)
	if got := w.Timing(f, nil); !got.TimedOut {
		t.Errorf("at the deadline: not timed out")
	}
	delete(f.times, "status.start")
	if got := w.Timing(f, nil); got.TimedOut || !got.Deadline.IsZero() {
		t.Errorf("no start: %+v, want no deadline", got)
	}
}

const waitSet = `apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata:
  name: kettle
spec:
  title: A kettle
  description: A wait with a timeout.
  registry: kettle
  initialState: Heating
  hitPolicy: unique
  states:
    - name: Heating
      description: Heating up.
      wait: {step: heat, on: the water to boil, since: status.start, timeout: spec.seconds, timedOut: tooLong, countFrom: powerBack}
    - {name: Off, description: Switched off., terminal: true}
  facts:
    - {name: tooLong, type: bool, description: Heating took longer than spec.seconds.}
  rows:
    - {id: K1, observed: o, desired: d, trigger: t, action: a, resulting: r, from: [Heating], when: {tooLong: true}, then: {state: Off}}
    - {id: K2, observed: o, desired: d, trigger: t, action: a, resulting: r, from: [Heating], when: {tooLong: false}, then: {requeueAfter: 1m}}
`

// kettle is the environment of the wait tests: its fields and the time
// the power came back.
type kettle struct {
	f         fields
	powerBack time.Time
}

func loadWaitSet(t *testing.T) *TableSet {
	t.Helper()
	lib, fs := LoadBytes("kettle.yaml", []byte(waitSet))
	if len(fs) > 0 || lib == nil {
		t.Fatalf("load: %v", fs)
	}
	return lib.Sets[0]
}

func kettleRegistry(observer, reader, hook bool) *Registry[kettle] {
	reg := NewRegistry[kettle]("kettle")
	if observer {
		reg.Bool("tooLong", func(kettle) bool { return false })
	}
	if reader {
		reg.WaitFields(func(k kettle) WaitFields { return k.f })
	}
	if hook {
		reg.CountFrom("powerBack", "From when the power came back.", func(k kettle, start time.Time) time.Time {
			if k.powerBack.After(start) {
				return k.powerBack
			}
			return start
		})
	}
	return reg
}

// The engine computes a wait's timed-out fact, with the registered hook.
func TestWaitFactComputed(t *testing.T) {
	set := loadWaitSet(t)
	run, err := NewRunner(set, kettleRegistry(false, true, true))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	k := kettle{f: fields{now: start.Add(time.Minute), times: map[string]time.Time{"status.start": start}, ints: map[string]int64{"spec.seconds": 30}}}
	if f, err := run.Observe(k); err != nil || f.Get("tooLong") != "true" {
		t.Fatalf("after the timeout tooLong = %q (%v), want true", f.Get("tooLong"), err)
	}
	k.powerBack = start.Add(45 * time.Second)
	if f, _ := run.Observe(k); f.Get("tooLong") != "false" {
		t.Fatalf("counting from when the power came back tooLong = %q, want false", f.Get("tooLong"))
	}
	if d := WaitTimingOf(kettleRegistry(false, true, true), set.State("Heating").Wait, k).Deadline; !d.Equal(start.Add(75 * time.Second)) {
		t.Fatalf("deadline %v, want 75s after the start", d)
	}
}

func TestWaitFactBinding(t *testing.T) {
	set := loadWaitSet(t)
	for _, tc := range []struct {
		name                   string
		observer, reader, hook bool
		want                   string
	}{
		{"a Go observer as well", true, true, true, "remove its Go observer"},
		{"no field reader", false, false, true, "Registry.WaitFields"},
		{"no countFrom hook", false, true, false, "countFrom hook powerBack"},
	} {
		_, err := NewRunner(set, kettleRegistry(tc.observer, tc.reader, tc.hook))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewRunner error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
