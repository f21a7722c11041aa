package engine

import "context"

// DecideDirect is the reference evaluator the compiled machines are checked
// against: tables in order, rows in document order, the first row that
// applies in the state (directly or through a parent) and matches wins.
func (s *TableSet) DecideDirect(state string, f Facts) *Decision {
	st := s.State(state)
	if st == nil {
		return nil
	}
	for _, t := range s.Tables {
		if !t.covers[st.index] {
			continue
		}
		for _, r := range t.Rows {
			if r.AppliesIn(st) && r.Matches(f) {
				to := st
				if r.thenTo >= 0 {
					to = s.States[r.thenTo]
				}
				return &Decision{Table: t, Row: r, From: st, To: to, Facts: f}
			}
		}
	}
	return nil
}

// stepPublish is Step followed by Publish, as a controller does once its
// write landed.
func stepPublish[E any](r *Runner[E], ctx context.Context, object, state string, env E) (*Step, error) {
	st, err := r.Step(ctx, object, state, env)
	if err == nil {
		r.Publish(st.Trace)
	}
	return st, err
}
