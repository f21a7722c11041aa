package engine

import (
	"fmt"
	"strings"
)

// GuardFactPrefix names the bool fact that stands for a registered guard.
const GuardFactPrefix = "guard:"

// resolve checks every name a set and its tables use and builds the indexes
// and cubes the checker and the runtime work with.
func resolve(s *TableSet, findings *Findings) {
	add := func(pos Pos, table, row, hint, format string, args ...any) {
		*findings = append(*findings, Finding{Pos: pos, Severity: SevError, Check: "reference", Table: table, Row: row,
			Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	s.stateIndex = map[string]int{}
	for i, st := range s.States {
		if _, dup := s.stateIndex[st.Name]; dup {
			add(st.Pos, "", "", "rename one of them", "state %q declared twice", st.Name)
		}
		st.index = i
		s.stateIndex[st.Name] = i
	}
	if len(s.States) == 0 {
		add(s.Pos, "", "", "declare spec.states", "set %s declares no states", s.Name)
	}
	resolveHierarchy(s, add)
	if s.InitialState == "" {
		add(s.Pos, "", "", "set spec.initialState", "set %s has no initialState", s.Name)
	} else if i, ok := s.stateIndex[s.InitialState]; !ok {
		add(s.Pos, "", "", "declare it under spec.states", "initialState %q is not a declared state", s.InitialState)
	} else if s.States[i].Abstract {
		add(s.Pos, "", "", "start in one of its sub-states", "initialState %q is abstract: no object can be in it", s.InitialState)
	}
	if s.UnknownState != "" {
		if i, ok := s.stateIndex[s.UnknownState]; !ok {
			add(s.Pos, "", "", "declare it under spec.states", "unknownState %q is not a declared state", s.UnknownState)
		} else if s.States[i].Abstract || s.States[i].Terminal {
			add(s.States[i].Pos, "", "", "use a plain state with rows that say what happens", "unknownState %q must be neither abstract nor terminal", s.UnknownState)
		}
	}
	// Guards used by rows become bool facts so the checks can reason about
	// them like any other fact.
	for _, t := range s.Tables {
		for _, r := range t.Rows {
			for _, g := range r.Guards {
				name := GuardFactPrefix + g
				found := false
				for _, f := range s.Facts {
					found = found || f.Name == name
				}
				if !found {
					s.Facts = append(s.Facts, &Fact{Name: name, Type: FactBool, Guard: true,
						Description: "registered guard " + g, Values: []Value{{Name: "false"}, {Name: "true"}}, Pos: r.Pos})
				}
			}
		}
	}
	s.factIndex = map[string]int{}
	for i, f := range s.Facts {
		if _, dup := s.factIndex[f.Name]; dup {
			add(f.Pos, "", "", "rename one of them", "fact %q declared twice", f.Name)
		}
		f.index = i
		s.factIndex[f.Name] = i
	}
	resolveWaits(s, add)
	fields := map[string]bool{}
	for _, sf := range s.StatusFields {
		fields[sf.Name] = true
	}
	for _, im := range s.Impossible {
		im.cube = s.cubeOf(im.When, "", "", findings)
	}
	for _, t := range s.Tables {
		t.covers = make([]bool, len(s.States))
		ids := map[string]*Row{}
		for i, r := range t.Rows {
			r.table = t
			r.position = i
			if prev, dup := ids[r.ID]; dup && r.ID != "" {
				add(r.Pos, t.Name, r.ID, "give each row a unique id", "duplicate row id %q (first used at line %d)", r.ID, prev.Pos.Line)
			}
			ids[r.ID] = r
			r.fromIdx = r.fromIdx[:0]
			r.declared = r.declared[:0]
			seen := make([]bool, len(s.States))
			applies := func(i int) {
				if !seen[i] {
					seen[i] = true
					r.fromIdx = append(r.fromIdx, i)
				}
			}
			for _, from := range r.From {
				if from == Wildcard {
					for _, st := range s.States {
						if !st.Terminal && !st.Abstract {
							applies(st.index)
							r.declared = append(r.declared, st.index)
						}
					}
					continue
				}
				i, ok := s.stateIndex[from]
				if !ok {
					add(r.Pos, t.Name, r.ID, withDidYouMean(from, s.stateNames(), "known states: "+strings.Join(s.stateNames(), ", ")), "unknown state %q in from", from)
					continue
				}
				if s.States[i].Terminal {
					add(r.Pos, t.Name, r.ID, "a terminal state has no outgoing rows", "row applies in terminal state %q", from)
				}
				r.declared = append(r.declared, i)
				// A row for a parent applies in every state below it that an
				// object can be in.
				for _, st := range s.States {
					if st.Within(s, s.States[i]) && !st.Abstract && (!st.Terminal || st.index == i) {
						applies(st.index)
					}
				}
			}
			for _, i := range r.fromIdx {
				t.covers[i] = true
			}
			when := r.When
			for _, g := range r.Guards {
				when = append(when[:len(when):len(when)], Match{Fact: GuardFactPrefix + g, Values: []string{"true"}, Pos: r.Pos})
			}
			r.cube = s.cubeOf(when, t.Name, r.ID, findings)
			r.thenTo = -1
			for _, res := range r.Results() {
				if res.State != "" {
					i, ok := s.stateIndex[res.State]
					if !ok {
						add(res.Pos, t.Name, r.ID, withDidYouMean(res.State, s.stateNames(), "known states: "+strings.Join(s.stateNames(), ", ")), "unknown result state %q", res.State)
					} else if s.States[i].Abstract {
						add(res.Pos, t.Name, r.ID, "name one of its sub-states", "result state %q is abstract: no object can be in it", res.State)
					} else if res == &r.Then {
						r.thenTo = i
					}
				}
				for _, c := range res.Conditions {
					if len(s.Conditions) > 0 && s.conditionType(c.Type) == nil {
						add(c.Pos, t.Name, r.ID, "declare it under spec.conditions of the set", "condition type %q is not one the set declares (%s)", c.Type, strings.Join(s.conditionTypes(), ", "))
					}
				}
				for _, k := range res.StatusOrder {
					if !fields[k] {
						add(res.Pos, t.Name, r.ID, "declare it under spec.statusFields of the set", "unknown status field %q", k)
					}
				}
			}
		}
	}
}

// Results returns the result branches the row gives: then, and inProgress
// and onFailure when present.
func (r *Row) Results() []*Result {
	out := []*Result{&r.Then}
	if r.InProgress != nil {
		out = append(out, r.InProgress)
	}
	if r.OnFailure != nil {
		out = append(out, r.OnFailure)
	}
	return out
}

func (s *TableSet) stateNames() []string {
	out := make([]string, len(s.States))
	for i, st := range s.States {
		out[i] = st.Name
	}
	return out
}

func (s *TableSet) factNames() []string {
	var out []string
	for _, f := range s.Facts {
		if !f.Guard {
			out = append(out, f.Name)
		}
	}
	return out
}

// cubeOf turns a when clause into a cube, reporting unknown facts and values.
func (s *TableSet) cubeOf(when []Match, table, row string, findings *Findings) cube {
	c := s.fullCube()
	for _, m := range when {
		i, ok := s.factIndex[m.Fact]
		if !ok {
			*findings = append(*findings, Finding{Pos: m.Pos, Severity: SevError, Check: "reference", Table: table, Row: row,
				Message: fmt.Sprintf("unknown fact %q in when", m.Fact), Hint: withDidYouMean(m.Fact, s.factNames(), "known facts: "+strings.Join(s.factNames(), ", "))})
			continue
		}
		f := s.Facts[i]
		var mask uint64
		for _, v := range m.Values {
			vi := f.ValueIndex(v)
			if vi < 0 {
				*findings = append(*findings, Finding{Pos: m.Pos, Severity: SevError, Check: "reference", Table: table, Row: row,
					Message: fmt.Sprintf("fact %s has no value %q", f.Name, v), Hint: withDidYouMean(v, f.valueNames(), "its values: "+strings.Join(f.valueNames(), ", "))})
				continue
			}
			mask |= uint64(1) << uint(vi)
		}
		if mask != 0 {
			c[i] = mask
		}
	}
	return c
}

// Matches reports whether the row's when clause holds for the assignment
// (direct evaluation, without the compiled machine).
func (r *Row) Matches(f Facts) bool { return r.cube.matches(f.v) }

// AppliesIn reports whether the row applies in the state.
func (r *Row) AppliesIn(state *State) bool {
	for _, i := range r.fromIdx {
		if i == state.index {
			return true
		}
	}
	return false
}

// FirstMismatch returns the first match of the row's when clause that the
// assignment violates, in the order the author wrote them.
func (r *Row) FirstMismatch(f Facts) (Match, string, bool) {
	s := r.table.set
	when := r.When
	for _, g := range r.Guards {
		when = append(when[:len(when):len(when)], Match{Fact: GuardFactPrefix + g, Values: []string{"true"}, Pos: r.Pos})
	}
	for _, m := range when {
		i := s.factIndex[m.Fact]
		x := f.v[i]
		if x == unset {
			return m, "", true
		}
		if r.cube[i]&(uint64(1)<<x) == 0 {
			return m, s.Facts[i].Values[x].Name, true
		}
	}
	return Match{}, "", false
}

// resolveHierarchy links states to their parents, refuses unknown parents and
// cycles, and passes phase and deletionStep down to sub-states that do not
// set their own.
func resolveHierarchy(s *TableSet, add func(pos Pos, table, row, hint, format string, args ...any)) {
	for _, st := range s.States {
		st.parent = -1
		if st.Parent == "" {
			continue
		}
		i, ok := s.stateIndex[st.Parent]
		if !ok {
			add(st.Pos, "", "", withDidYouMean(st.Parent, s.stateNames(), "known states: "+strings.Join(s.stateNames(), ", ")), "state %s has unknown parent %q", st.Name, st.Parent)
			continue
		}
		st.parent = i
	}
	for _, st := range s.States {
		steps := 0
		for cur := st; cur.parent >= 0; cur = s.States[cur.parent] {
			if steps++; steps > len(s.States) {
				add(st.Pos, "", "", "a state cannot be its own ancestor", "state %s is part of a parent cycle", st.Name)
				st.parent = -1
				break
			}
		}
	}
	hasChildren := make([]bool, len(s.States))
	for _, st := range s.States {
		if st.parent >= 0 {
			hasChildren[st.parent] = true
		}
	}
	for _, st := range s.States {
		if st.Abstract && !hasChildren[st.index] {
			add(st.Pos, "", "", "give it sub-states (parent: "+st.Name+") or drop abstract", "abstract state %s has no sub-states", st.Name)
		}
		if st.Abstract && st.Quiet {
			add(st.Pos, "", "", "mark the sub-states that should record no Event instead", "abstract state %s cannot be quiet: no object is ever in it", st.Name)
		}
		if st.Abstract && st.Terminal {
			add(st.Pos, "", "", "mark its terminal sub-state instead", "abstract state %s cannot be terminal", st.Name)
		}
		for cur := st.ParentState(s); cur != nil; cur = cur.ParentState(s) {
			if st.Phase == "" {
				st.Phase = cur.Phase
			}
			st.DeletionStep = st.DeletionStep || cur.DeletionStep
		}
	}
}

func (s *TableSet) conditionType(t string) *ConditionType {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c
		}
	}
	return nil
}

func (s *TableSet) conditionTypes() []string {
	out := make([]string, len(s.Conditions))
	for i, c := range s.Conditions {
		out[i] = c.Type
	}
	return out
}
