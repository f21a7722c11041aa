package machineset

import (
	"context"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// LabelValue is s when it is a valid label value; otherwise a short hash of
// it that is one ("hash_<base64url of its 32-bit FNV-1a>_z", the form Cluster
// API's format.MustFormatValue gives, so both agree on a set's label). A
// MachineSet's name can be 253 characters long, a label value only 63.
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return "hash_" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + "_z"
}

// What a MachineSet does with its template's fields on the Machines it
// already has. Nothing rolls: a MachineSet never replaces a Machine to bring
// it up to date; Machines it creates get the whole template. These sync in
// place (Cluster API syncMachines / computeDesiredMachine):
//   - metadata.labels and metadata.annotations of the template: the keys the
//     set manages (listed on the Machine in ManagedLabelsAnnotation and
//     ManagedAnnotationsAnnotation) follow the template, added or removed,
//     on the Machine and on its provider objects; keys someone else put
//     there stay; the set-name and cluster-name labels are always set;
//   - spec.deletion (the node drain, volume detach and node deletion
//     timeouts, onDrainTimeout, maxEvictRetries), also on Machines being
//     deleted, since they rule the teardown;
//   - spec.readinessGates, also on Machines being deleted (as Cluster API);
//   - spec.health (Node conditions, health and creation timeouts).
//
// bootstrap.configRef and infrastructureRef, failureDomain and providerID
// are the Machine's own and never change.

// setLabels are the labels the set puts on every Machine besides the
// template's.
func setLabels(ms *clusterv1.MachineSet) map[string]string {
	l := map[string]string{
		clusterv1.SetNameLabel:     LabelValue(ms.Name),
		clusterv1.ClusterNameLabel: ms.Spec.ClusterName,
	}
	if v, ok := ms.Labels[clusterv1.WatchFilterLabel]; ok {
		// The operator instance that sees the set (--watch-filter) must
		// see its Machines, or it would create them again and again.
		l[clusterv1.WatchFilterLabel] = v
	}
	if v, ok := ms.Labels[clusterv1.DeploymentNameLabel]; ok {
		// A deployment's Machines say which deployment they serve
		// (Cluster API machineLabelsFromMachineSet).
		l[clusterv1.DeploymentNameLabel] = v
	}
	return l
}

// machineMetadata is the labels and annotations a new Machine of the set
// gets.
func machineMetadata(ms *clusterv1.MachineSet) (labels, annotations map[string]string) {
	tpl := ms.Spec.Template.ObjectMeta
	labels = reconciler.FollowManaged(nil, nil, tpl.Labels)
	maps.Copy(labels, setLabels(ms))
	annotations = reconciler.FollowManaged(nil, nil, tpl.Annotations)
	setManaged(annotations, tpl)
	return labels, annotations
}

// desiredMachine is m with what the template gives in place; changed
// reports whether that differs from m. m is not changed.
func desiredMachine(ms *clusterv1.MachineSet, m *clusterv1.Machine) (out *clusterv1.Machine, changed bool) {
	out = m.DeepCopy()
	tpl := ms.Spec.Template
	out.Spec.Deletion = *tpl.Spec.Deletion.DeepCopy()
	out.Spec.ReadinessGates = slices.Clone(tpl.Spec.ReadinessGates)
	out.Spec.MinReadySeconds = tpl.Spec.MinReadySeconds
	out.Spec.Taints = slices.Clone(tpl.Spec.Taints)
	if m.DeletionTimestamp.IsZero() {
		labels := reconciler.FollowManaged(m.Labels, reconciler.ManagedKeys(m.Annotations, clusterv1.ManagedLabelsAnnotation), tpl.ObjectMeta.Labels)
		maps.Copy(labels, setLabels(ms))
		annotations := reconciler.FollowManaged(m.Annotations, reconciler.ManagedKeys(m.Annotations, clusterv1.ManagedAnnotationsAnnotation), tpl.ObjectMeta.Annotations)
		setManaged(annotations, tpl.ObjectMeta)
		out.Labels, out.Annotations = labels, annotations
		out.Spec.Health = *tpl.Spec.Health.DeepCopy()
	}
	return out, !equality.Semantic.DeepEqual(out.Labels, m.Labels) || !equality.Semantic.DeepEqual(out.Annotations, m.Annotations) ||
		!equality.Semantic.DeepEqual(out.Spec, m.Spec)
}

// setManaged records in annotations which keys the set manages.
func setManaged(annotations map[string]string, tpl clusterv1.TemplateMetadata) {
	reconciler.Record(annotations, clusterv1.ManagedLabelsAnnotation, tpl.Labels)
	reconciler.Record(annotations, clusterv1.ManagedAnnotationsAnnotation, tpl.Annotations)
}

// outOfSync lists the set's Machines that lack what the template gives in
// place.
func outOfSync(ms *clusterv1.MachineSet, owned []*clusterv1.Machine) []*clusterv1.Machine {
	var out []*clusterv1.Machine
	for _, m := range owned {
		if _, changed := desiredMachine(ms, m); changed {
			out = append(out, m)
		}
	}
	return out
}

// syncMachines patches the Machines that are out of sync with the template
// (merge patches: only the keys and fields that change are sent), and the
// provider objects of those not being deleted.
func syncMachines(ctx context.Context, s *Scope) engine.Outcome {
	for _, m := range s.OutOfSync {
		want, changed := desiredMachine(s.Set, m)
		if !changed {
			continue
		}
		if m.DeletionTimestamp.IsZero() {
			if err := syncProviderMetadata(ctx, s, m); err != nil {
				return engine.Fail(err)
			}
		}
		if err := s.Client.Patch(ctx, want, client.MergeFrom(m)); err != nil && !apierrors.IsNotFound(err) {
			return engine.Fail(fmt.Errorf("update Machine %s in place: %w", m.Name, err))
		}
	}
	return engine.OKf("Updated %s and their provider objects in place from the template (labels, annotations, readiness gates, deletion and health settings)", names(s.OutOfSync))
}

// syncProviderMetadata gives the bootstrap and infrastructure objects of m
// the template's labels and annotations, as Cluster API's syncMachines
// (updateLabelsAndAnnotations) does: the keys the set managed on m before
// (its record, written with the same template) and no longer wants go, keys
// others set stay. It runs before m is patched: a failure leaves m out of
// sync, so the next reconcile does both again.
func syncProviderMetadata(ctx context.Context, s *Scope, m *clusterv1.Machine) error {
	tpl := s.Set.Spec.Template.ObjectMeta
	refs := []clusterv1.ObjectReference{m.Spec.InfrastructureRef}
	if m.Spec.Bootstrap.ConfigRef != nil {
		refs = append(refs, *m.Spec.Bootstrap.ConfigRef)
	}
	for _, ref := range refs {
		u, err := contract.Get(ctx, s.Client, ref, m.Namespace, "provider object of Machine "+m.Name)
		if err != nil {
			return err
		}
		if u == nil {
			continue
		}
		labels := reconciler.FollowManaged(u.GetLabels(), reconciler.ManagedKeys(m.Annotations, clusterv1.ManagedLabelsAnnotation), tpl.Labels)
		maps.Copy(labels, setLabels(s.Set))
		annotations := reconciler.FollowManaged(u.GetAnnotations(), reconciler.ManagedKeys(m.Annotations, clusterv1.ManagedAnnotationsAnnotation), tpl.Annotations)
		if maps.Equal(labels, u.GetLabels()) && maps.Equal(annotations, u.GetAnnotations()) {
			continue
		}
		before := u.DeepCopy()
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		if err := s.Client.Patch(ctx, u, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("update %s %s of Machine %s in place: %w", ref.Kind, ref.Name, m.Name, err)
		}
	}
	return nil
}
