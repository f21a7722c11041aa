package engine

import (
	"context"
	"math/rand"
	"strings"
	"testing"
)

// BenchmarkDecide measures one reconcile through a Runner: observe the
// facts, fire the compiled machines, run the row's actions, resolve the
// result and publish the trace to a subscriber.
func BenchmarkDecide(b *testing.B) {
	b.Run("door", func(b *testing.B) {
		s := mustLoadSet(b, "door", "testdata/door.yaml")
		r, err := NewRunner(s, doorRegistry(true))
		if err != nil {
			b.Fatal(err)
		}
		env := doorEnv{push: "Push", swing: Outcome{Status: Done, Message: "by the benchmark"}}
		benchStep(b, r, "Closed", env, "C1")
	})
	b.Run("machine-deletion", func(b *testing.B) {
		lib := loadShipped(b)
		s := lib.TableSet("machine")
		if s == nil || s.State("Deleting") == nil {
			b.Fatal("the shipped tables have no machine set with a Deleting state")
		}
		env, row := deletionAssignment(b, s, "Deleting")
		r, err := NewRunner(s, syntheticRegistry(s))
		if err != nil {
			b.Fatal(err)
		}
		benchStep(b, r, "Deleting", env, row)
	})
}

func benchStep[E any](b *testing.B, r *Runner[E], state string, env E, row string) {
	ctx := context.Background()
	n := 0
	r.Subscribe(func(tr Trace) {
		if tr.Row != "" {
			n++
		}
	})
	st, err := stepPublish(r, ctx, "default/bench", state, env)
	if err != nil {
		b.Fatal(err)
	}
	if st.Decision.Row.ID != row {
		b.Fatalf("decided row %s, want %s", st.Decision.Row.ID, row)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stepPublish(r, ctx, "default/bench", state, env); err != nil {
			b.Fatal(err)
		}
	}
	if n == 0 {
		b.Fatal("no trace published")
	}
}

// syntheticRegistry registers, for every fact of the set, an observer that
// reads the value from the environment (a slice indexed like set.Facts),
// and for every action a no-op that finishes.
func syntheticRegistry(s *TableSet) *Registry[[]string] {
	reg := NewRegistry[[]string](s.Registry)
	for i, f := range s.Facts {
		if f.Guard {
			reg.Guard(strings.TrimPrefix(f.Name, GuardFactPrefix), f.Description, f.Reads, func(e []string) bool { return e[i] == "true" })
			continue
		}
		reg.Enum(f.Name, func(e []string) string { return e[i] })
	}
	for _, sf := range s.StatusFields {
		reg.StatusField(sf.Name, sf.Description, func([]string, string) {})
	}
	seen := map[string]bool{}
	for _, t := range s.Tables {
		for _, row := range t.Rows {
			for _, a := range row.Do {
				if !seen[a] {
					seen[a] = true
					reg.Action(a, "no-op", func(context.Context, []string) Outcome {
						return Outcome{Status: Done, Message: "done"}
					})
				}
			}
		}
	}
	return reg
}

// deletionAssignment finds an assignment for which, in the state, the last
// table of the set (the deletion table) decides after the earlier tables
// were consulted: the longest path through the machines.
func deletionAssignment(b *testing.B, s *TableSet, state string) ([]string, string) {
	st := s.State(state)
	last := s.Tables[len(s.Tables)-1]
	rng := rand.New(rand.NewSource(1))
	for _, row := range last.Rows {
		if !row.AppliesIn(st) {
			continue
		}
		for range 20000 {
			f := s.NewFacts()
			for i, fact := range s.Facts {
				var vals []int
				for v := range fact.Values {
					if row.cube[i]&(1<<uint(v)) != 0 {
						vals = append(vals, v)
					}
				}
				f.v[i] = uint8(vals[rng.Intn(len(vals))])
			}
			if impossibleAssignment(s, f) {
				continue
			}
			if d := s.DecideDirect(state, f); d != nil && d.Row == row {
				env := make([]string, len(s.Facts))
				for i, x := range f.v {
					env[i] = s.Facts[i].Values[x].Name
				}
				return env, row.ID
			}
		}
	}
	b.Fatalf("no assignment reaches table %s in state %s", last.Name, state)
	return nil, ""
}
