// Package machinedeployment holds the Go side of the MachineDeployment
// tables: the observer that reads a deployment's MachineSets and Machines
// once per reconcile, the facts (which side of a limit the deployment is
// on) and the actions the rows run (with the counts). Which step a rollout
// takes is decided by the rows in transitions/machinedeployment.
package machinedeployment

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// Scope is one reconcile's view of a MachineDeployment. Observe fills it
// once; facts read it, actions act through it and change MD in memory, and
// the kit patches MD once.
type Scope struct {
	Client client.Client
	// Reader is what actions wait on to see their own writes (the
	// manager's cache); Client when nil.
	Reader client.Reader
	Now    time.Time
	Key    client.ObjectKey

	Found   bool
	MD      *clusterv1.MachineDeployment
	Cluster *clusterv1.Cluster

	// Hash is the current template's hash: the new MachineSet's name
	// suffix and machine-template-hash label.
	Hash string
	// Sets are every MachineSet the deployment controls; New the one of
	// the current template (nil when missing), Old the others, oldest
	// revision first.
	Sets []*Set
	New  *Set
	Old  []*Set
	// Orphans are the MachineSets without a controller the deployment
	// adopts (adoptable).
	Orphans []*clusterv1.MachineSet
	// Machines are the Machines of those sets, being deleted included.
	Machines []*clusterv1.Machine

	// Progressed: the counts or the generation changed since the status
	// was last written.
	Progressed bool

	// MissingTemplates are the templates spec.template references that do
	// not exist.
	MissingTemplates []clusterv1.ObjectReference

	// Told holds the Events the actions tell: each MachineSet created,
	// scaled, deleted or adopted, as Cluster API's MachineDeployment
	// controller records them.
	Told reconciler.Told

	reconciler.ObserveError
}

// Set is a MachineSet of the deployment and its Machines' counts.
type Set struct {
	MS *clusterv1.MachineSet
	// Total: every Machine of the set, being deleted included. Live: not
	// being deleted. Ready: live and Ready. Available: live and Available.
	// UpToDate: with the UpToDate condition True, being deleted or not (as
	// Cluster API's MachineSet counts it).
	Total, Live, Ready, Available, UpToDate int
	Revision                                int64
}

// Spec is the set's spec.replicas.
func (s *Set) Spec() int {
	if s.MS.Spec.Replicas == nil {
		return 1
	}
	return int(*s.MS.Spec.Replicas)
}

// Size is what the set counts against the deployment's limits: its
// replicas, or its Machines while more are left (being deleted included).
func (s *Set) Size() int { return max(s.Spec(), s.Total) }

func (s *Scope) reader() client.Reader {
	if s.Reader != nil {
		return s.Reader
	}
	return s.Client
}

// Replicas is spec.replicas (1 when unset, as the API defaults it).
func (s *Scope) Replicas() int {
	if s.MD == nil || s.MD.Spec.Replicas == nil {
		return 1
	}
	return int(*s.MD.Spec.Replicas)
}

// MaxReplicas is the max-replicas annotation's value: spec.replicas plus
// maxSurge under RollingUpdate, spec.replicas under the other strategies
// (Cluster API's MaxSurge is 0 for them).
func (s *Scope) MaxReplicas() int {
	if s.Strategy() != clusterv1.RollingUpdateStrategy {
		return s.Replicas()
	}
	surge, _ := s.Fenceposts()
	return s.Replicas() + surge
}

// Fenceposts are maxSurge (rounded up) and maxUnavailable (rounded down)
// of spec.replicas; when both come to 0, maxUnavailable is 1 so a rollout
// can move (Cluster API ResolveFenceposts).
func (s *Scope) Fenceposts() (surge, unavailable int) {
	ru := s.MD.Spec.Strategy.RollingUpdate
	get := func(v *intstr.IntOrString, def int, up bool) int {
		if v == nil {
			return def
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(v, s.Replicas(), up)
		if err != nil {
			return def
		}
		return n
	}
	surge, unavailable = get(ru.MaxSurge, 1, true), get(ru.MaxUnavailable, 0, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

// Strategy is spec.strategy.type (RollingUpdate when unset).
func (s *Scope) Strategy() clusterv1.MachineDeploymentStrategyType {
	if t := s.MD.Spec.Strategy.Type; t != "" {
		return t
	}
	return clusterv1.RollingUpdateStrategy
}

// Totals sums the sets' counts.
type Totals struct{ Size, Total, Live, Ready, Available, UpToDate, OldSpec, OldTotal int }

// Totals sums every set's counts, and the old sets' replicas and Machines.
func (s *Scope) Totals() Totals {
	var t Totals
	for _, set := range s.Sets {
		t.Size += set.Size()
		t.Total += set.Total
		t.Live += set.Live
		t.Ready += set.Ready
		t.Available += set.Available
		t.UpToDate += set.UpToDate
	}
	for _, set := range s.Old {
		t.OldSpec += set.Spec()
		t.OldTotal += set.Total
	}
	return t
}

// NewTarget is what the current set may grow to now, by the strategy:
// RollingUpdate spec.replicas while every set's size stays within
// spec.replicas + maxSurge; Recreate spec.replicas once no old Machine is
// left (0 before); OnDelete spec.replicas less the old sets' replicas.
func (s *Scope) NewTarget() int {
	r, t := s.Replicas(), s.Totals()
	cur := 0
	if s.New != nil {
		cur = s.New.Spec()
	}
	switch s.Strategy() {
	case clusterv1.RecreateStrategy:
		if t.OldSpec > 0 || t.OldTotal > 0 {
			return cur
		}
		return max(cur, r)
	case clusterv1.OnDeleteStrategy:
		return max(cur, r-t.OldSpec)
	}
	surge, _ := s.Fenceposts()
	room := r + surge - t.Size
	return max(cur, min(r, cur+room))
}
