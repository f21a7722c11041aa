package machineset

import (
	"context"

	"github.com/krtt-dev/krtt/actions/clusterowner"
	"github.com/krtt-dev/krtt/engine"
)

func ownerAndLabelsSet(s *Scope) bool {
	if s.Set == nil || s.Cluster == nil {
		return true
	}
	return clusterowner.Set(s.Set, s.Set.Spec.ClusterName, s.Cluster)
}

// setClusterOwnerAndLabels changes the MachineSet in memory; the kit
// patches it.
func setClusterOwnerAndLabels(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s", clusterowner.Ensure(s.Set, s.Set.Spec.ClusterName, s.Cluster))
}
