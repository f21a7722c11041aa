// Package machine holds the Go side of the Machine tables: the observers
// that compute facts from one snapshot of the world, and the actions the
// rows run. Lifecycle decisions are not made here; they are rows in
// transitions/machine.
package machine

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
)

// ClusterClients hands out the Node side of a Cluster: the workload cluster
// its kubeconfig Secret names (internal/remote), or the management cluster.
// The error is an API error; a workload cluster that cannot be used is the
// connection's State.
type ClusterClients interface {
	ClientFor(ctx context.Context, cluster client.ObjectKey) (remote.Connection, error)
}

// LocalClusterClients serves every Cluster from one client, as self-hosted.
type LocalClusterClients struct{ Client client.Client }

// ClientFor returns the shared client.
func (l LocalClusterClients) ClientFor(context.Context, client.ObjectKey) (remote.Connection, error) {
	return remote.Connection{Client: l.Client, State: remote.SelfHosted, Message: "the Node side is the management cluster"}, nil
}

// Watcher makes sure events of an external object's kind reach the Machine
// that owns it (the controller starts a watch the first time it meets a kind).
type Watcher interface {
	Watch(ctx context.Context, obj *unstructured.Unstructured) error
}

// Scope is one reconcile's view of a Machine and everything around it. It is
// filled once by Observe; observers read it, actions act through it and
// change Machine in memory, and the reconciler patches Machine once.
type Scope struct {
	// Client reaches the management cluster (Machines, Clusters, provider objects).
	Client client.Client
	// NodeClient reaches the cluster that runs the Machine's Node and Pods;
	// nil when that cluster cannot be used (see Workload).
	NodeClient client.Client
	// Workload is how the Node side was reached in this reconcile.
	Workload remote.Connection
	Watcher  Watcher
	Recorder events.EventRecorder
	Now      time.Time

	Key          client.ObjectKey
	MachineFound bool
	Machine      *clusterv1.Machine

	Cluster *clusterv1.Cluster
	// Set is the MachineSet controlling the Machine, and Deployment the
	// MachineDeployment controlling that set; nil when there is none.
	// They are read for the UpToDate condition only.
	Set        *clusterv1.MachineSet
	Deployment *clusterv1.MachineDeployment
	// OwnersErr: reading them failed; UpToDate says so and the
	// outdated-revision taint is left as it is.
	OwnersErr error
	// ControlPlane is the Cluster's control plane object, when it has one.
	ControlPlane *unstructured.Unstructured
	// ControlPlaneMachines counts the Cluster's control-plane Machines that
	// are not being deleted, this one excluded.
	ControlPlaneMachines int

	Bootstrap      *unstructured.Unstructured
	Infrastructure *unstructured.Unstructured
	// BootstrapClaim and InfrastructureClaim say whom the object belongs
	// to when that is not this Machine (see claimOf); empty otherwise.
	BootstrapClaim, InfrastructureClaim string

	// Nodes holds the Machine's Node: by nodeRef, else every Node with the
	// Machine's providerID.
	Nodes []corev1.Node

	// PodVerdicts is the Pod verdict table the drain asks about each Pod.
	PodVerdicts *engine.Decider[*PodItem]
	// NodeSync selects the Machine labels and annotations the Node sync
	// copies beyond the domains it always copies.
	NodeSync controller.NodeSync

	// ObserveError: facts read as if the object were absent, and the error
	// row decides.
	reconciler.ObserveError

	// Told holds the Events the actions tell with Cluster API's reasons:
	// the Node found (SuccessfulSetNodeRef), labelled interruptible
	// (SuccessfulSetInterruptibleNodeLabel), drained (SuccessfulDrainNode),
	// its volumes detached after a wait (NodeVolumesDetached).
	Told reconciler.Told
	// volumeWaitStarted: this reconcile started the volume wait, so a
	// wait that ends in it never waited and tells nothing.
	volumeWaitStarted bool

	// readySince is when Ready turned True as summarizeReady left it
	// (this reconcile's clock when it turns True now); zero when it is not
	// True.
	readySince time.Time
}

// Node returns the Machine's Node when exactly one was found.
func (s *Scope) Node() *corev1.Node {
	if len(s.Nodes) == 1 {
		return &s.Nodes[0]
	}
	return nil
}

// IsDeleting reports whether the Machine has a deletionTimestamp.
func (s *Scope) IsDeleting() bool {
	return s.Machine != nil && !s.Machine.DeletionTimestamp.IsZero()
}
