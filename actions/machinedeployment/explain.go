package machinedeployment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/engine/explain"
	"github.com/krtt-dev/krtt/reconciler"
)

// Explain is krtt explain machinedeployment: the report every kind gets
// (observer, facts and decision, status and Events; see reconciler.Explain)
// with the rollout's step and what it waits on. It runs no action.
func Explain(ctx context.Context, c client.Client, set *engine.TableSet, key client.ObjectKey, now time.Time) (*explain.Report, error) {
	rep, plan, err := reconciler.Explain(ctx, c, Spec(set, c, nil), "MachineDeployment", key, now)
	if err != nil {
		return nil, err
	}
	s := plan.Obs.Env
	if s.MD == nil {
		return rep, nil
	}
	st := plan.State
	if st.Wait != nil {
		rep.WaitingOn = explain.WaitFromTiming(st.Wait, st.Wait.Timing(reconciler.ObjectFields(s.MD, now), nil), now)
	} else {
		rep.WaitingOn = &explain.Wait{Step: "rollout", Timeout: "no timeout in state " + st.Name}
	}
	rep.WaitingOn.On = Waiting(s) + "; MachineSets: " + setsLine(s)
	return rep, nil
}

func setsLine(s *Scope) string {
	var out []string
	for _, set := range s.Sets {
		role := "old"
		if set == s.New {
			role = "current"
		}
		out = append(out, fmt.Sprintf("%s (revision %d, %s) %d replicas, %d Machines, %d available", set.MS.Name, set.Revision, role, set.Spec(), set.Total, set.Available))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}
