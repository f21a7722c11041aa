package machineset

import (
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// registerFacts binds every fact of transitions/machineset/machineset.yaml
// to the Go that computes it from the Scope. Counts stay in the Scope: a
// fact only says which side of a limit they are on.
func registerFacts(r *engine.Registry[*Scope]) {
	r.Bool("machineSetFound", func(s *Scope) bool { return s.Found })
	r.Bool("apiError", func(s *Scope) bool { return s.Err != nil })
	r.Bool("hasFinalizer", func(s *Scope) bool {
		return s.Set != nil && hasString(s.Set.Finalizers, clusterv1.MachineSetFinalizer)
	})
	r.Bool("deleting", func(s *Scope) bool {
		return s.Set != nil && !s.Set.DeletionTimestamp.IsZero()
	})
	r.Bool("paused", func(s *Scope) bool {
		p, _ := setPause(s)
		return p
	})
	r.Bool("ownerAndLabelsSet", ownerAndLabelsSet)
	r.Bool("templatesOwned", templatesOwned)
	r.Bool("creationDisabled", func(s *Scope) bool {
		return s.Set != nil && s.Set.Annotations[clusterv1.DisableMachineCreateAnnotation] == "true"
	})
	r.Enum("cluster", func(s *Scope) string {
		if s.Cluster == nil {
			return "Missing"
		}
		return "Found"
	})
	r.Bool("strays", func(s *Scope) bool { return len(s.Strays) > 0 })
	r.Bool("orphans", func(s *Scope) bool { return len(s.Orphans) > 0 })
	r.Bool("selectorOverlap", func(s *Scope) bool { return len(s.Overlaps) > 0 })
	r.Bool("selectorConditionCurrent", selectorConditionCurrent)
	r.Enum("replicasDiff", func(s *Scope) string {
		switch n, want := s.Counts.Total, s.Replicas(); {
		case n < want:
			return "Missing"
		case n > want:
			return "Surplus"
		}
		return "Equal"
	})
	r.Enum("failedMachines", func(s *Scope) string {
		c := s.Counts
		switch {
		case s.Set == nil || c.Replace == 0:
			return "None"
		case c.Replace > s.MaxUnhealthy():
			return "OverLimit"
		case s.RemediationTokens() == 0:
			return "Throttled"
		}
		return "Replaceable"
	})
	r.Bool("machinesOutOfSync", func(s *Scope) bool { return len(s.OutOfSync) > 0 })
	r.Enum("templates", func(s *Scope) string {
		if len(s.MissingTemplates) > 0 {
			return "Missing"
		}
		return "Found"
	})
	r.Bool("remediationMarksLeft", func(s *Scope) bool { return len(s.Recovered) > 0 })
	r.Bool("staleRevision", func(s *Scope) bool { return s.StaleRevision })
	r.Bool("leftToRolloutUntold", func(s *Scope) bool {
		return len(s.untold(clusterv1.CannotBeRemediatedReason, leftToRolloutMessage)) > 0
	})
	r.Enum("preflightChecks", func(s *Scope) string {
		if len(s.Preflight) > 0 {
			return "Blocked"
		}
		return "Passed"
	})
	r.Bool("machinesLeft", func(s *Scope) bool { return len(s.Owned)+len(s.Strays) > 0 })
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// setPause: the MachineSet's own paused annotation or its Cluster's spec.paused,
// and why (reconciler.Paused).
func setPause(s *Scope) (bool, string) {
	if s.Set == nil {
		return false, ""
	}
	return reconciler.Paused("MachineSet", s.Set, s.Cluster)
}
