package engine

import (
	"fmt"
	"time"
)

// WaitFields reads what a state's wait is timed by from one observed
// object: the fields its wait names by path, and the clock reading of the
// observation. The controller kit gives one per object type
// (Registry.WaitFields); the engine stays free of any API type.
type WaitFields interface {
	Now() time.Time
	// Time is the time at the path; false when the field is unset.
	Time(path string) (time.Time, bool)
	// Int is the integer at the path; false when the field is unset.
	Int(path string) (int64, bool)
}

// WaitTiming is a state's wait for one object: since when it waits, when
// its timeout counts from and when it ends. The timed-out fact, the kit's
// wake-up at the deadline and explanations all read it, so they agree.
type WaitTiming struct {
	// Since is the value of the wait's since field; zero when unset.
	Since time.Time
	// CountsFrom is when the timeout counts from: Since, or later when the
	// wait's countFrom hook says so. Zero when Since is.
	CountsFrom time.Time
	// Seconds is the value of the timeout field; nil when unset or when
	// the wait has no timeout field.
	Seconds *int64
	// Armed: the timeout runs (the armedBy field, if the wait names one,
	// is set).
	Armed bool
	// Deadline is when the timeout ends; zero when it never does (no
	// start, a timeout of 0 or unset, not armed).
	Deadline time.Time
	// TimedOut: the deadline is not after now.
	TimedOut bool
}

// Timing computes the wait's timing from the fields; countFrom, when not
// nil, is the wait's countFrom hook bound to the object. A timeout of 0 or
// unset waits forever.
func (w *StateWait) Timing(f WaitFields, countFrom func(time.Time) time.Time) WaitTiming {
	var t WaitTiming
	if w == nil || f == nil {
		return t
	}
	if w.Since != "" {
		t.Since, _ = f.Time(w.Since)
	}
	t.CountsFrom = t.Since
	if !t.Since.IsZero() && countFrom != nil {
		if from := countFrom(t.Since); from.After(t.CountsFrom) {
			t.CountsFrom = from
		}
	}
	if d, ok := w.FixedTimeout(); ok {
		v := int64(d / time.Second)
		t.Seconds = &v
	} else if w.Timeout != "" {
		if v, ok := f.Int(w.Timeout); ok {
			t.Seconds = &v
		}
	}
	t.Armed = true
	if w.ArmedBy != "" {
		_, t.Armed = f.Time(w.ArmedBy)
	}
	if t.CountsFrom.IsZero() || t.Seconds == nil || *t.Seconds <= 0 || !t.Armed {
		return t
	}
	t.Deadline = t.CountsFrom.Add(time.Duration(*t.Seconds) * time.Second)
	t.TimedOut = !f.Now().Before(t.Deadline)
	return t
}

// FixedTimeout is the wait's timeout when the tables write it as a
// duration (timeout: 5m) rather than as the path of a field: the same for
// every object. False for a path (a path never parses as a duration).
func (w *StateWait) FixedTimeout() (time.Duration, bool) {
	if w == nil || w.Timeout == "" {
		return 0, false
	}
	d, err := time.ParseDuration(w.Timeout)
	return d, err == nil
}

// WaitTimingOf computes the wait's timing for env with the registry's
// field reader and the wait's countFrom hook; the zero timing when the
// registry reads no fields.
func WaitTimingOf[E any](reg *Registry[E], w *StateWait, env E) WaitTiming {
	if w == nil || reg.waitFields == nil {
		return WaitTiming{}
	}
	return waitTiming(reg, w, env, reg.waitFields(env))
}

func waitTiming[E any](reg *Registry[E], w *StateWait, env E, f WaitFields) WaitTiming {
	var from func(time.Time) time.Time
	if h, ok := reg.countFrom[w.CountFrom]; ok && w.CountFrom != "" {
		from = func(start time.Time) time.Time { return h.fn(env, start) }
	}
	return w.Timing(f, from)
}

// timedOutWait returns the wait that defines the timed-out fact, or nil.
func (s *TableSet) timedOutWait(fact string) *StateWait {
	for _, st := range s.States {
		if st.Wait != nil && st.Wait.TimedOut == fact {
			return st.Wait
		}
	}
	return nil
}

// TimedOutWait returns the wait that defines the fact (a wait's timedOut),
// or nil for a fact a Go observer computes.
func (s *TableSet) TimedOutWait(fact string) *StateWait { return s.timedOutWait(fact) }

// resolveWaits checks what the waits declare: a timed wait has a since
// field, a timed-out fact is a declared bool fact, and states naming the
// same fact describe the same timing.
func resolveWaits(s *TableSet, add func(pos Pos, table, row, hint, format string, args ...any)) {
	first := map[string]*State{}
	for _, st := range s.States {
		w := st.Wait
		if w == nil {
			continue
		}
		if w.Timeout != "" && w.NoTimeout != "" {
			add(w.Pos, "", "", "keep one", "state %s: wait has both timeout and noTimeout", st.Name)
		}
		if w.TimedOut == "" {
			if w.Timeout != "" {
				add(w.Pos, "", "", "name the bool fact its timeout sets in timedOut, and match it in the rows",
					"state %s: wait has a timeout but no timedOut fact, so no row can see it pass", st.Name)
			}
			if w.CountFrom != "" || w.ArmedBy != "" {
				add(w.Pos, "", "", "name the fact in timedOut, or remove countFrom and armedBy",
					"state %s: wait has countFrom or armedBy but no timedOut fact", st.Name)
			}
			continue
		}
		if d, ok := w.FixedTimeout(); ok && (d < time.Second || d%time.Second != 0) {
			add(w.Pos, "", "", "write a whole number of seconds, at least 1s (5m, 300s)",
				"state %s: wait has a fixed timeout of %s, which is not a whole number of seconds", st.Name, w.Timeout)
		}
		if w.Since == "" || w.Timeout == "" {
			add(w.Pos, "", "", "give the wait since and timeout field paths",
				"state %s: wait names timedOut fact %s but lacks since or timeout", st.Name, w.TimedOut)
		}
		i, ok := s.factIndex[w.TimedOut]
		switch {
		case !ok:
			add(w.Pos, "", "", "declare it under spec.facts as a bool fact, with its description",
				"state %s: wait names timedOut fact %s, which is not declared", st.Name, w.TimedOut)
		case s.Facts[i].Type != FactBool:
			add(s.Facts[i].Pos, "", "", "make it a bool fact", "fact %s is a wait's timedOut fact, so it must be bool", w.TimedOut)
		}
		if prev, ok := first[w.TimedOut]; ok {
			p := prev.Wait
			if p.Since != w.Since || p.Timeout != w.Timeout || p.CountFrom != w.CountFrom || p.ArmedBy != w.ArmedBy {
				add(w.Pos, "", "", "give them the same since, timeout, countFrom and armedBy, or different timedOut facts",
					"states %s and %s name timedOut fact %s with different timings", prev.Name, st.Name, w.TimedOut)
			}
			continue
		}
		first[w.TimedOut] = st
	}
}

// bindWait checks that the registry can compute the fact from its wait.
func bindWait[E any](reg *Registry[E], fact string, w *StateWait) []string {
	var missing []string
	if _, dup := reg.observers[fact]; dup {
		missing = append(missing, fmt.Sprintf("nothing: fact %s is computed from its state's wait, remove its Go observer", fact))
	}
	if reg.waitFields == nil {
		missing = append(missing, "a field reader (Registry.WaitFields) for wait fact "+fact)
	}
	if w.CountFrom != "" {
		if _, ok := reg.countFrom[w.CountFrom]; !ok {
			missing = append(missing, fmt.Sprintf("countFrom hook %s (wait fact %s)", w.CountFrom, fact))
		}
	}
	return missing
}
