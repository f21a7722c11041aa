package machine

import (
	"context"

	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Indexes are the field indexes the Machine controller reads the Node side
// through; the management cluster's cache and every workload cluster's get
// them.
func Indexes() []remote.Index {
	return []remote.Index{
		{Object: &corev1.Node{}, Field: NodeProviderIDIndex, Extract: NodeProviderIDIndexer},
		{Object: &corev1.Pod{}, Field: PodNodeNameIndex, Extract: PodNodeNameIndexer},
	}
}

// nodeSideSources are the watches on one cluster's Node side that wake
// Machines: a Node (by annotation or providerID), a Pod going away from a
// Node, a PodDisruptionBudget changing while Machines drain, a volume
// detached from a Node (the volume wait moves on at once rather than at
// its next requeue). m.nodes must
// read that cluster's Nodes.
func (m mapper) nodeSideSources(ca cache.Cache) []source.Source {
	return []source.Source{
		source.Kind[client.Object](ca, &corev1.Node{}, handler.EnqueueRequestsFromMapFunc(m.nodeToMachines), nodeChangedBeyondHeartbeat()),
		source.Kind[client.Object](ca, &corev1.Pod{}, reconciler.EnqueueCoalesced(podGoneWakeDelay, m.podToMachines), podGoneOrGoing()),
		source.Kind[client.Object](ca, &policyv1.PodDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(m.drainingMachines)),
		source.Kind[client.Object](ca, &storagev1.VolumeAttachment{}, handler.EnqueueRequestsFromMapFunc(m.volumeAttachmentToMachines), volumeDetached()),
	}
}

// workloadWatcher starts the Node-side watches on every workload cluster
// connection, for as long as the connection lives.
func (m mapper) workloadWatcher(c controller.Controller) remote.Watcher {
	return remote.WatcherFunc(func(ctx context.Context, _ client.ObjectKey, cl cluster.Cluster) error {
		rm := mapper{client: m.client, nodes: cl.GetClient()}
		for _, src := range rm.nodeSideSources(cl.GetCache()) {
			if err := c.Watch(scopedSource{ctx: ctx, src: src}); err != nil {
				return err
			}
		}
		return nil
	})
}

// scopedSource ends a source when its connection closes, not only when the
// controller stops.
type scopedSource struct {
	ctx context.Context
	src source.Source
}

func (s scopedSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	sctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(s.ctx, cancel)
	return s.src.Start(sctx, q)
}

func (s scopedSource) String() string { return "workload cluster source" }

// secretToMachines wakes the Machines of the Cluster whose kubeconfig Secret
// appeared, changed or went: their Node side moves.
func (m mapper) secretToMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	name, ok := remote.ClusterOfSecret(obj.GetName())
	if !ok {
		return nil
	}
	return m.machinesOfCluster(ctx, obj.GetNamespace(), name)
}

// workloadEvents turns the connection state changes the cache announces
// into a source.
func workloadEvents(ch <-chan event.GenericEvent, h handler.EventHandler) source.Source {
	return source.Channel(ch, h)
}
