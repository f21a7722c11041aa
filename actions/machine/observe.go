package machine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
)

// NodeProviderIDIndex is the field index on Nodes by spec.providerID that the
// operator's cache keeps, so finding a Machine's Node is a lookup, not a scan.
const NodeProviderIDIndex = "spec.providerID"

// NodeProviderIDIndexer extracts the index key.
func NodeProviderIDIndexer(obj client.Object) []string {
	n, ok := obj.(*corev1.Node)
	if !ok || n.Spec.ProviderID == "" {
		return nil
	}
	return []string{n.Spec.ProviderID}
}

// Observer fetches everything a Machine reconcile reads, once.
type Observer struct {
	Client   client.Client
	Clusters ClusterClients
	Watcher  Watcher
	// PodVerdicts is handed to every Scope: the drain asks it about Pods.
	PodVerdicts *engine.Decider[*PodItem]
	// NodeSync is handed to every Scope: the Node sync copies what it
	// selects.
	NodeSync controller.NodeSync
	// Indexed: Client reads the manager's cache, which holds the Machine
	// indexes Setup registers. A one-shot reader (krtt explain) has none.
	Indexed bool
}

// Observe builds the Scope for one Machine at the reconcile's clock reading.
// API errors do not abort it: the first one is kept in Scope.Err and the
// apiError fact lets a row decide.
func (o *Observer) Observe(ctx context.Context, key client.ObjectKey, now time.Time) *Scope {
	s := &Scope{Client: o.Client, Watcher: o.Watcher, Now: now, Key: key, PodVerdicts: o.PodVerdicts, NodeSync: o.NodeSync}
	m := &clusterv1.Machine{}
	if err := o.Client.Get(ctx, key, m); err != nil {
		if !apierrors.IsNotFound(err) {
			s.Err = fmt.Errorf("get Machine: %w", err)
		}
		return s
	}
	s.MachineFound = true
	s.Machine = m

	s.Cluster = o.getCluster(ctx, s)
	o.getOwners(ctx, s)
	if s.Cluster != nil && s.Cluster.Spec.ControlPlaneRef != nil {
		s.ControlPlane = o.getExternal(ctx, s, *s.Cluster.Spec.ControlPlaneRef, m.Namespace, "control plane")
	}
	if s.Cluster != nil {
		o.countControlPlaneMachines(ctx, s)
	}
	if ref := m.Spec.Bootstrap.ConfigRef; ref != nil {
		s.Bootstrap = o.getExternal(ctx, s, *ref, m.Namespace, "bootstrap")
	}
	s.Infrastructure = o.getExternal(ctx, s, m.Spec.InfrastructureRef, m.Namespace, "infrastructure")
	o.observeClaims(ctx, s)

	o.connect(ctx, s)
	if s.NodeClient == nil {
		// The Node side cannot be seen: no Node facts are observed, and
		// the workloadCluster rows hold every Node-side step.
		return s
	}
	s.findNodes(ctx)
	return s
}

// NoCluster is the workloadCluster of a Machine whose Cluster does not
// exist: there is no connection to read its Node side through, so nothing
// of it is observed. The management cluster is never read in its place: a
// Node that lives in a workload cluster would read as deleted there.
const NoCluster remote.State = "NoCluster"

// connect finds the Node side of the Machine's Cluster. Without a Cluster
// there is nothing to connect to, and the Node side is not observed.
func (o *Observer) connect(ctx context.Context, s *Scope) {
	m := s.Machine
	if s.Cluster == nil {
		s.Workload = remote.Connection{State: NoCluster,
			Message: fmt.Sprintf("the Cluster %s does not exist: its Node side cannot be read", m.Spec.ClusterName)}
		return
	}
	if o.Clusters == nil {
		s.Workload = remote.Connection{Client: o.Client, State: remote.SelfHosted, Message: "the Node side is the management cluster"}
		s.NodeClient = o.Client
		return
	}
	conn, err := o.Clusters.ClientFor(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.ClusterName})
	if err != nil {
		s.Keep(fmt.Errorf("connect to the workload cluster of %s: %w", m.Spec.ClusterName, err))
		return
	}
	s.Workload = conn
	if conn.Usable() {
		s.NodeClient = conn.Client
	}
}

func (o *Observer) getCluster(ctx context.Context, s *Scope) *clusterv1.Cluster {
	c := &clusterv1.Cluster{}
	err := o.Client.Get(ctx, client.ObjectKey{Namespace: s.Machine.Namespace, Name: s.Machine.Spec.ClusterName}, c)
	if err == nil {
		return c
	}
	if !apierrors.IsNotFound(err) {
		s.Keep(fmt.Errorf("get Cluster %s: %w", s.Machine.Spec.ClusterName, err))
	}
	return nil
}

// getOwners reads the MachineSet that controls the Machine and the
// MachineDeployment that controls the set. One that is gone, or that
// controls nothing by that UID, is no owner. They are read only for what
// the Machine says of its rollout (UpToDate, the outdated-revision taint),
// so an error reading them (OwnersErr) makes UpToDate Unknown, leaves the
// taint as it is and holds nothing else.
func (o *Observer) getOwners(ctx context.Context, s *Scope) {
	ref := metav1.GetControllerOf(s.Machine)
	if ref == nil || ref.Kind != "MachineSet" || ref.APIVersion != clusterv1.GroupVersion.String() {
		return
	}
	ms := &clusterv1.MachineSet{}
	if !o.getOwner(ctx, s, ref, ms) {
		return
	}
	s.Set = ms
	ref = metav1.GetControllerOf(ms)
	if ref == nil || ref.Kind != "MachineDeployment" || ref.APIVersion != clusterv1.GroupVersion.String() {
		return
	}
	md := &clusterv1.MachineDeployment{}
	if o.getOwner(ctx, s, ref, md) {
		s.Deployment = md
	}
}

func (o *Observer) getOwner(ctx context.Context, s *Scope, ref *metav1.OwnerReference, obj client.Object) bool {
	err := o.Client.Get(ctx, client.ObjectKey{Namespace: s.Machine.Namespace, Name: ref.Name}, obj)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			s.OwnersErr = fmt.Errorf("get %s %s: %w", ref.Kind, ref.Name, err)
		}
		return false
	}
	return obj.GetUID() == ref.UID
}

// getExternal reads a contract object as unstructured; API errors are kept
// for the apiError fact.
func (o *Observer) getExternal(ctx context.Context, s *Scope, ref clusterv1.ObjectReference, namespace, what string) *unstructured.Unstructured {
	u, err := contract.Get(ctx, o.Client, ref, namespace, what)
	if err != nil {
		s.Keep(err)
	}
	if u != nil && o.Watcher != nil {
		// Adoption starts the kind's watch, but a restarted operator whose
		// Machines are all past adoption would otherwise never watch it, and
		// a deleted or failed provider object would not wake its Machine.
		// Once per kind; after that a map lookup.
		if werr := o.Watcher.Watch(ctx, u); werr != nil {
			s.Keep(werr)
		}
	}
	if reconciler.IsKindNotReadable(err) && o.Watcher != nil {
		// Watching the kind makes its first sync wake this Machine (it
		// names the object) rather than its back-off, which grows to minutes
		// while the kind stays unreadable. Starting it never blocks.
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(reconciler.NotReadableKind(err))
		if werr := o.Watcher.Watch(ctx, probe); werr != nil {
			s.Keep(werr)
		}
	}
	return u
}

func (o *Observer) countControlPlaneMachines(ctx context.Context, s *Scope) {
	list := &clusterv1.MachineList{}
	var err error
	if o.Indexed {
		// Every Machine asks, so this must not grow with the fleet: the
		// index holds only control-plane Machines, a handful per Cluster,
		// while a label selector would walk every Machine of the namespace.
		err = o.Client.List(ctx, list, client.InNamespace(s.Machine.Namespace), client.MatchingFields{controlPlaneMachineIndex: s.Machine.Spec.ClusterName})
	} else {
		err = o.Client.List(ctx, list, client.InNamespace(s.Machine.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: s.Machine.Spec.ClusterName}, client.HasLabels{clusterv1.ControlPlaneLabel})
	}
	if err != nil {
		s.Keep(fmt.Errorf("list control-plane Machines: %w", err))
		return
	}
	for i := range list.Items {
		other := &list.Items[i]
		if other.UID == s.Machine.UID || !other.DeletionTimestamp.IsZero() {
			continue
		}
		s.ControlPlaneMachines++
	}
}

// findNodes looks up the Machine's Node: by status.nodeRef, else by
// spec.providerID (through the index). An action that changes either
// looks again (CopyInfrastructureFields), so the observation stays true.
func (s *Scope) findNodes(ctx context.Context) {
	m := s.Machine
	if m.Status.NodeRef != nil && m.Status.NodeRef.Name != "" {
		n := corev1.Node{}
		err := s.NodeClient.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, &n)
		switch {
		case err == nil:
			s.Nodes = []corev1.Node{n}
		case !apierrors.IsNotFound(err):
			s.Keep(fmt.Errorf("get Node %s: %w", m.Status.NodeRef.Name, err))
		}
		return
	}
	if m.Spec.ProviderID == nil || *m.Spec.ProviderID == "" {
		return
	}
	nodes, err := NodesByProviderID(ctx, s.NodeClient, *m.Spec.ProviderID)
	if err != nil {
		s.Keep(err)
		return
	}
	s.Nodes = nodes
}

// NodesByProviderID finds Nodes through the providerID index, falling back
// to a filtered list where the client has no such index (a direct client).
func NodesByProviderID(ctx context.Context, c client.Client, providerID string) ([]corev1.Node, error) {
	list := &corev1.NodeList{}
	if err := c.List(ctx, list, client.MatchingFields{NodeProviderIDIndex: providerID}); err == nil {
		return list.Items, nil
	}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	var out []corev1.Node
	for _, n := range list.Items {
		if n.Spec.ProviderID == providerID {
			out = append(out, n)
		}
	}
	return out, nil
}
