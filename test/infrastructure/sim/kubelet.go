package sim

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=get;update;patch

// nodeCondition is what the sim kubelet reports in the Node's Ready condition.
type nodeCondition struct {
	status          corev1.ConditionStatus
	reason, message string
}

// readyCondition is the Ready condition the kubelet of sm's Node reports
// (sm may be nil: a Node whose SimMachine is gone stays Ready).
func readyCondition(sm *simv1.SimMachine) nodeCondition {
	if sm != nil && sm.Spec.Sim.NodeNotReady {
		return nodeCondition{corev1.ConditionFalse, "KubeletNotReady", "simulated: spec.sim.nodeNotReady is set"}
	}
	return nodeCondition{corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"}
}

// Reason and message the node lifecycle controller writes when a kubelet
// stops posting status; the sim writes them itself because the control
// planes it runs on have no kube-controller-manager.
const (
	nodeStatusUnknownReason  = "NodeStatusUnknown"
	nodeStatusUnknownMessage = "Kubelet stopped posting node status."
)

// unreachable reports whether sm scripts a dead kubelet for its Node.
func unreachable(sm *simv1.SimMachine) bool {
	return sm != nil && sm.Spec.Sim.NodeUnreachable
}

// unreachableTaints are the taints the node lifecycle controller puts on a
// Node whose kubelet stopped posting status.
func unreachableTaints(now metav1.Time) []corev1.Taint {
	return []corev1.Taint{
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now},
	}
}

// hasTaint reports whether the Node carries a taint with key and effect.
func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

// kubeletConditions are the conditions a kubelet itself posts: Ready and
// the pressures, which read False while all is well (Cluster API's
// NodeHealthy summarises these four).
var kubeletConditions = []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// noPressure is what a kubelet with room to spare says of each pressure.
var noPressure = map[corev1.NodeConditionType]nodeCondition{
	corev1.NodeMemoryPressure: {corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
	corev1.NodeDiskPressure:   {corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	corev1.NodePIDPressure:    {corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
}

// KubeletConditions are the conditions of a Node whose kubelet joined and
// is well: Ready, under no pressure. Tests that play the kubelet by hand
// report these.
func KubeletConditions(now metav1.Time) []corev1.NodeCondition {
	out := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}
	for _, t := range kubeletConditions[1:] {
		c := noPressure[t]
		out = append(out, corev1.NodeCondition{Type: t, Status: c.status, Reason: c.reason, Message: c.message,
			LastHeartbeatTime: now, LastTransitionTime: now})
	}
	return out
}

// setPressureConditions reports the pressures as a live kubelet does: False
// where the Node has none yet, or where the node lifecycle controller made
// it Unknown while the kubelet was away. A pressure spec.sim.nodeConditions
// scripts is setProblemConditions'. It says whether anything changed.
func setPressureConditions(n *corev1.Node, now metav1.Time) bool {
	changed := false
	for _, t := range kubeletConditions[1:] {
		want := noPressure[t]
		c := nodeConditionOf(n, t)
		switch {
		case c == nil:
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: want.status,
				Reason: want.reason, Message: want.message, LastHeartbeatTime: now, LastTransitionTime: now})
		case c.Status == corev1.ConditionUnknown && c.Reason == nodeStatusUnknownReason:
			c.Status, c.Reason, c.Message, c.LastHeartbeatTime, c.LastTransitionTime = want.status, want.reason, want.message, now, now
		default:
			continue
		}
		changed = true
	}
	return changed
}

// MarkKubeletSilent marks the kubelet's conditions (Ready and the
// pressures) Unknown without a heartbeat, as the node lifecycle controller
// does once the heartbeats stop. Tests that play that controller by hand
// call it too.
func MarkKubeletSilent(n *corev1.Node, now metav1.Time) {
	for _, t := range kubeletConditions {
		cur := nodeConditionOf(n, t)
		if cur == nil {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: corev1.ConditionUnknown,
				Reason: nodeStatusUnknownReason, Message: nodeStatusUnknownMessage, LastTransitionTime: now})
			continue
		}
		if cur.Status != corev1.ConditionUnknown {
			cur.LastTransitionTime = now
		}
		cur.Status, cur.Reason, cur.Message = corev1.ConditionUnknown, nodeStatusUnknownReason, nodeStatusUnknownMessage
	}
}

// setNodeReady writes the Ready condition with a fresh heartbeat; the
// transition time moves only when the status changes.
func setNodeReady(n *corev1.Node, c nodeCondition, now metav1.Time) {
	for i := range n.Status.Conditions {
		cur := &n.Status.Conditions[i]
		if cur.Type != corev1.NodeReady {
			continue
		}
		if cur.Status != c.status {
			cur.LastTransitionTime = now
		}
		cur.Status, cur.Reason, cur.Message, cur.LastHeartbeatTime = c.status, c.reason, c.message, now
		return
	}
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: c.status,
		Reason: c.reason, Message: c.message, LastHeartbeatTime: now, LastTransitionTime: now})
}

// Reasons of the conditions spec.sim.nodeConditions scripts; the sim turns
// back to False only the conditions it set itself.
const (
	simProblemReason     = "SimulatedProblem"
	simProblemGoneReason = "SimulatedProblemGone"
)

// setProblemConditions reports the types of spec.sim.nodeConditions True and
// those it reported before but no longer lists False, as node-problem-detector
// does; it says whether anything changed.
func setProblemConditions(n *corev1.Node, sm *simv1.SimMachine, now metav1.Time) bool {
	listed := map[corev1.NodeConditionType]bool{}
	if sm != nil {
		for _, t := range sm.Spec.Sim.NodeConditions {
			listed[corev1.NodeConditionType(t)] = true
		}
	}
	changed := false
	set := func(c *corev1.NodeCondition, status corev1.ConditionStatus, reason, message string) {
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message, c.LastHeartbeatTime = status, reason, message, now
		changed = true
	}
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		switch {
		case listed[c.Type] && (c.Status != corev1.ConditionTrue || c.Reason != simProblemReason):
			set(c, corev1.ConditionTrue, simProblemReason, "simulated: spec.sim.nodeConditions lists "+string(c.Type))
		case !listed[c.Type] && c.Reason == simProblemReason:
			set(c, corev1.ConditionFalse, simProblemGoneReason, "simulated: spec.sim.nodeConditions no longer lists "+string(c.Type))
		}
		delete(listed, c.Type)
	}
	for _, t := range sortedTypes(listed) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: corev1.ConditionTrue,
			Reason: simProblemReason, Message: "simulated: spec.sim.nodeConditions lists " + string(t), LastHeartbeatTime: now, LastTransitionTime: now})
		changed = true
	}
	return changed
}

func sortedTypes(m map[corev1.NodeConditionType]bool) []corev1.NodeConditionType {
	out := make([]corev1.NodeConditionType, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

func nodeReady(n *corev1.Node) *corev1.NodeCondition {
	return nodeConditionOf(n, corev1.NodeReady)
}

func nodeConditionOf(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// kubeletNodeReconciler keeps the Ready condition of sim Nodes current and
// heartbeats it every HeartbeatInterval.
type kubeletNodeReconciler struct {
	client client.Client
	// machines reads SimMachines (the management cluster's; client is the
	// cluster the Node is in).
	machines client.Reader
	interval time.Duration
	now      func() time.Time
}

// kubeletPodReconciler runs the Pods bound to sim Nodes and finishes
// terminating ones once their (capped) grace period is over.
type kubeletPodReconciler struct {
	client   client.Client
	machines client.Reader
	cap      time.Duration
	now      func() time.Time
}

func simNodePredicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[NodeLabel] == "true" })
}

// simMachineEvents is where the kubelet hears of SimMachines changing (their
// knobs: nodeNotReady, nodeConditions, nodeUnreachable): the management
// cluster's cache, whichever cluster the Nodes are in, so a knob acts at
// once in a workload cluster too, not at the next heartbeat. keep, when set,
// passes only the SimMachines whose Nodes can be in this cluster. (A
// workload cluster's handlers stay registered on the management informer
// after its connection closes, since controller-runtime's Kind source never
// removes them; their queues are shut down by then, so each costs a no-op
// per SimMachine event until the sim restarts: fine for a simulator.)
type simMachineEvents struct {
	cache cache.Cache
	keep  func(client.Object) bool
}

func (e simMachineEvents) predicate() predicate.Predicate {
	if e.keep == nil {
		return predicate.NewPredicateFuncs(func(client.Object) bool { return true })
	}
	return predicate.NewPredicateFuncs(e.keep)
}

// setupKubeletOn runs the kubelet on the Nodes of mgr's cluster, reading
// SimMachines through machines and woken by their changes through events.
func setupKubeletOn(mgr ctrl.Manager, machines client.Reader, events simMachineEvents, opts Options) error {
	nr := &kubeletNodeReconciler{client: mgr.GetClient(), machines: machines, interval: opts.HeartbeatInterval, now: time.Now}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Node{}, builder.WithPredicates(simNodePredicate())).
		WatchesRawSource(source.Kind(events.cache, client.Object(&simv1.SimMachine{}),
			handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: NodeName(o.GetNamespace(), o.GetName())}}}
			}), events.predicate())).
		Named("sim-kubelet-node").
		Complete(nr); err != nil {
		return err
	}
	pr := &kubeletPodReconciler{client: mgr.GetClient(), machines: machines, cap: opts.KubeletGracePeriodCap, now: time.Now}
	pb := ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			p, ok := o.(*corev1.Pod)
			return ok && p.Spec.NodeName != ""
		}))).
		// A Pod bound to a Node the sim registers later starts then.
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return podsOnNodeRequests(ctx, mgr.GetClient(), o.GetName())
		}), builder.WithPredicates(simNodePredicate(), predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectOld.GetLabels()[NodeLabel] != "true" },
		})).
		Named("sim-kubelet-pod").
		// A kubelet coming back (nodeUnreachable cleared) finishes what
		// piled up meanwhile.
		WatchesRawSource(source.Kind(events.cache, client.Object(&simv1.SimMachine{}),
			handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
				return podsOnNodeRequests(ctx, mgr.GetClient(), NodeName(o.GetNamespace(), o.GetName()))
			}), events.predicate(), predicate.Funcs{
				CreateFunc:  func(event.CreateEvent) bool { return false },
				DeleteFunc:  func(event.DeleteEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
				UpdateFunc: func(e event.UpdateEvent) bool {
					return unreachable(e.ObjectOld.(*simv1.SimMachine)) && !unreachable(e.ObjectNew.(*simv1.SimMachine))
				},
			}))
	return pb.Complete(pr)
}

func podsOnNodeRequests(ctx context.Context, c client.Client, node string) []reconcile.Request {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.MatchingFields{podNodeIndex: node}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(pods.Items))
	for i := range pods.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pods.Items[i])})
	}
	return out
}

// Reconcile retries conflicts quietly.
func (r *kubeletNodeReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *kubeletNodeReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := r.client.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !isSimNode(node) || !node.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	var sm *simv1.SimMachine
	if key, ok := parseProviderID(node.Spec.ProviderID); ok {
		sm = &simv1.SimMachine{}
		if err := r.machines.Get(ctx, key, sm); err != nil {
			if !apierrors.IsNotFound(err) {
				return reconcile.Result{}, err
			}
			sm = nil
		}
	}
	now := r.now()
	if unreachable(sm) {
		return reconcile.Result{}, r.markUnreachable(ctx, node, metav1.NewTime(now))
	}
	if err := r.removeUnreachableTaints(ctx, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	want := readyCondition(sm)
	before := node.DeepCopy()
	problems := setProblemConditions(node, sm, metav1.NewTime(now))
	problems = setPressureConditions(node, metav1.NewTime(now)) || problems
	if cur := nodeReady(node); !problems && cur != nil && cur.Status == want.status && cur.Reason == want.reason {
		if due := cur.LastHeartbeatTime.Add(r.interval); now.Before(due) {
			return reconcile.Result{RequeueAfter: until(now, due)}, nil
		}
	}
	setNodeReady(node, want, metav1.NewTime(now))
	// A strategic merge patch, as a kubelet sends: the conditions it names
	// are merged by type, so it neither drops what others wrote nor fails
	// on a Node someone else patched since the cache saw it.
	if err := r.client.Status().Patch(ctx, node, client.StrategicMergeFrom(before)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{RequeueAfter: r.interval}, nil
}

// markUnreachable plays the node lifecycle controller for a Node whose
// kubelet is dead: Ready=Unknown (the last heartbeat stays where it was),
// then the unreachable taints. Nothing is requeued: the SimMachine watch
// brings the Node back when the knob is cleared.
func (r *kubeletNodeReconciler) markUnreachable(ctx context.Context, node *corev1.Node, now metav1.Time) error {
	if cur := nodeReady(node); cur == nil || cur.Status != corev1.ConditionUnknown || cur.Reason != nodeStatusUnknownReason {
		before := node.DeepCopy()
		MarkKubeletSilent(node, now)
		if err := r.client.Status().Patch(ctx, node, client.StrategicMergeFrom(before)); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	before := node.DeepCopy()
	for _, t := range unreachableTaints(now) {
		if !hasTaint(node, t.Key, t.Effect) {
			node.Spec.Taints = append(node.Spec.Taints, t)
		}
	}
	if len(node.Spec.Taints) == len(before.Spec.Taints) {
		return nil
	}
	return client.IgnoreNotFound(r.client.Patch(ctx, node, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// removeUnreachableTaints lifts the unreachable taints once the kubelet
// posts status again, as the node lifecycle controller does.
func (r *kubeletNodeReconciler) removeUnreachableTaints(ctx context.Context, node *corev1.Node) error {
	keep := node.Spec.Taints[:0:0]
	for _, t := range node.Spec.Taints {
		if t.Key != corev1.TaintNodeUnreachable {
			keep = append(keep, t)
		}
	}
	if len(keep) == len(node.Spec.Taints) {
		return nil
	}
	before := node.DeepCopy()
	node.Spec.Taints = keep
	return r.client.Patch(ctx, node, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// Reconcile retries conflicts quietly.
func (r *kubeletPodReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *kubeletPodReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := r.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Spec.NodeName == "" {
		return reconcile.Result{}, nil
	}
	node := &corev1.Node{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
		// Not registered yet: the Node watch brings the Pod back.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !isSimNode(node) {
		return reconcile.Result{}, nil
	}
	// A dead kubelet neither starts Pods nor confirms that terminating ones
	// stopped: they keep their deletionTimestamp until it comes back.
	if key, ok := parseProviderID(node.Spec.ProviderID); ok {
		sm := &simv1.SimMachine{}
		switch err := r.machines.Get(ctx, key, sm); {
		case err == nil && unreachable(sm):
			return reconcile.Result{}, nil
		case err != nil && !apierrors.IsNotFound(err):
			return reconcile.Result{}, err
		}
	}
	now := r.now()

	if !pod.DeletionTimestamp.IsZero() {
		if finalDeleteSent(pod) {
			return reconcile.Result{}, nil
		}
		grace := time.Duration(0)
		if pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		requested := pod.DeletionTimestamp.Add(-grace)
		if wait := until(now, requested.Add(min(grace, r.cap))); wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
		uid := pod.UID
		err := r.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}

	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || podRunningAndReady(pod) {
		return reconcile.Result{}, nil
	}
	before := pod.DeepCopy()
	started := metav1.NewTime(now)
	pod.Status.Phase = corev1.PodRunning
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &started
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			pod.Status.HostIP = a.Address
			pod.Status.HostIPs = []corev1.HostIP{{IP: a.Address}}
		}
	}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(pod, t, started)
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "sim://" + c.Image, ContainerID: "sim://" + string(pod.UID) + "/" + c.Name,
			Ready: true, Started: ptrTrue(), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		})
	}
	if err := r.client.Status().Patch(ctx, pod, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

func ptrTrue() *bool { t := true; return &t }

func podRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podReady(p)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func setPodCondition(p *corev1.Pod, t corev1.PodConditionType, now metav1.Time) {
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == t {
			if c.Status != corev1.ConditionTrue {
				c.Status, c.LastTransitionTime, c.Reason, c.Message = corev1.ConditionTrue, now, "", ""
			}
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
}

// finalDeleteSent: the grace period is down to 0, so the Pod's final
// deletion was sent (the API server writes the shortened grace period, then
// removes the Pod: the first write wakes this kubelet before the removal
// reaches its cache). Sending it again would find no Pod; one held by
// finalizers is not removed by another deletion either.
func finalDeleteSent(pod *corev1.Pod) bool {
	return pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
}
