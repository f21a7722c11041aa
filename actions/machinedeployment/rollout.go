package machinedeployment

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// What `krtt rollout` does with a MachineDeployment: read its rollout
// status and revisions, and ask for a rollback or a restart by changing its
// spec as a user would (the tables do the rest).

// RolloutStatus says whether the rollout is done; stuck is true when the
// progress deadline passed.
func RolloutStatus(ctx context.Context, c client.Client, key client.ObjectKey) (msg string, done, stuck bool, err error) {
	md := &clusterv1.MachineDeployment{}
	if err := c.Get(ctx, key, md); err != nil {
		return "", false, false, err
	}
	st, want := md.Status, ptr.Deref(md.Spec.Replicas, 1)
	if p := meta.FindStatusCondition(st.Conditions, clusterv1.ProgressingCondition); p != nil && p.Reason == "ProgressDeadlineExceeded" {
		return fmt.Sprintf("MachineDeployment %s has exceeded its progress deadline: %s", key.Name, p.Message), false, true, nil
	}
	switch {
	case md.Spec.Paused:
		return fmt.Sprintf("MachineDeployment %s is paused (spec.paused): %d of %d new Machines", key.Name, st.UpdatedReplicas, want), false, false, nil
	case st.ObservedGeneration < md.Generation:
		return fmt.Sprintf("Waiting for MachineDeployment %s's spec to be observed", key.Name), false, false, nil
	case st.UpdatedReplicas < want:
		return fmt.Sprintf("Waiting for MachineDeployment %s's rollout: %d of %d new Machines", key.Name, st.UpdatedReplicas, want), false, false, nil
	case st.Replicas > st.UpdatedReplicas:
		return fmt.Sprintf("Waiting for MachineDeployment %s's rollout: %d old Machines to be deleted", key.Name, st.Replicas-st.UpdatedReplicas), false, false, nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return fmt.Sprintf("Waiting for MachineDeployment %s's rollout: %d of %d new Machines available", key.Name, st.AvailableReplicas, st.UpdatedReplicas), false, false, nil
	}
	return fmt.Sprintf("MachineDeployment %s successfully rolled out", key.Name), true, false, nil
}

// Revisions are the deployment's MachineSets, oldest revision first.
func Revisions(ctx context.Context, c client.Client, key client.ObjectKey) (*clusterv1.MachineDeployment, []*clusterv1.MachineSet, error) {
	md := &clusterv1.MachineDeployment{}
	if err := c.Get(ctx, key, md); err != nil {
		return nil, nil, err
	}
	list := &clusterv1.MachineSetList{}
	if err := c.List(ctx, list, client.InNamespace(key.Namespace)); err != nil {
		return nil, nil, err
	}
	var out []*clusterv1.MachineSet
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == md.UID {
			out = append(out, &list.Items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return uptodate.Revision(out[i]) < uptodate.Revision(out[j]) })
	return md, out, nil
}

// History lists the revisions: number, MachineSet, replicas, templates.
func History(ctx context.Context, c client.Client, key client.ObjectKey) (string, error) {
	_, sets, err := Revisions(ctx, c, key)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "REVISION\tMACHINESET\tREPLICAS\tINFRASTRUCTURE\tBOOTSTRAP\n")
	for _, ms := range sets {
		boot := "-"
		if r := ms.Spec.Template.Spec.Bootstrap.ConfigRef; r != nil {
			boot = r.Kind + "/" + r.Name
		}
		infra := ms.Spec.Template.Spec.InfrastructureRef
		fmt.Fprintf(&b, "%d\t%s\t%d\t%s/%s\t%s\n", uptodate.Revision(ms), ms.Name, ptr.Deref(ms.Spec.Replicas, 1), infra.Kind, infra.Name, boot)
	}
	return b.String(), nil
}

// Undo points the deployment's template back at a revision's (the one
// before the current when to is 0): its spec and its metadata without the
// hash label. The rollout is a rollback: that MachineSet is reused.
func Undo(ctx context.Context, c client.Client, key client.ObjectKey, to int64) (int64, error) {
	md, sets, err := Revisions(ctx, c, key)
	if err != nil {
		return 0, err
	}
	var target *clusterv1.MachineSet
	if to == 0 {
		// The newest revision is the current one; the one before it is
		// what an undo goes back to.
		if len(sets) < 2 {
			return 0, fmt.Errorf("MachineDeployment %s has no earlier revision (spec.revisionHistoryLimit keeps old MachineSets after a rollout; it is 0 by default)", key.Name)
		}
		target = sets[len(sets)-2]
	} else {
		for _, ms := range sets {
			if uptodate.Revision(ms) == to {
				target = ms
			}
		}
		if target == nil {
			return 0, fmt.Errorf("MachineDeployment %s has no revision %d", key.Name, to)
		}
	}
	base := md.DeepCopy()
	md.Spec.Template.Spec = *target.Spec.Template.Spec.DeepCopy()
	md.Spec.Template.ObjectMeta = *target.Spec.Template.ObjectMeta.DeepCopy()
	delete(md.Spec.Template.ObjectMeta.Labels, clusterv1.MachineTemplateHashLabel)
	return uptodate.Revision(target), c.Patch(ctx, md, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// Restart asks for every Machine to be replaced from now on
// (spec.rollout.after).
func Restart(ctx context.Context, c client.Client, key client.ObjectKey, now time.Time) error {
	md := &clusterv1.MachineDeployment{}
	if err := c.Get(ctx, key, md); err != nil {
		return err
	}
	base := md.DeepCopy()
	md.Spec.Rollout.After = &metav1.Time{Time: now}
	return c.Patch(ctx, md, client.MergeFrom(base))
}
