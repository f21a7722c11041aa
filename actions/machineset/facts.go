package machineset

import (
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// registerFacts binds every fact of transitions/machineset/machineset.yaml
// to the Go that computes it from the Scope. Counts stay in the Scope: a
// fact only says which side of a limit they are on.
func registerFacts(r *engine.Registry[*Scope]) {
	r.Bool("machineSetFound", "The MachineSet was found.", func(s *Scope) bool { return s.Found })
	r.Bool("apiError", "Observing hit an API error other than NotFound.", func(s *Scope) bool { return s.Err != nil })
	r.Bool("hasFinalizer", "The MachineSet carries the krtt finalizer.", func(s *Scope) bool {
		return s.Set != nil && hasString(s.Set.Finalizers, clusterv1.MachineSetFinalizer)
	})
	r.Bool("deleting", "The MachineSet has a deletionTimestamp.", func(s *Scope) bool {
		return s.Set != nil && !s.Set.DeletionTimestamp.IsZero()
	})
	r.Bool("paused", "The MachineSet or its Cluster is paused.", func(s *Scope) bool {
		if s.Set == nil {
			return false
		}
		if _, ok := s.Set.Annotations[clusterv1.PausedAnnotation]; ok {
			return true
		}
		return s.Cluster != nil && s.Cluster.Spec.Paused
	})
	r.Bool("ownerAndLabelsSet", "The cluster-name label and the Cluster owner reference are in place.", ownerAndLabelsSet)
	r.Enum("cluster", "Whether the MachineSet's Cluster exists.", func(s *Scope) string {
		if s.Cluster == nil {
			return "Missing"
		}
		return "Found"
	})
	r.Bool("strays", "Machines the set controls no longer match it.", func(s *Scope) bool { return len(s.Strays) > 0 })
	r.Bool("orphans", "Matching Machines without a controller wait to be adopted.", func(s *Scope) bool { return len(s.Orphans) > 0 })
	r.Enum("replicasDiff", "Working Machines against spec.replicas.", func(s *Scope) string {
		switch n, want := s.Counts.Active, s.Replicas(); {
		case n < want:
			return "Missing"
		case n > want:
			return "Surplus"
		}
		return "Equal"
	})
	r.Enum("failedMachines", "Failed Machines against maxUnhealthy and maxInFlight.", func(s *Scope) string {
		c := s.Counts
		switch {
		case s.Set == nil || c.Failed == 0:
			return "None"
		case c.Failed > s.MaxUnhealthy():
			return "OverLimit"
		case c.InFlight >= s.MaxInFlight():
			return "Throttled"
		}
		return "Replaceable"
	})
	r.Bool("overshoot", "More than spec.replicas + 10 Machines not being deleted.", func(s *Scope) bool {
		return s.Counts.Live > s.Replicas()+OvershootMargin
	})
	r.Enum("templates", "Whether the templates the Machine template names exist.", func(s *Scope) string {
		if len(s.MissingTemplates) > 0 {
			return "Missing"
		}
		return "Found"
	})
	r.Bool("availabilityPending", "A Ready Machine is not yet available (minReadySeconds).", func(s *Scope) bool {
		return s.Counts.AwaitingAvailability > 0
	})
	r.Bool("machinesLeft", "The set still controls Machines.", func(s *Scope) bool { return len(s.Owned)+len(s.Strays) > 0 })
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
