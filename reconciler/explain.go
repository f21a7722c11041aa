package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/engine/explain"
)

// Explain is what every krtt explain report starts from: the kit's Plan of
// the object (the operator's own observe and decide through spec, with the
// direct client c and the clock stopped at now, no action run), its status
// as the kit reads it, and its Events. The controllers add what only their
// kind has (actions/machine, actions/machineset).
func Explain[O client.Object, E any](ctx context.Context, c client.Client, spec Spec[O, E],
	kind string, key client.ObjectKey, now time.Time) (*explain.Report, *Plan[O, E], error) {
	r, err := New(spec, Options{Client: c, Now: func() time.Time { return now }})
	if err != nil {
		return nil, nil, err
	}
	set := r.Runner().Set()
	plan, planErr := r.Plan(ctx, key)
	if planErr != nil && plan.Facts.Map() == nil {
		// Nothing was decided on: no facts to show.
		return nil, nil, planErr
	}
	facts := plan.Facts
	rep := &explain.Report{
		Kind: kind, Namespace: key.Namespace, Name: key.Name, Found: plan.Obs.Found, Set: set.Name,
		Now: now, Facts: facts.Map(), Hooks: []explain.Hook{}, Events: []explain.Event{},
	}
	for _, f := range set.Facts {
		rep.FactOrder = append(rep.FactOrder, f.Name)
	}
	if plan.Obs.Err != nil {
		rep.ObserveError = plan.Obs.Err.Error()
	}
	st := plan.State
	if plan.PersistedState != "" && plan.PersistedState != st.Name {
		rep.StateNote = fmt.Sprintf("status.state %q is unknown to the tables; the operator decides in %s", plan.PersistedState, st.Name)
	}
	if plan.Impossible != nil {
		rep.ImpossibleFacts = plan.Impossible.Name + ": " + plan.Impossible.Description
	}
	rep.State = st.Name
	rep.StateDescription = st.Description
	rep.Phase = st.Phase
	d := plan.Decision
	switch {
	case planErr != nil && errors.Is(planErr, engine.ErrNoDecision):
		rep.DecideError = fmt.Sprintf("no row of set %s matches in state %s", set.Name, st.Name)
	case planErr != nil:
		rep.DecideError = planErr.Error()
	case d == nil:
		rep.DecideError = fmt.Sprintf("state %s is terminal: no row applies", st.Name)
	}
	if d != nil {
		rep.Fires = explain.Fired(d)
		rep.Releases = explain.Releases(set, st, facts, d)
	}
	if rep.Releases == nil {
		rep.Releases = []explain.Release{}
	}
	rep.Others = explain.OtherRows(set, st, facts, d, 0)
	if !plan.Obs.Found {
		return rep, plan, nil
	}
	obj := plan.Obs.Object
	rec := r.spec.Status(obj).GetRecord()
	if rec.Phase != "" {
		rep.Phase = rec.Phase
	}
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		t := ts.UTC()
		rep.DeletionRequested = &t
	}
	if lt := rec.LastTransition; lt != nil {
		rep.LastTransition = &explain.Transition{Table: lt.Table, Row: lt.Row, From: lt.From, To: lt.To, Action: lt.Action,
			Outcome: lt.Outcome, Time: lt.Time.UTC(), Message: lt.Message}
		for _, v := range lt.Via {
			rep.LastTransition.Via = append(rep.LastTransition.Via, explain.ViaRow{Table: v.Table, Row: v.Row, From: v.From, To: v.To,
				Action: v.Action, Message: v.Message})
		}
	}
	events, err := explain.ObjectEvents(ctx, c, kind, obj)
	if err != nil {
		rep.EventsError = err.Error()
	} else {
		rep.Events = events
	}
	return rep, plan, nil
}
