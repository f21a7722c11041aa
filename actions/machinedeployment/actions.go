package machinedeployment

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// The actions change the MachineDeployment in memory only (the kit patches
// it once) or create, patch and delete its MachineSets. A MachineSet they
// patch is waited for in the cache, so the next reconcile does not size it
// again from its old replicas.

// patchSets writes each set's change with optimistic locking and waits
// until the cache shows every new generation.
func patchSets(ctx context.Context, s *Scope, changes map[*Set]func(*clusterv1.MachineSet)) error {
	var written []client.Object
	want := map[client.ObjectKey]int64{}
	for set, change := range changes {
		ms := set.MS.DeepCopy()
		change(ms)
		if err := s.Client.Patch(ctx, ms, client.MergeFromWithOptions(set.MS, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("patch MachineSet %s: %w", ms.Name, err)
		}
		written = append(written, ms)
		want[client.ObjectKeyFromObject(ms)] = ms.Generation
	}
	return reconciler.WaitForCache(ctx, s.reader(), written, func(obj client.Object, err error) bool {
		return err == nil && obj.GetGeneration() >= want[client.ObjectKeyFromObject(obj)]
	})
}

// resize sets a set's replicas and, with sized, the replicas it is sized
// for (a scaling event compares spec.replicas with them).
func resize(s *Scope, replicas int, sized bool) func(*clusterv1.MachineSet) {
	return func(ms *clusterv1.MachineSet) {
		ms.Spec.Replicas = ptr.To(int32(replicas))
		if sized {
			if ms.Annotations == nil {
				ms.Annotations = map[string]string{}
			}
			ms.Annotations[clusterv1.DesiredReplicasAnnotation] = strconv.Itoa(s.Replicas())
			ms.Annotations[clusterv1.MaxReplicasAnnotation] = strconv.Itoa(s.MaxReplicas())
		}
	}
}

func describe(changes map[*Set]int, s *Scope) string {
	var out []string
	for _, set := range s.Sets {
		if n, ok := changes[set]; ok {
			out = append(out, fmt.Sprintf("%s %d→%d", set.MS.Name, set.Spec(), n))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func scaleTo(ctx context.Context, s *Scope, sizes map[*Set]int, sized bool) error {
	changes := map[*Set]func(*clusterv1.MachineSet){}
	for set, n := range sizes {
		changes[set] = resize(s, n, sized)
	}
	return patchSets(ctx, s, changes)
}

func syncMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	sets := outOfSync(s)
	changes := map[*Set]func(*clusterv1.MachineSet){}
	var names []string
	for _, set := range sets {
		want := desiredSet(s, set)
		changes[set] = func(ms *clusterv1.MachineSet) {
			replicas := ms.Spec.Replicas
			ms.Spec = *want.Spec.DeepCopy()
			ms.Spec.Replicas = replicas
			ms.Annotations = want.Annotations
			ms.Labels = want.Labels
		}
		names = append(names, set.MS.Name)
	}
	if err := patchSets(ctx, s, changes); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("Updated MachineSet(s) %s in place", strings.Join(names, ", "))
}

func deleteOldMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	victims := historySurplus(s)
	var objs []client.Object
	var names []string
	for _, set := range victims {
		if err := s.Client.Delete(ctx, set.MS); err != nil && !apierrors.IsNotFound(err) {
			return engine.Fail(fmt.Errorf("delete MachineSet %s: %w", set.MS.Name, err))
		}
		objs = append(objs, set.MS)
		names = append(names, set.MS.Name)
	}
	if err := reconciler.WaitForCache(ctx, s.reader(), objs, reconciler.Deleted); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("Deleted old MachineSet(s) %s beyond revisionHistoryLimit", strings.Join(names, ", "))
}

// resizeSets sizes the MachineSets as sizes says (sized: annotate them
// with the desired and maximum replicas) and says what changed.
func resizeSets(ctx context.Context, s *Scope, sizes map[*Set]int, sized bool, say func(changes string) string) engine.Outcome {
	changes := describe(sizes, s)
	if err := scaleTo(ctx, s, sizes, sized); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("%s", say(changes))
}

// shrunk is each set's replicas less what by takes off it.
func shrunk(by map[*Set]int) map[*Set]int {
	sizes := map[*Set]int{}
	for set, n := range by {
		sizes[set] = set.Spec() - n
	}
	return sizes
}

func scaleMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	return resizeSets(ctx, s, proportions(s), true, func(c string) string {
		return fmt.Sprintf("Scaled to %d replicas: %s", s.Replicas(), c)
	})
}

func createMachineSet(ctx context.Context, s *Scope) engine.Outcome {
	n := s.NewTarget()
	ms := newMachineSet(s, n)
	if err := s.Client.Create(ctx, ms); err != nil {
		return engine.Fail(fmt.Errorf("create MachineSet %s: %w", ms.Name, err))
	}
	if err := reconciler.WaitForCache(ctx, s.reader(), []client.Object{ms}, reconciler.Created); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("Created MachineSet %s (revision %s) with %d replicas", ms.Name, ms.Annotations[clusterv1.RevisionAnnotation], n)
}

func scaleUpNewMachineSet(ctx context.Context, s *Scope) engine.Outcome {
	return resizeSets(ctx, s, map[*Set]int{s.New: s.NewTarget()}, true, func(c string) string {
		return "Scaled up the current MachineSet: " + c
	})
}

func scaleDownOldMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	return resizeSets(ctx, s, shrunk(oldScaleDowns(s)), false, func(c string) string {
		_, unavailable := s.Fenceposts()
		return fmt.Sprintf("Scaled down old MachineSet(s): %s; %d Machines available, at least %d kept", c, s.Totals().Available, s.Replicas()-unavailable)
	})
}

// scaleDownNewMachineSet cuts the current MachineSet to spec.replicas.
func scaleDownNewMachineSet(ctx context.Context, s *Scope) engine.Outcome {
	return resizeSets(ctx, s, map[*Set]int{s.New: s.Replicas()}, true, func(c string) string {
		return "Scaled down the current MachineSet to spec.replicas: " + c
	})
}

func scaleDownOldMachineSetsToReplicas(ctx context.Context, s *Scope) engine.Outcome {
	return resizeSets(ctx, s, shrunk(oldExcess(s)), false, func(c string) string {
		return fmt.Sprintf("OnDelete: old MachineSet(s) scaled down to spec.replicas %d, oldest first: %s", s.Replicas(), c)
	})
}

func scaleOldMachineSetsToZero(ctx context.Context, s *Scope) engine.Outcome {
	sizes := map[*Set]int{}
	for _, set := range s.Old {
		if set.Spec() > 0 {
			sizes[set] = 0
		}
	}
	return resizeSets(ctx, s, sizes, false, func(c string) string { return "Recreate: scaled old MachineSet(s) to 0: " + c })
}

func scaleOldMachineSetsToMachines(ctx context.Context, s *Scope) engine.Outcome {
	sizes := map[*Set]int{}
	for _, set := range s.Old {
		if set.Spec() > set.Total {
			sizes[set] = set.Total
		}
	}
	return resizeSets(ctx, s, sizes, false, func(c string) string { return "OnDelete: old MachineSet(s) follow their deleted Machines: " + c })
}

// describeMissingTemplates names the kinds as Cluster API's
// calculateMissingReferencesMessage does, then the templates.
func describeMissingTemplates(_ context.Context, s *Scope) engine.Outcome {
	names := make([]string, len(s.MissingTemplates))
	for i, ref := range s.MissingTemplates {
		names[i] = ref.Name
	}
	return engine.OKf("cannot create a MachineSet for the current template: %s (%s)", contract.MissingKinds(missingKinds(s.MissingTemplates)), strings.Join(names, ", "))
}

// describeRollout says what a rollout waits on.
func describeRollout(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s", Waiting(s))
}

// Waiting says which step a rollout is in and what it waits on.
func Waiting(s *Scope) string {
	t := s.Totals()
	surge, unavailable := s.Fenceposts()
	newSpec, newLive, newAvail := 0, 0, 0
	if s.New != nil {
		newSpec, newLive, newAvail = s.New.Spec(), s.New.Live, s.New.Available
	}
	switch s.Strategy() {
	case clusterv1.RecreateStrategy:
		return fmt.Sprintf("Recreate: waiting for %d old Machine(s) to be gone before the new ones are created", t.OldTotal)
	case clusterv1.OnDeleteStrategy:
		return fmt.Sprintf("OnDelete: %d old Machine(s) are replaced as users delete them; %d of %d new", t.OldTotal, newLive, s.Replicas())
	}
	return fmt.Sprintf("RollingUpdate: %d of %d new Machine(s) available (current MachineSet at %d); %d available, at least %d kept; %d Machines, at most %d",
		newAvail, s.Replicas(), newSpec, t.Available, s.Replicas()-unavailable, t.Size, s.Replicas()+surge)
}

func deleteMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	var objs []client.Object
	var names []string
	for _, set := range s.Sets {
		names = append(names, set.MS.Name)
		if !set.MS.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.Client.Delete(ctx, set.MS); err != nil && !apierrors.IsNotFound(err) {
			return engine.Fail(fmt.Errorf("delete MachineSet %s: %w", set.MS.Name, err))
		}
		objs = append(objs, set.MS)
	}
	if err := reconciler.WaitForCache(ctx, s.reader(), objs, reconciler.Deleted); err != nil {
		return engine.Fail(err)
	}
	return engine.Wait("Waiting for %d MachineSet(s) to be deleted: %s", len(names), strings.Join(names, ", "))
}
