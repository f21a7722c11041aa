package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// unset marks a fact no observer has filled in.
const unset = 255

// Facts is one assignment of values to the facts of a set. It is small and
// cheap to copy; build it with Set.NewFacts.
type Facts struct {
	set *TableSet
	v   []uint8
}

// NewFacts returns an assignment with every fact unset.
func (s *TableSet) NewFacts() Facts {
	v := make([]uint8, len(s.Facts))
	for i := range v {
		v[i] = unset
	}
	return Facts{set: s, v: v}
}

// Set assigns a value by name.
func (f Facts) Set(fact, value string) error {
	i, ok := f.set.factIndex[fact]
	if !ok {
		return fmt.Errorf("unknown fact %q in set %s", fact, f.set.Name)
	}
	vi := f.set.Facts[i].ValueIndex(value)
	if vi < 0 {
		return fmt.Errorf("fact %s has no value %q (values: %s)", fact, value, strings.Join(f.set.Facts[i].valueNames(), ", "))
	}
	f.v[i] = uint8(vi)
	return nil
}

// SetBool assigns a bool fact.
func (f Facts) SetBool(fact string, b bool) error {
	if b {
		return f.Set(fact, "true")
	}
	return f.Set(fact, "false")
}

// Get returns the value of a fact, or "" when unset.
func (f Facts) Get(fact string) string {
	i, ok := f.set.factIndex[fact]
	if !ok || f.v[i] == unset {
		return ""
	}
	return f.set.Facts[i].Values[f.v[i]].Name
}

// Missing lists facts with no value.
func (f Facts) Missing() []string {
	var out []string
	for i, x := range f.v {
		if x == unset {
			out = append(out, f.set.Facts[i].Name)
		}
	}
	return out
}

// Map returns the facts that have a value; nil for facts never observed.
func (f Facts) Map() map[string]string {
	if f.set == nil {
		return nil
	}
	m := make(map[string]string, len(f.v))
	for i, x := range f.v {
		if x != unset {
			m[f.set.Facts[i].Name] = f.set.Facts[i].Values[x].Name
		}
	}
	return m
}

// String renders the assignment as sorted name=value pairs.
func (f Facts) String() string {
	m := f.Map()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// Clone copies the assignment.
func (f Facts) Clone() Facts {
	v := make([]uint8, len(f.v))
	copy(v, f.v)
	return Facts{set: f.set, v: v}
}

// Equal reports whether two assignments of the same set give every fact
// the same value.
func (f Facts) Equal(o Facts) bool {
	return f.set == o.set && slices.Equal(f.v, o.v)
}

func (f *Fact) valueNames() []string {
	out := make([]string, len(f.Values))
	for i, v := range f.Values {
		out[i] = v.Name
	}
	return out
}

// cube is a conjunction of per-fact value sets: cube[i] is a bit mask of the
// allowed values of fact i (0 would be empty; all ones means any value).
// Rows and impossible combinations are cubes, which lets the checker decide
// overlap, gaps and masking exactly without enumerating every assignment.
type cube []uint64

func fullMask(f *Fact) uint64 { return (uint64(1) << uint(len(f.Values))) - 1 }

func (s *TableSet) fullCube() cube {
	c := make(cube, len(s.Facts))
	for i, f := range s.Facts {
		c[i] = fullMask(f)
	}
	return c
}

// matches reports whether an assignment lies inside the cube.
func (c cube) matches(v []uint8) bool {
	for i, m := range c {
		x := v[i]
		if x == unset || m&(uint64(1)<<x) == 0 {
			return false
		}
	}
	return true
}

func (c cube) intersect(o cube) (cube, bool) {
	out := make(cube, len(c))
	for i := range c {
		out[i] = c[i] & o[i]
		if out[i] == 0 {
			return nil, false
		}
	}
	return out, true
}

// contains reports whether o lies entirely inside c.
func (c cube) contains(o cube) bool {
	for i := range c {
		if o[i]&^c[i] != 0 {
			return false
		}
	}
	return true
}

// pick returns one assignment of the cube (the lowest value of each fact).
func (c cube) pick() []uint8 {
	v := make([]uint8, len(c))
	for i, m := range c {
		for b := uint8(0); b < 64; b++ {
			if m&(uint64(1)<<b) != 0 {
				v[i] = b
				break
			}
		}
	}
	return v
}

// describe renders an example assignment restricted to the facts in which
// the given cubes are interested, so messages stay short.
func (s *TableSet) describe(v []uint8, relevant []bool) string {
	var parts []string
	for i, x := range v {
		if relevant != nil && !relevant[i] {
			continue
		}
		parts = append(parts, s.Facts[i].Name+"="+s.Facts[i].Values[x].Name)
	}
	if len(parts) == 0 {
		return "(any facts)"
	}
	return strings.Join(parts, " ")
}
