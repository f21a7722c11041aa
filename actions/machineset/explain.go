package machineset

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/engine/explain"
	"github.com/krtt-dev/krtt/reconciler"
)

// Explain is krtt explain machineset: the report every kind gets (the
// operator's own observer, facts and decision, status and Events; see
// reconciler.Explain) with the MachineSet's replica counts and what its
// deletion waits on. It runs no action.
func Explain(ctx context.Context, c client.Client, set *engine.TableSet, key client.ObjectKey, now time.Time) (*explain.Report, error) {
	rep, plan, err := reconciler.Explain(ctx, c, Spec(set, c, nil), "MachineSet", key, now)
	if err != nil {
		return nil, err
	}
	s := plan.Obs.Env
	if ms := s.Set; ms != nil {
		c := s.Counts
		rep.Replicas = &explain.Replicas{Desired: s.Replicas(), Total: c.Total, Working: c.Active, Failed: c.Failed, Deleting: c.Deleting,
			Ready: c.Ready, Available: c.Available, UpToDate: c.UpToDate, MaxUnhealthy: s.MaxUnhealthy(), MaxInFlight: s.MaxInFlight(),
			Orphans: len(s.Orphans), Strays: len(s.Strays), MissingTemplates: s.MissingTemplates,
			Burst: BurstReplicas}
		if st := plan.State; st.Wait != nil {
			rep.WaitingOn = explain.WaitFromTiming(st.Wait, st.Wait.Timing(reconciler.ObjectFields(ms, now), nil), now)
			rep.WaitingOn.On += fmt.Sprintf(" (%d left)", len(s.Owned)+len(s.Strays))
		}
	}
	return rep, nil
}
