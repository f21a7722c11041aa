package machinedeployment

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	"github.com/krtt-dev/krtt/actions/machineset"
	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Observer reads everything a MachineDeployment reconcile looks at, once.
type Observer struct {
	Client client.Client
	// Reader is handed to actions to wait for their writes; Client if nil.
	Reader client.Reader
}

// Observe builds the Scope for one MachineDeployment. API errors do not
// abort it: the first is kept in Scope.Err and the apiError fact lets a row
// decide.
func (o *Observer) Observe(ctx context.Context, key client.ObjectKey, now time.Time) *Scope {
	s := &Scope{Client: o.Client, Reader: o.Reader, Now: now, Key: key}
	md := &clusterv1.MachineDeployment{}
	if err := o.Client.Get(ctx, key, md); err != nil {
		if !apierrors.IsNotFound(err) {
			s.Keep(fmt.Errorf("get MachineDeployment: %w", err))
		}
		return s
	}
	s.Found, s.MD = true, md
	c := &clusterv1.Cluster{}
	switch err := o.Client.Get(ctx, client.ObjectKey{Namespace: md.Namespace, Name: md.Spec.ClusterName}, c); {
	case err == nil:
		s.Cluster = c
	case !apierrors.IsNotFound(err):
		s.Keep(fmt.Errorf("get Cluster %s: %w", md.Spec.ClusterName, err))
	}
	if md.DeletionTimestamp.IsZero() {
		// Nothing the deletion does needs a template (Cluster API's
		// reconcileDelete reads none), so one that cannot be read, or a kind
		// no longer served, does not hold the deletion.
		o.readTemplates(ctx, s)
	}
	s.Hash = uptodate.Hash(md, now)
	o.readSets(ctx, s)
	s.Progressed = progressed(s)
	return s
}

// readTemplates reads the templates the template names: an API error (a
// kind that is not served) is met here rather than as MachineSets that
// cannot create anything, and a template that does not exist keeps a new
// MachineSet from being made for it (Cluster API's rollout planner refuses
// to create one).
func (o *Observer) readTemplates(ctx context.Context, s *Scope) {
	spec := s.MD.Spec.Template.Spec
	// Bootstrap first: Cluster API's calculateMissingReferencesMessage names
	// the kinds in that order.
	var refs []clusterv1.ObjectReference
	if spec.Bootstrap.ConfigRef != nil {
		refs = append(refs, *spec.Bootstrap.ConfigRef)
	}
	refs = append(refs, spec.InfrastructureRef)
	for _, ref := range refs {
		u, err := contract.Get(ctx, o.Client, ref, s.MD.Namespace, "template")
		switch {
		case err != nil:
			s.Keep(err)
		case u == nil:
			s.MissingTemplates = append(s.MissingTemplates, ref)
		}
	}
}

// readSets lists the MachineSets the deployment controls and counts their
// Machines (read directly, fresher than the sets' status).
func (o *Observer) readSets(ctx context.Context, s *Scope) {
	md := s.MD
	list := &clusterv1.MachineSetList{}
	if err := o.Client.List(ctx, list, client.InNamespace(md.Namespace)); err != nil {
		s.Keep(fmt.Errorf("list MachineSets: %w", err))
		return
	}
	machines := &clusterv1.MachineList{}
	if err := o.Client.List(ctx, machines, client.InNamespace(md.Namespace), client.MatchingLabels(md.Spec.Selector.MatchLabels)); err != nil {
		s.Keep(fmt.Errorf("list Machines: %w", err))
		return
	}
	byOwner := map[string][]*clusterv1.Machine{}
	for i := range machines.Items {
		if ref := metav1.GetControllerOf(&machines.Items[i]); ref != nil {
			byOwner[string(ref.UID)] = append(byOwner[string(ref.UID)], &machines.Items[i])
		}
	}
	for i := range list.Items {
		ms := &list.Items[i]
		ref := metav1.GetControllerOf(ms)
		if ref == nil && adoptable(md, ms) {
			s.Orphans = append(s.Orphans, ms)
		}
		if ref == nil || ref.UID != md.UID {
			continue
		}
		set := &Set{MS: ms, Revision: uptodate.Revision(ms)}
		for _, m := range byOwner[string(ms.UID)] {
			s.Machines = append(s.Machines, m)
			set.Total++
			if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.UpToDateCondition) {
				set.UpToDate++
			}
			if !m.DeletionTimestamp.IsZero() {
				continue
			}
			set.Live++
			if machineset.Failed(m) {
				continue
			}
			if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.ReadyCondition) {
				set.Ready++
			}
			if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.AvailableCondition) {
				set.Available++
			}
		}
		s.Sets = append(s.Sets, set)
	}
	sort.Slice(s.Sets, func(i, j int) bool {
		a, b := s.Sets[i], s.Sets[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		return a.MS.CreationTimestamp.Before(&b.MS.CreationTimestamp)
	})
	s.New = current(s)
	for _, set := range s.Sets {
		if set != s.New {
			s.Old = append(s.Old, set)
		}
	}
}

// adoptable: a MachineSet without a controller that the deployment
// adopts, as Cluster API's getAndAdoptMachineSetsForDeployment does: its
// labels match the deployment's selector (an empty selector matches
// nothing), being deleted or not. krtt also asks for the same Cluster: a
// selector that happens to match another Cluster's set does not move it.
func adoptable(md *clusterv1.MachineDeployment, ms *clusterv1.MachineSet) bool {
	sel := md.Spec.Selector.MatchLabels
	return len(sel) > 0 && ms.Spec.ClusterName == md.Spec.ClusterName && labels.SelectorFromSet(sel).Matches(labels.Set(ms.Labels))
}

// current picks the MachineSet of the current template, as Cluster API's
// FindNewAndOldMachineSets: of the sets whose template rolls out nothing
// against the deployment's (uptodate.Differences; whoever made them: an
// adopted set counts), the one with the most replicas (the least churn);
// once spec.rollout.after has passed, only a set created at or after it, or
// made for it (named after the hash with it), counts. So a rollout.after in
// the past that no set predates rolls nothing out, and clearing it after
// its rollout does not roll out again.
func current(s *Scope) *Set {
	var best *Set
	after := s.MD.Spec.Rollout.After
	want := uptodate.Of(&s.MD.Spec.Template.Spec)
	for _, set := range s.Sets {
		ms := set.MS
		if len(uptodate.Differences(uptodate.Of(&ms.Spec.Template.Spec), want)) > 0 {
			continue
		}
		made := ms.Labels[clusterv1.MachineTemplateHashLabel] == s.Hash
		if !made && after != nil && !s.Now.Before(after.Time) && ms.CreationTimestamp.Before(after) {
			continue
		}
		if best == nil || ptr.Deref(ms.Spec.Replicas, 0) > ptr.Deref(best.MS.Spec.Replicas, 0) {
			best = set
		}
	}
	return best
}

// progressed: the spec changed since the last reconcile wrote the status,
// or the counts it wrote did.
func progressed(s *Scope) bool {
	st, t := s.MD.Status, s.Totals()
	updated := 0
	if s.New != nil {
		updated = s.New.Live
	}
	return st.ProgressTime == nil || s.MD.Generation != st.ObservedGeneration || int(st.Replicas) != t.Total ||
		int(st.UpdatedReplicas) != updated || int(st.ReadyReplicas) != t.Ready || int(st.AvailableReplicas) != t.Available
}
