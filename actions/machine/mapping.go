package machine

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/krtt-dev/krtt/actions/machineset"
	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

const machineProviderIDIndex = "spec.providerID"

// mapper turns events of other objects into the Machines they concern.
// client reads the management cluster (Machines); nodes reads the Nodes of
// the cluster the events come from.
type mapper struct {
	client client.Client
	nodes  client.Reader
}

func indexMachineByProviderID(obj client.Object) []string {
	m, ok := obj.(*clusterv1.Machine)
	if !ok || m.Spec.ProviderID == nil || *m.Spec.ProviderID == "" {
		return nil
	}
	return []string{*m.Spec.ProviderID}
}

// controlPlaneMachineIndex indexes control-plane Machines by their Cluster's
// name (workers are not in it), so counting a Cluster's control plane costs
// what it has, not what the namespace has.
const controlPlaneMachineIndex = "controlPlaneMachine.clusterName"

func indexControlPlaneMachine(obj client.Object) []string {
	m, ok := obj.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	if _, cp := m.Labels[clusterv1.ControlPlaneLabel]; !cp {
		return nil
	}
	return []string{m.Spec.ClusterName}
}

// machineExternalRefIndex indexes Machines by the provider objects they name
// (bootstrap config and infrastructure), as externalRefKey.
const machineExternalRefIndex = "spec.externalRefs"

// externalRefKey is the index value of a provider object reference.
func externalRefKey(group, kind, name string) string { return group + "/" + kind + "/" + name }

func indexMachineByExternalRef(obj client.Object) []string {
	m, ok := obj.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ir := m.Spec.InfrastructureRef
	keys := []string{externalRefKey(ir.APIGroup, ir.Kind, ir.Name)}
	if br := m.Spec.Bootstrap.ConfigRef; br != nil {
		keys = append(keys, externalRefKey(br.APIGroup, br.Kind, br.Name))
	}
	return keys
}

// machinesNaming wakes the Machines that name a provider object, whether or
// not they own it yet: a kind that could not be read until now (its first
// sync replays every object) wakes the Machines waiting on it.
func (r mapper) machinesNaming(ctx context.Context, o *unstructured.Unstructured) []reconcile.Request {
	list := &clusterv1.MachineList{}
	key := externalRefKey(o.GroupVersionKind().Group, o.GetKind(), o.GetName())
	if err := r.client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{machineExternalRefIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// clusterToMachines wakes every Machine of a Cluster (pause, deletion).
func (r mapper) clusterToMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.machinesOfCluster(ctx, obj.GetNamespace(), obj.GetName())
}

func (r mapper) machinesOfCluster(ctx context.Context, namespace, cluster string) []reconcile.Request {
	return r.machinesLabelled(ctx, namespace, client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})
}

func (r mapper) machinesLabelled(ctx context.Context, namespace string, labels client.MatchingLabels) []reconcile.Request {
	list := &clusterv1.MachineList{}
	if err := r.client.List(ctx, list, client.InNamespace(namespace), labels, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return out
}

// nodeToMachines wakes the Machine of a Node: by the annotation krtt writes,
// or before that by providerID.
func (r mapper) nodeToMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	if name, ns := n.Annotations[clusterv1.MachineAnnotation], n.Annotations[clusterv1.ClusterNamespaceAnnotation]; name != "" && ns != "" {
		key := client.ObjectKey{Namespace: ns, Name: name}
		// Only a Machine this operator's cache holds: under a watch filter
		// the others belong to another instance.
		if !r.holds(ctx, key, n.Spec.ProviderID) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: key}}
	}
	if n.Spec.ProviderID == "" {
		return nil
	}
	list := &clusterv1.MachineList{}
	if err := r.client.List(ctx, list, client.MatchingFields{machineProviderIDIndex: n.Spec.ProviderID}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return out
}

// holds reports whether the cache holds the Machine key names. Pod and Node
// events ask it for every event, so it looks first among the Machines with
// the Node's providerID (the cached objects, no copy), then by name.
func (r mapper) holds(ctx context.Context, key client.ObjectKey, providerID string) bool {
	if providerID != "" {
		list := &clusterv1.MachineList{}
		if err := r.client.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingFields{machineProviderIDIndex: providerID}, client.UnsafeDisableDeepCopy); err == nil {
			for i := range list.Items {
				if list.Items[i].Name == key.Name {
					return true
				}
			}
		}
	}
	return r.client.Get(ctx, key, &clusterv1.Machine{}) == nil
}

// podGoneOrGoing passes only Pod events that can move a drain forward: a
// deletion, or a Pod that got a deletionTimestamp.
func podGoneOrGoing() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
		},
	}
}

// podToMachines wakes the Machine whose Node ran the Pod, so a drain moves
// on as soon as Pods go instead of at its next requeue.
func (r mapper) podToMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Spec.NodeName == "" {
		return nil
	}
	n := &corev1.Node{}
	if err := r.nodes.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, n); err != nil {
		return nil
	}
	return r.nodeToMachines(ctx, n)
}

// volumeDetached passes the VolumeAttachment events that can end a volume
// wait: one gone, or one no longer attached.
func volumeDetached() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*storagev1.VolumeAttachment)
			n, ok2 := e.ObjectNew.(*storagev1.VolumeAttachment)
			return ok1 && ok2 && o.Status.Attached && !n.Status.Attached
		},
	}
}

// volumeAttachmentToMachines wakes the Machine of the Node a volume was
// attached to.
func (r mapper) volumeAttachmentToMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	va, ok := obj.(*storagev1.VolumeAttachment)
	if !ok || va.Spec.NodeName == "" {
		return nil
	}
	n := &corev1.Node{}
	if err := r.nodes.Get(ctx, client.ObjectKey{Name: va.Spec.NodeName}, n); err != nil {
		return nil
	}
	return r.nodeToMachines(ctx, n)
}

// drainingMachines wakes every Machine being deleted when a
// PodDisruptionBudget or a MachineDrainRule changes: a budget that now allows
// a disruption, or a rule that now lets a Pod go, should let the drain on at
// once, not at its next requeue.
// PDB changes are rare and Machines being deleted few, so this stays cheap;
// it goes by phase, not by table state, so the tables stay free to rename
// their states.
func (r mapper) drainingMachines(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &clusterv1.MachineList{}
	if err := r.client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, m := range list.Items {
		if m.Status.Phase == clusterv1.MachinePhaseDeleting {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
		}
	}
	return out
}

// deletionRequested passes the update that sets an object's
// deletionTimestamp.
func deletionRequested() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
		},
	}
}

// deploymentToMachines wakes the Machines of a MachineDeployment (by the
// deployment-name label its MachineSets give them) for their UpToDate
// condition.
func (r mapper) deploymentToMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.machinesLabelled(ctx, obj.GetNamespace(), client.MatchingLabels{clusterv1.DeploymentNameLabel: machineset.LabelValue(obj.GetName())})
}

// rolloutChanged passes the updates of a MachineDeployment that can change
// whether its Machines are up to date: the template's rollout fields,
// spec.rollout.after, and the revision annotation (a new revision is how
// an expired rollout.after shows). Scaling and status updates, which a
// rollout makes many of, wake no Machine.
func rolloutChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, ok1 := e.ObjectOld.(*clusterv1.MachineDeployment)
			cur, ok2 := e.ObjectNew.(*clusterv1.MachineDeployment)
			if !ok1 || !ok2 {
				return false
			}
			return len(uptodate.Differences(uptodate.Of(&old.Spec.Template.Spec), uptodate.Of(&cur.Spec.Template.Spec))) > 0 ||
				!old.Spec.Rollout.After.Equal(cur.Spec.Rollout.After) ||
				old.Annotations[clusterv1.RevisionAnnotation] != cur.Annotations[clusterv1.RevisionAnnotation]
		},
	}
}
