package cluster

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/engine/explain"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
)

// Explain explains a Cluster: its connection and, while it is being
// deleted, what its teardown waits on (the MachineDeployments, MachineSets
// and Machines left, each Machine with its deletion step) and its Deleting
// condition.
func Explain(ctx context.Context, c client.Client, set *engine.TableSet, key client.ObjectKey, now time.Time) (*explain.Report, error) {
	// The user's rights, not the operator's: a Cluster without a Secret is
	// explained as self-hosted.
	clusters := remote.New(c, c, remote.Options{Scheme: c.Scheme(), SelfHosted: true})
	// Never started, the cache would keep the connections the observation
	// opened running after the explanation.
	defer clusters.Close()
	rep, plan, err := reconciler.Explain(ctx, c, Spec(set, c, clusters, nil, nil, nil), "Cluster", key, now)
	if err != nil {
		return nil, err
	}
	s := plan.Obs.Env
	if w := s.Workload; w.State != "" {
		rep.NodeSide = &explain.NodeSide{State: string(w.State), Server: w.Server, Secret: w.Secret, Message: w.Message}
	}
	if cl := s.Cluster; cl != nil {
		if cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1.DeletingCondition); cond != nil {
			t := cond.LastTransitionTime.UTC()
			rep.Deleting = &explain.Condition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason, Message: cond.Message, Since: &t}
		}
		if st := plan.State; st.Wait != nil {
			rep.WaitingOn = explain.WaitFromTiming(st.Wait, st.Wait.Timing(reconciler.ObjectFields(cl, now), nil), now)
			rep.WaitingOn.On += ": " + waitDetail(ctx, st.DeletionStep, s)
		}
	}
	return rep, nil
}

// waitDetail says what the Cluster's wait is on now: what of the teardown
// is left (a deletion step's wait), or what provisioning waits for (the
// only other state that declares one).
func waitDetail(ctx context.Context, deleting bool, s *Scope) string {
	if deleting {
		return s.Remaining()
	}
	return describeInfrastructure(ctx, s).Message
}
