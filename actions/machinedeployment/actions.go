package machinedeployment

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// patchSets writes each set's change with optimistic locking, in the
// order of s.Sets, and waits until the cache shows every new generation;
// tell, when given, hears of each patch written or failed.
func patchSets(ctx context.Context, s *Scope, changes map[*Set]func(*clusterv1.MachineSet), tell func(set *Set, ms *clusterv1.MachineSet, err error)) error {
	var written []client.Object
	want := map[client.ObjectKey]int64{}
	for _, set := range s.Sets {
		change, ok := changes[set]
		if !ok {
			continue
		}
		ms := set.MS.DeepCopy()
		change(ms)
		err := s.Client.Patch(ctx, ms, client.MergeFromWithOptions(set.MS, client.MergeFromWithOptimisticLock{}))
		if tell != nil {
			tell(set, ms, err)
		}
		if err != nil {
			return fmt.Errorf("patch MachineSet %s: %w", ms.Name, err)
		}
		written = append(written, ms)
		want[client.ObjectKeyFromObject(ms)] = ms.Generation
	}
	return reconciler.WaitForCache(ctx, s.reader(), written, func(obj client.Object, err error) bool {
		return err == nil && obj.GetGeneration() >= want[client.ObjectKeyFromObject(obj)]
	})
}

// tellScaled tells each MachineSet scaled, or its patch that failed, in
// the words of Cluster API's rollout planner (createOrUpdateMachineSets:
// "Scaled up MachineSet md-abc: 1 -> 2") or, with proportional, of its
// scaling while paused (scaleMachineSet: "Scaled MachineSet ns/md-abc: 3 -> 4").
func tellScaled(s *Scope, proportional bool) func(set *Set, ms *clusterv1.MachineSet, err error) {
	return func(set *Set, ms *clusterv1.MachineSet, err error) {
		from, to := set.Spec(), int(ptr.Deref(ms.Spec.Replicas, 1))
		key := client.ObjectKeyFromObject(ms)
		switch {
		case err != nil && proportional:
			s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedScale", Related: ms, Note: fmt.Sprintf("Failed to scale MachineSet %v: %v", key, err)})
		case err != nil:
			s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedUpdate", Related: ms, Note: fmt.Sprintf("Failed to update MachineSet %v: %v", key, err)})
		case from == to:
		case proportional:
			s.Told.Tell(reconciler.Tell{Reason: "SuccessfulScale", Related: ms, Note: fmt.Sprintf("Scaled MachineSet %v: %d -> %d", key, from, to)})
		case to < from:
			s.Told.Tell(reconciler.Tell{Reason: "SuccessfulScale", Related: ms, Note: fmt.Sprintf("Scaled down MachineSet %s: %d -> %d", ms.Name, from, to)})
		default:
			s.Told.Tell(reconciler.Tell{Reason: "SuccessfulScale", Related: ms, Note: fmt.Sprintf("Scaled up MachineSet %s: %d -> %d", ms.Name, from, to)})
		}
	}
}

// tellUpdateFailed tells a MachineSet patch that failed (Cluster API's
// FailedUpdate); one that lands is only logged there.
func tellUpdateFailed(s *Scope) func(set *Set, ms *clusterv1.MachineSet, err error) {
	return func(_ *Set, ms *clusterv1.MachineSet, err error) {
		if err != nil {
			s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedUpdate", Related: ms, Note: fmt.Sprintf("Failed to update MachineSet %v: %v", client.ObjectKeyFromObject(ms), err)})
		}
	}
}

// adoptMachineSets makes the deployment the controller of the orphans
// (Cluster API adoptOrphan: the owner reference only), with optimistic
// locking so that of two deployments whose selectors match, one wins, and
// waits until the cache shows it.
func adoptMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	owner := *metav1.NewControllerRef(s.MD, clusterv1.GroupVersion.WithKind("MachineDeployment"))
	var written []client.Object
	var names []string
	for _, orphan := range s.Orphans {
		ms := orphan.DeepCopy()
		ms.OwnerReferences = append(ms.OwnerReferences, owner)
		if err := s.Client.Patch(ctx, ms, client.MergeFromWithOptions(orphan, client.MergeFromWithOptimisticLock{})); err != nil {
			s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedAdopt", Related: orphan, Note: fmt.Sprintf("Failed to adopt MachineSet %q: %v", orphan.Name, err)})
			return engine.Fail(fmt.Errorf("adopt MachineSet %s: %w", orphan.Name, err))
		}
		s.Told.Tell(reconciler.Tell{Reason: "SuccessfulAdopt", Related: ms, Note: fmt.Sprintf("Adopted MachineSet %q", ms.Name)})
		written = append(written, ms)
		names = append(names, ms.Name)
	}
	if err := reconciler.WaitForCache(ctx, s.reader(), written, func(obj client.Object, err error) bool {
		return err == nil && metav1.IsControlledBy(obj, s.MD)
	}); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("Adopted MachineSet(s) %s", strings.Join(names, ", "))
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

func scaleTo(ctx context.Context, s *Scope, sizes map[*Set]int, sized, proportional bool) error {
	changes := map[*Set]func(*clusterv1.MachineSet){}
	for set, n := range sizes {
		changes[set] = resize(s, n, sized)
	}
	return patchSets(ctx, s, changes, tellScaled(s, proportional))
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
	if err := patchSets(ctx, s, changes, tellUpdateFailed(s)); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("Updated MachineSet(s) %s in place", strings.Join(names, ", "))
}

// annotateMachineSets writes the replicas annotations on the sets that
// lack them. An annotation leaves the generation as it was, so the wait
// is for the annotations themselves in the cache.
func annotateMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	want := replicasAnnotations(s)
	var written []client.Object
	var names []string
	for _, set := range staleReplicasAnnotations(s) {
		ms := set.MS.DeepCopy()
		if ms.Annotations == nil {
			ms.Annotations = map[string]string{}
		}
		maps.Copy(ms.Annotations, want)
		if err := s.Client.Patch(ctx, ms, client.MergeFromWithOptions(set.MS, client.MergeFromWithOptimisticLock{})); err != nil {
			return engine.Fail(fmt.Errorf("annotate MachineSet %s: %w", ms.Name, err))
		}
		written = append(written, ms)
		names = append(names, ms.Name)
	}
	if err := reconciler.WaitForCache(ctx, s.reader(), written, func(obj client.Object, err error) bool {
		if err != nil {
			return false
		}
		for k, v := range want {
			if obj.GetAnnotations()[k] != v {
				return false
			}
		}
		return true
	}); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("Annotated MachineSet(s) %s: desired replicas %s, max replicas %s", strings.Join(names, ", "),
		want[clusterv1.DesiredReplicasAnnotation], want[clusterv1.MaxReplicasAnnotation])
}

func deleteOldMachineSets(ctx context.Context, s *Scope) engine.Outcome {
	victims := historySurplus(s)
	var objs []client.Object
	var names []string
	for _, set := range victims {
		if err := s.Client.Delete(ctx, set.MS); err != nil && !apierrors.IsNotFound(err) {
			s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedDelete", Related: set.MS, Note: fmt.Sprintf("Failed to delete MachineSet %q: %v", set.MS.Name, err)})
			return engine.Fail(fmt.Errorf("delete MachineSet %s: %w", set.MS.Name, err))
		}
		s.Told.Tell(reconciler.Tell{Reason: "SuccessfulDelete", Related: set.MS, Note: fmt.Sprintf("Deleted MachineSet %q", set.MS.Name)})
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
	return resizeSetsTelling(ctx, s, sizes, sized, false, say)
}

// resizeSetsTelling is resizeSets; proportional tells the scaling in the
// words of a scaling while paused.
func resizeSetsTelling(ctx context.Context, s *Scope, sizes map[*Set]int, sized, proportional bool, say func(changes string) string) engine.Outcome {
	changes := describe(sizes, s)
	if err := scaleTo(ctx, s, sizes, sized, proportional); err != nil {
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
	return resizeSetsTelling(ctx, s, proportions(s), true, true, func(c string) string {
		return fmt.Sprintf("Scaled to %d replicas: %s", s.Replicas(), c)
	})
}

func createMachineSet(ctx context.Context, s *Scope) engine.Outcome {
	n := s.NewTarget()
	ms := newMachineSet(s, n)
	if err := s.Client.Create(ctx, ms); err != nil {
		s.Told.Tell(reconciler.Tell{Warning: true, Reason: "FailedCreate", Note: fmt.Sprintf("Failed to create MachineSet %v: %v", client.ObjectKeyFromObject(ms), err)})
		return engine.Fail(fmt.Errorf("create MachineSet %s: %w", ms.Name, err))
	}
	s.Told.Tell(reconciler.Tell{Reason: "SuccessfulCreate", Related: ms, Note: fmt.Sprintf("Created MachineSet %v with %d replicas", client.ObjectKeyFromObject(ms), n)})
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
