package machinedeployment

import (
	"slices"

	"github.com/krtt-dev/krtt/actions/clusterowner"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// registerFacts binds every fact of
// transitions/machinedeployment/machinedeployment.yaml (but the timed
// progressDeadlineExceeded, which the engine computes) to the Go that
// computes it from the Scope.
func registerFacts(r *engine.Registry[*Scope]) {
	r.Bool("machineDeploymentFound", func(s *Scope) bool { return s.Found })
	r.Bool("apiError", func(s *Scope) bool { return s.Err != nil })
	r.Bool("hasFinalizer", func(s *Scope) bool {
		return s.MD != nil && slices.Contains(s.MD.Finalizers, clusterv1.MachineDeploymentFinalizer)
	})
	r.Bool("deleting", func(s *Scope) bool { return s.MD != nil && !s.MD.DeletionTimestamp.IsZero() })
	r.Bool("paused", func(s *Scope) bool {
		p, _ := deploymentPause(s)
		return p
	})
	r.Enum("cluster", func(s *Scope) string {
		if s.Cluster == nil {
			return "Missing"
		}
		return "Found"
	})
	r.Bool("ownerAndLabelsSet", func(s *Scope) bool {
		return s.MD == nil || s.Cluster == nil || clusterowner.Set(s.MD, s.MD.Spec.ClusterName, s.Cluster)
	})
	r.Bool("revisionAnnotated", revisionAnnotated)
	r.Bool("orphanSets", func(s *Scope) bool { return len(s.Orphans) > 0 })
	r.Bool("machineSetsLeft", func(s *Scope) bool { return len(s.Sets) > 0 })
	r.Bool("machineSetsOutOfSync", func(s *Scope) bool { return s.MD != nil && len(outOfSync(s)) > 0 })
	r.Bool("historyOverLimit", func(s *Scope) bool { return s.MD != nil && len(historySurplus(s)) > 0 })
	r.Bool("scalingEvent", func(s *Scope) bool { return s.MD != nil && scalingEvent(s) })
	r.Bool("replicasAnnotationsStale", func(s *Scope) bool { return s.MD != nil && len(staleReplicasAnnotations(s)) > 0 })
	r.Bool("rolloutPaused", func(s *Scope) bool { return s.MD != nil && s.MD.Spec.Paused })
	r.Enum("strategy", func(s *Scope) string {
		if s.MD == nil {
			return string(clusterv1.RollingUpdateStrategy)
		}
		return string(s.Strategy())
	})
	r.Enum("revision", func(s *Scope) string {
		switch t := s.Totals(); {
		case s.New == nil:
			return "NewMissing"
		case t.OldSpec > 0 || t.OldTotal > 0:
			return "Rolling"
		}
		return "Done"
	})
	// Cluster API's DeploymentComplete: every wanted Machine is there, up to
	// date and available, and no other is.
	r.Bool("rolloutComplete", func(s *Scope) bool {
		if s.MD == nil {
			return false
		}
		t, want := s.Totals(), s.Replicas()
		return t.Total == want && t.UpToDate == want && t.Available == want
	})
	r.Enum("oldSets", func(s *Scope) string {
		switch t := s.Totals(); {
		case t.OldSpec > 0:
			return "Active"
		case t.OldTotal > 0:
			return "Draining"
		}
		return "Gone"
	})
	r.Bool("newSetBelow", func(s *Scope) bool { return s.New != nil && s.NewTarget() > s.New.Spec() })
	r.Bool("templatesFound", func(s *Scope) bool { return len(s.MissingTemplates) == 0 })
	r.Bool("newSetAbove", func(s *Scope) bool { return s.New != nil && s.New.Spec() > s.Replicas() })
	r.Bool("oldSetsOverReplicas", func(s *Scope) bool { return len(oldExcess(s)) > 0 })
	r.Bool("unavailableRoom", func(s *Scope) bool { return s.MD != nil && oldScaleDown(s) > 0 })
	// Machines being deleted still count, as status.replicas does for
	// Cluster API's reconcileOldMachineSetsOnDelete: the room a deleted
	// Machine leaves is handed on once it is gone.
	r.Bool("oldSetsAboveMachines", func(s *Scope) bool {
		for _, set := range s.Old {
			if set.Spec() > set.Total {
				return true
			}
		}
		return false
	})
	r.Enum("machines", func(s *Scope) string {
		switch n, want := s.Totals().Total, s.Replicas(); {
		case n < want:
			return "Fewer"
		case n > want:
			return "More"
		}
		return "Equal"
	})
	r.Bool("rolloutScheduled", func(s *Scope) bool {
		return s.MD != nil && s.MD.Spec.Rollout.After != nil && s.Now.Before(s.MD.Spec.Rollout.After.Time)
	})
	r.Bool("progressed", func(s *Scope) bool { return s.Progressed })
}

// deploymentPause: the MachineDeployment's own paused annotation or its Cluster's spec.paused,
// and why (reconciler.Paused).
func deploymentPause(s *Scope) (bool, string) {
	if s.MD == nil {
		return false, ""
	}
	return reconciler.Paused("MachineDeployment", s.MD, s.Cluster)
}
