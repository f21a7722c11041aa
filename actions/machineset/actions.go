package machineset

import (
	"context"
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// The actions change the MachineSet in memory only (the kit patches it once)
// or create, patch and delete Machines and provider objects idempotently.
// Counts are read from the Scope and reported in the outcome's message.

func reportObserveError(_ context.Context, s *Scope) engine.Outcome {
	if s.Err == nil {
		return engine.Failf("an API error was observed but not kept")
	}
	return engine.Fail(s.Err)
}

func (s *Scope) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: s.Set.Name,
		UID: s.Set.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// patchMachine changes a Machine with optimistic locking: owner references
// are a list a merge patch replaces whole, so a concurrent change must fail
// the patch rather than be lost.
func patchMachine(ctx context.Context, s *Scope, m *clusterv1.Machine, change func(*clusterv1.Machine)) error {
	base := m.DeepCopy()
	change(m)
	return s.Client.Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

func adoptMachines(ctx context.Context, s *Scope) engine.Outcome {
	for _, m := range s.Orphans {
		err := patchMachine(ctx, s, m, func(m *clusterv1.Machine) {
			m.OwnerReferences = append(m.OwnerReferences, s.ownerRef())
			if m.Labels == nil {
				m.Labels = map[string]string{}
			}
			m.Labels[clusterv1.SetNameLabel] = s.Set.Name
		})
		if err != nil {
			return engine.Fail(fmt.Errorf("adopt Machine %s: %w", m.Name, err))
		}
	}
	return engine.OKf("adopted %s", names(s.Orphans))
}

func releaseMachines(ctx context.Context, s *Scope) engine.Outcome {
	for _, m := range s.Strays {
		err := patchMachine(ctx, s, m, func(m *clusterv1.Machine) {
			refs := m.OwnerReferences[:0]
			for _, ref := range m.OwnerReferences {
				if ref.UID != s.Set.UID {
					refs = append(refs, ref)
				}
			}
			m.OwnerReferences = refs
			if m.Labels[clusterv1.SetNameLabel] == s.Set.Name {
				delete(m.Labels, clusterv1.SetNameLabel)
			}
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return engine.Fail(fmt.Errorf("release Machine %s: %w", m.Name, err))
		}
	}
	return engine.OKf("released %s", names(s.Strays))
}

// deleteMachines deletes Machines not being deleted yet and waits until the
// cache shows it, so the next reconcile does not count them again.
func deleteMachines(ctx context.Context, s *Scope, ms []*clusterv1.Machine) error {
	var objs []client.Object
	for _, m := range ms {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Machine %s: %w", m.Name, err)
		}
		objs = append(objs, m)
	}
	return reconciler.WaitForCache(ctx, s.reader(), objs, reconciler.Deleted)
}

func (s *Scope) liveMachines(failed bool) []*clusterv1.Machine {
	var out []*clusterv1.Machine
	for _, m := range s.Owned {
		if m.DeletionTimestamp.IsZero() && Failed(m) == failed {
			out = append(out, m)
		}
	}
	return out
}

func deleteFailedMachines(ctx context.Context, s *Scope) engine.Outcome {
	n := s.MaxInFlight() - s.Counts.InFlight
	victims := DeletionOrder(s.liveMachines(true), s.Set.Spec.Deletion.Order)
	victims = victims[:min(n, len(victims))]
	if err := deleteMachines(ctx, s, victims); err != nil {
		return engine.Fail(err)
	}
	return engine.OKf("Replacing failed Machine(s) %s: %d of %d failed; maxInFlight %d", names(victims), s.Counts.Failed, s.Counts.Live, s.MaxInFlight())
}

func describeFailedMachines(_ context.Context, s *Scope) engine.Outcome {
	c := s.Counts
	return engine.OKf("%d of %d Machines failed (%s); maxUnhealthy %d, maxInFlight %d, %d being replaced",
		c.Failed, c.Live, names(s.liveMachines(true)), s.MaxUnhealthy(), s.MaxInFlight(), c.InFlight)
}

func describeOvershoot(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("The set controls %d Machines that are not being deleted, more than spec.replicas %d + %d; no Machine is created until it is back under the limit",
		s.Counts.Live, s.Replicas(), OvershootMargin)
}

func describeMissingTemplates(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s does not exist; %d Machines are missing", strings.Join(s.MissingTemplates, " and "), s.Replicas()-s.Counts.Active)
}

func createMachines(ctx context.Context, s *Scope) engine.Outcome {
	missing := s.Replicas() - s.Counts.Active
	n := min(missing, BurstReplicas)
	created := make([]client.Object, n)
	done, err := SlowStart(n, func(i int) error {
		m, err := createMachine(ctx, s)
		created[i] = m
		return err
	})
	var seen []client.Object
	for _, o := range created {
		if o != nil {
			seen = append(seen, o)
		}
	}
	if werr := reconciler.WaitForCache(ctx, s.reader(), seen, reconciler.Created); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return engine.Fail(fmt.Errorf("created %d of %d missing Machines: %w", done, missing, err))
	}
	if n < missing {
		return engine.Wait("Created %d Machines (at most %d per reconcile); %d more are missing", n, BurstReplicas, missing-n)
	}
	return engine.OKf("Scaling up from %d to %d working Machines: created %d", s.Counts.Active, s.Replicas(), n)
}

// createMachine clones the templates for a new Machine and creates it; on a
// failure the clones already created are deleted again, so nothing is left
// half-way. It returns the Machine when it was created.
func createMachine(ctx context.Context, s *Scope) (*clusterv1.Machine, error) {
	ms := s.Set
	name := ms.Name + "-" + utilrand.String(5)
	owner := s.ownerRef()
	labels := map[string]string{}
	maps.Copy(labels, ms.Spec.Template.ObjectMeta.Labels)
	labels[clusterv1.SetNameLabel] = ms.Name
	labels[clusterv1.ClusterNameLabel] = ms.Spec.ClusterName
	if v, ok := ms.Labels[clusterv1.WatchFilterLabel]; ok {
		// The operator instance that sees the set (--watch-filter) must
		// see its Machines, or it would create them again and again.
		labels[clusterv1.WatchFilterLabel] = v
	}
	spec := *ms.Spec.Template.Spec.DeepCopy()
	spec.ClusterName = ms.Spec.ClusterName

	var clones []*unstructured.Unstructured
	cleanup := func(cause error) error {
		for _, u := range clones {
			if err := s.Client.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("%w (and deleting %s %s created for it failed: %v)", cause, u.GetKind(), u.GetName(), err)
			}
		}
		return cause
	}
	clone := func(tpl *unstructured.Unstructured, ref *clusterv1.ObjectReference) error {
		u, err := contract.FromTemplate(tpl, contract.Clone{Name: name, ClusterName: ms.Spec.ClusterName,
			Labels: map[string]string{clusterv1.SetNameLabel: ms.Name}, Owner: &owner})
		if err != nil {
			return err
		}
		if err := s.Client.Create(ctx, u); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), name, err)
		}
		clones = append(clones, u)
		ref.Kind, ref.Name = u.GetKind(), name
		return nil
	}
	if spec.Bootstrap.ConfigRef != nil {
		if s.BootstrapTemplate == nil {
			return nil, fmt.Errorf("the bootstrap template %s was not read", spec.Bootstrap.ConfigRef.Name)
		}
		if err := clone(s.BootstrapTemplate, spec.Bootstrap.ConfigRef); err != nil {
			return nil, cleanup(err)
		}
	}
	if s.InfrastructureTemplate == nil {
		return nil, cleanup(fmt.Errorf("the infrastructure template %s was not read", spec.InfrastructureRef.Name))
	}
	if err := clone(s.InfrastructureTemplate, &spec.InfrastructureRef); err != nil {
		return nil, cleanup(err)
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ms.Namespace, Name: name, Labels: labels,
			Annotations: maps.Clone(ms.Spec.Template.ObjectMeta.Annotations), OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: spec,
	}
	if err := s.Client.Create(ctx, m); err != nil {
		return nil, cleanup(fmt.Errorf("create Machine %s: %w", name, err))
	}
	return m, nil
}

func deleteSurplusMachines(ctx context.Context, s *Scope) engine.Outcome {
	surplus := s.Counts.Active - s.Replicas()
	n := min(surplus, BurstReplicas)
	victims := DeletionOrder(s.liveMachines(false), s.Set.Spec.Deletion.Order)[:n]
	if err := deleteMachines(ctx, s, victims); err != nil {
		return engine.Fail(err)
	}
	if n < surplus {
		return engine.Wait("Deleted %s (at most %d per reconcile); %d more are surplus", names(victims), BurstReplicas, surplus-n)
	}
	return engine.OKf("Scaling down from %d to %d working Machines: deleted %s", s.Counts.Active, s.Replicas(), names(victims))
}

func deleteAllMachines(ctx context.Context, s *Scope) engine.Outcome {
	all := append(append([]*clusterv1.Machine(nil), s.Owned...), s.Strays...)
	if err := deleteMachines(ctx, s, all); err != nil {
		return engine.Fail(err)
	}
	return engine.Wait("Waiting for %d Machine(s) to be deleted: %s", len(all), names(all))
}

// names lists a few Machine names and says how many more there are.
func names(ms []*clusterv1.Machine) string {
	const few = 5
	var out []string
	for i, m := range ms {
		if i == few {
			out = append(out, fmt.Sprintf("and %d more", len(ms)-few))
			break
		}
		out = append(out, m.Name)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
