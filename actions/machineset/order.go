package machineset

import (
	"sort"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// deletePriority: lower goes first (Cluster API machineset_deletion_order.go,
// randomDeletionOrder and the others). Machines being deleted already go
// first, so a scale-down counts them instead of deleting more; then those
// marked with the delete-machine annotation; then failed or unhealthy ones
// (betterDelete: the least useful, as MCM's NonReady < Ready); then the
// rest.
func deletePriority(m *clusterv1.Machine) int {
	if !m.DeletionTimestamp.IsZero() {
		return 0
	}
	if _, ok := m.Annotations[clusterv1.DeleteMachineAnnotation]; ok {
		return 1
	}
	if Unhealthy(m) {
		return 2
	}
	return healthy
}

// healthy is the deletePriority of a Machine that is none of the above.
const healthy = 3

// RemediationOrder returns the Machines to replace in the order they are
// deleted while maxInFlight holds some back: the remediate-machine
// annotation first, then the newest, then by name, as Cluster API's
// sortMachinesToRemediate (a Machine that fails to come up likely hosts no
// workload yet); the delete-machine annotation is a scale-down's word and
// plays no part. ms is not changed.
func RemediationOrder(ms []*clusterv1.Machine) []*clusterv1.Machine {
	out := append([]*clusterv1.Machine(nil), ms...)
	first := func(m *clusterv1.Machine) bool {
		_, ok := m.Annotations[clusterv1.RemediateMachineAnnotation]
		return ok
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if first(a) != first(b) {
			return first(a)
		}
		if ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ta.Equal(tb) {
			return ta.After(tb)
		}
		return a.Name < b.Name
	})
	return out
}

// DeletionOrder returns the Machines in the order a scale-down deletes them:
// by deletePriority, then, among healthy Machines only, by order (Newest or
// Oldest creationTimestamp first), then by name. As in Cluster API's
// machineset_deletion_order.go, Machines of the other priorities (being
// deleted, marked, unhealthy) share one priority each, so their ages do not
// matter. Random adds nothing before the name: Cluster API's
// randomDeletionOrder gives every healthy Machine the same priority and its
// sort breaks ties by name, so "Random" deletes the lowest names first, and
// a scale-down interrupted halfway picks the same Machines again. ms is not
// changed.
func DeletionOrder(ms []*clusterv1.Machine, order clusterv1.MachineSetDeletionOrder) []*clusterv1.Machine {
	return sortedForDeletion(ms, order, func(priority int) bool { return priority == healthy })
}

// sortedForDeletion sorts a copy of ms by deletePriority, then by age where
// byAge says so for the priority, then by name.
func sortedForDeletion(ms []*clusterv1.Machine, order clusterv1.MachineSetDeletionOrder, byAge func(priority int) bool) []*clusterv1.Machine {
	out := append([]*clusterv1.Machine(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		pa, pb := deletePriority(a), deletePriority(b)
		if pa != pb {
			return pa < pb
		}
		if ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; byAge(pa) && !ta.Equal(tb) {
			switch order {
			case clusterv1.DeletionOrderNewest:
				return ta.After(tb)
			case clusterv1.DeletionOrderOldest:
				return ta.Before(tb)
			}
		}
		return a.Name < b.Name
	})
	return out
}
