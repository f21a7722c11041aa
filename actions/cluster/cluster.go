// Package cluster holds the Go side of the Cluster tables
// (transitions/cluster): the observer that reads a Cluster, its workload
// cluster connection and its Machines once per reconcile, the facts, the
// actions and the mirrors. Decisions are rows.
package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
)

// RegistryName is the name the Cluster TableSet gives in spec.registry.
const RegistryName = "cluster"

// Condition types the Cluster tables own.
const (
	WorkloadClusterReachableCondition = "WorkloadClusterReachable"
	MachinesReadyCondition            = "MachinesReady"
	// WorkersAvailableCondition aggregates the MachineDeployments'
	// Available; AvailableCondition summarises the Cluster's conditions;
	// RemoteConnectionProbeCondition is the rows' Cluster API name for
	// WorkloadClusterReachable.
	WorkersAvailableCondition      = "WorkersAvailable"
	AvailableCondition             = "Available"
	RemoteConnectionProbeCondition = "RemoteConnectionProbe"
)

// Connections reaches a Cluster's Node side and closes it (internal/remote).
type Connections interface {
	ClientFor(ctx context.Context, cluster client.ObjectKey) (remote.Connection, error)
	Disconnect(cluster client.ObjectKey)
}

// Scope is one reconcile's view of a Cluster.
type Scope struct {
	Connections Connections
	Key         client.ObjectKey
	Found       bool
	Cluster     *clusterv1.Cluster
	// Now is the reconcile's clock reading.
	Now time.Time
	// Workload is how the Node side was reached.
	Workload remote.Connection
	// Machines are the Cluster's Machines (by the cluster-name label):
	// read only, they may be the cache's own objects.
	Machines []*clusterv1.Machine
	// MachineDeployments are the Cluster's (spec.clusterName), unread when
	// MachineDeploymentsErr says why; MachineSets too, kept only while the
	// Cluster is being deleted; StandaloneSets are its MachineSets no
	// deployment controls, for status.workers.
	MachineDeployments    []clusterv1.MachineDeployment
	MachineDeploymentsErr error
	MachineSets           []clusterv1.MachineSet
	StandaloneSets        []clusterv1.MachineSet
	// Client deletes the Cluster's MachineDeployments, MachineSets and
	// Machines on teardown.
	Client client.Client
	// ControlPlane is the object spec.controlPlaneRef names, nil when it is
	// not named or does not exist; ControlPlaneMissing says why it is nil
	// when named (not found, or its kind not served), ControlPlaneUnread
	// that an API error (ControlPlaneErr) left it unknown.
	ControlPlane        *unstructured.Unstructured
	ControlPlaneMissing string
	// ControlPlaneNotServed: it is missing because its kind is not served.
	ControlPlaneNotServed bool
	ControlPlaneUnread    bool
	ControlPlaneErr       error
	// Infrastructure is the object spec.infrastructureRef names, read as
	// ControlPlane is.
	Infrastructure        *unstructured.Unstructured
	InfrastructureMissing string
	InfrastructureUnread  bool
	InfrastructureErr     error
	// KubeconfigSecret: the <cluster>-kubeconfig Secret exists (or could
	// not be read); ClusterCASecret: the <cluster>-ca Secret does. Secrets
	// reads the CA's data, uncached.
	KubeconfigSecret bool
	ClusterCASecret  bool
	Secrets          client.Reader
	// Err is an API error met while observing, for the log.
	Err error
	// Told holds the Events the status tells beside the phase's: the
	// infrastructure provisioned and the control plane initialized, once
	// each, as Cluster API's Cluster controller records them.
	Told reconciler.Told
}

// Observer reads a Cluster's world.
type Observer struct {
	Client      client.Client
	Connections Connections
	// Watcher watches the control plane kinds Clusters name, so the
	// object's appearing wakes them; nil in krtt explain.
	Watcher *reconciler.KindWatcher
	// Machines reads a Cluster's Machines; nil lists them through Client
	// by their label (a one-shot reader without the manager's cache).
	Machines MachinesOfCluster
	// Secrets reads a Secret's data without caching every Secret (the
	// Client holds their metadata only); nil reads through Client.
	Secrets client.Reader
}

// MachinesOfCluster returns the Machines of the Cluster key names, read
// only.
type MachinesOfCluster func(ctx context.Context, key client.ObjectKey) ([]*clusterv1.Machine, error)

// machinesByCluster is the Machine informer's index of Machines by the
// Cluster their cluster.x-k8s.io/cluster-name label names
// ("namespace/cluster"). The Cluster controller reads it on the informer
// itself: a cache List, even through an index and without a deep copy,
// copies every Machine of the Cluster into the list, and a Cluster counts
// its Machines every machineCountDelay while they change, so a fleet's
// churn cost its Machine count times its length (4% of the operator's
// allocations at 2,000 Machines).
const machinesByCluster = "krtt:machinesByCluster"

func machineClusterKey(obj any) ([]string, error) {
	m, ok := obj.(*clusterv1.Machine)
	if !ok {
		return nil, nil
	}
	name, ok := m.Labels[clusterv1.ClusterNameLabel]
	if !ok {
		return nil, nil
	}
	return []string{m.Namespace + "/" + name}, nil
}

// IndexedMachines reads a Cluster's Machines from ix, which holds
// machinesByCluster: the cached objects themselves, no copy.
func IndexedMachines(ix toolscache.Indexer) MachinesOfCluster {
	return func(_ context.Context, key client.ObjectKey) ([]*clusterv1.Machine, error) {
		objs, err := ix.ByIndex(machinesByCluster, key.Namespace+"/"+key.Name)
		if err != nil {
			return nil, err
		}
		out := make([]*clusterv1.Machine, 0, len(objs))
		for _, o := range objs {
			if m, ok := o.(*clusterv1.Machine); ok {
				out = append(out, m)
			}
		}
		return out, nil
	}
}

// listMachines lists a Cluster's Machines by their label.
func listMachines(c client.Client) MachinesOfCluster {
	return func(ctx context.Context, key client.ObjectKey) ([]*clusterv1.Machine, error) {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: key.Name}); err != nil {
			return nil, err
		}
		out := make([]*clusterv1.Machine, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	}
}

// Observe reads the Cluster, its connection and its Machines. A connection
// that could not even be looked up reads as Unreachable, with the error:
// nothing is known about the workload cluster then.
func (o *Observer) Observe(ctx context.Context, key client.ObjectKey) *Scope {
	s := &Scope{Connections: o.Connections, Client: o.Client, Secrets: cmp.Or[client.Reader](o.Secrets, o.Client), Key: key, Workload: remote.Connection{State: remote.SelfHosted}}
	c := &clusterv1.Cluster{}
	if err := o.Client.Get(ctx, key, c); err != nil {
		if !apierrors.IsNotFound(err) {
			s.Err = fmt.Errorf("get Cluster: %w", err)
		}
		return s
	}
	s.Found, s.Cluster = true, c
	conn, err := o.Connections.ClientFor(ctx, key)
	if err != nil {
		conn = remote.Connection{State: remote.Unreachable, Message: err.Error()}
		s.Err = err
	}
	s.Workload = conn
	if ref := c.Spec.ControlPlaneRef; ref != nil {
		o.readControlPlane(ctx, s, *ref)
	}
	if ref := c.Spec.InfrastructureRef; ref != nil {
		r := o.readReferenced(ctx, s, *ref, "infrastructure")
		s.Infrastructure, s.InfrastructureMissing, s.InfrastructureUnread, s.InfrastructureErr = r.obj, r.missing, r.unread, r.err
	}
	o.readSecrets(ctx, s)
	machines := o.Machines
	if machines == nil {
		machines = listMachines(o.Client)
	}
	var err2 error
	if s.Machines, err2 = machines(ctx, key); err2 != nil && s.Err == nil {
		s.Err = fmt.Errorf("list Machines: %w", err2)
	}
	mds := &clusterv1.MachineDeploymentList{}
	if err := o.Client.List(ctx, mds, client.InNamespace(key.Namespace)); err != nil {
		s.MachineDeploymentsErr = fmt.Errorf("list MachineDeployments: %w", err)
		if s.Err == nil {
			s.Err = s.MachineDeploymentsErr
		}
	}
	for i := range mds.Items {
		if mds.Items[i].Spec.ClusterName == key.Name {
			s.MachineDeployments = append(s.MachineDeployments, mds.Items[i])
		}
	}
	sets := &clusterv1.MachineSetList{}
	if err := o.Client.List(ctx, sets, client.InNamespace(key.Namespace)); err != nil {
		if s.Err == nil {
			s.Err = fmt.Errorf("list MachineSets: %w", err)
		}
	}
	for i := range sets.Items {
		ms := &sets.Items[i]
		if ms.Spec.ClusterName != key.Name {
			continue
		}
		if !c.DeletionTimestamp.IsZero() {
			s.MachineSets = append(s.MachineSets, *ms)
		}
		if ownedByCluster(ms, c) {
			s.StandaloneSets = append(s.StandaloneSets, *ms)
		}
	}
	return s
}

// Registry returns the Cluster registry.
var Registry = engine.LazyRegistry(RegistryName, register)

func register(reg *engine.Registry[*Scope]) {
	reg.Bool("clusterFound", func(s *Scope) bool { return s.Found })
	reg.Enum("workloadCluster", func(s *Scope) string {
		return string(s.Workload.State)
	})
	reg.Bool("connectionEstablishing", func(s *Scope) bool { return s.Workload.Establishing })
	reg.Bool("reconnected", reconnected)
	reg.Bool("hasFinalizer", func(s *Scope) bool {
		return s.Cluster != nil && controllerutil.ContainsFinalizer(s.Cluster, clusterv1.ClusterFinalizer)
	})
	reg.Bool("deleting", func(s *Scope) bool {
		return s.Cluster != nil && !s.Cluster.DeletionTimestamp.IsZero()
	})
	reg.Bool("paused", func(s *Scope) bool {
		p, _ := clusterPause(s)
		return p
	})
	reg.Enum("descendants", descendants)
	reg.Enum("controlPlane", controlPlane)
	reg.Bool("controlPlaneMissingTold", controlPlaneMissingTold)
	reg.Bool("controlPlaneWasInitialized", controlPlaneWasInitialized)
	registerInfrastructure(reg)
	registerKubeconfig(reg)
	reg.Action("DescribePause", "Say why the Cluster is paused, in Cluster API's words.", reconciler.DescribePause(clusterPause), engine.Pure())
	reg.Action("AddFinalizer", "Add the cluster.krtt.dev/cluster finalizer to the Cluster.", reconciler.AddFinalizer(clusterv1.ClusterFinalizer, clusterOf), engine.Pure())
	reg.Action("RemoveFinalizer", "Remove the cluster.krtt.dev/cluster finalizer so Kubernetes can delete the Cluster.", reconciler.RemoveFinalizer(clusterv1.ClusterFinalizer, clusterOf))
	reg.Action("DeleteWorkers", "Delete, in one pass, the Cluster's MachineDeployments, the MachineSets and worker Machines it owns that are not being deleted yet; wait until every one is gone.", deleteWorkers, engine.MayWait())
	reg.Action("DeleteControlPlaneMachines", "Delete the control-plane Machines the Cluster owns that are not being deleted; wait until every one is gone.", deleteControlPlaneMachines, engine.MayWait())
	reg.Action("RecordReconnection", "Record in status.workloadClusterReconnectTime when the workload cluster became usable again.", recordReconnection)
	reg.Action("DisconnectWorkloadCluster", "Close the Cluster's workload cluster connection, if one is open.", disconnect)
	reg.Action("DeleteControlPlane", "Delete the object spec.controlPlaneRef names unless it is being deleted; wait until it is gone (fail when it could not be read).", deleteControlPlane, engine.MayWait())
	reg.Action("DescribeControlPlane", "Say that the object spec.controlPlaneRef names does not exist, or was deleted after the control plane came up, in the words of ControlPlaneAvailable (no change).", describeControlPlane, engine.Pure())
	reg.Action("DescribeWorkloadCluster", "Say how the Node side is reached: which Secret and API server, since when, and the error; {lastProbeSuccess} reads \", probe last succeeded at <time>\", or nothing when no probe succeeded since the operator started (Cluster API's words).", describe, engine.Pure(), engine.Offers("lastProbeSuccess"))
	reg.Mirror("workers", "WorkersAvailable aggregates the Available condition of the Cluster's MachineDeployments: True (NoWorkers) with none, True (Available) when every one is, otherwise NotAvailable or AvailableUnknown naming those that are not.", mirrorWorkers)
	reg.Summary(AvailableCondition, "True (Available) when the Cluster is not being deleted and RemoteConnectionProbe, WorkersAvailable, (with their objects) InfrastructureReady and ControlPlaneAvailable and the conditions of spec.availabilityGates are fine (True, or False for a Negative gate); otherwise NotAvailable (AvailableUnknown when none is False) naming each that is not, a gate not reported yet as Unknown.", summarizeAvailable)
	reg.Mirror("controlPlaneInitialized", "ControlPlaneInitialized, as Cluster API's setControlPlaneInitializedCondition, stays True once True: with spec.controlPlaneRef, True (Initialized) once the object reports status.initialization.controlPlaneInitialized (a v1beta1 provider status.initialized), False (NotInitialized) before, Unknown (ObjectDoesNotExist, InternalError) when it does not exist or cannot be read; without one, True once a control-plane Machine has a Node, False (NotInitialized) before. status.initialization.controlPlaneInitialized turns true with it.", mirrorControlPlaneInitialized)
	reg.Mirror("controlPlaneAvailable", "ControlPlaneAvailable, with spec.controlPlaneRef, as Cluster API's setControlPlaneAvailableCondition: the control plane object's Available condition (an empty reason read as Available when True, NoReasonReported otherwise), else True (Available) once the control plane is initialized and False (NotAvailable, \"<Kind> status.initialization.controlPlaneInitialized is false\") before; False while the object does not exist: ObjectDoesNotExist (\"<Kind> does not exist\"), or ObjectDeleted once the control plane had come up (\"<Kind> has been deleted while the cluster still exists\", \"<Kind> has been deleted\" in the teardown); Unknown (InternalError) while it cannot be read. Absent without spec.controlPlaneRef.", mirrorControlPlaneAvailable)
	reg.Mirror("controlPlaneCounts", "status.controlPlane, as Cluster API's setControlPlaneReplicas: with spec.controlPlaneRef, the object's spec.replicas (desiredReplicas) and status replicas, readyReplicas, availableReplicas and upToDateReplicas, each unset when not reported; without one, the control-plane Machines counted by their Ready, Available and UpToDate conditions.", mirrorControlPlaneCounts)
	reg.Mirror("machineAggregates", "ControlPlaneMachinesReady, WorkerMachinesReady, ControlPlaneMachinesUpToDate and WorkerMachinesUpToDate aggregate the Ready and UpToDate conditions of the control-plane and worker Machines as Cluster API's: True (NoReplicas) with none; False (NotReady, NotUpToDate) when one is False, Unknown (ReadyUnknown, UpToDateUnknown) when one is Unknown or has not reported it, with a \"* Machine(s) <names>: <message>\" line per message; a Machine younger than 10s without UpToDate is left out of the UpToDate ones.", mirrorMachineAggregates)
	reg.Mirror("workerCounts", "status.workers, as Cluster API's setWorkersReplicas: desiredReplicas sums spec.replicas of the MachineDeployments and stand-alone MachineSets, plus one per stand-alone worker Machine; replicas, readyReplicas, availableReplicas and upToDateReplicas count the worker Machines of MachineSets and the stand-alone ones, by their Ready, Available and UpToDate conditions.", mirrorWorkerCounts)
	reg.Mirror("rolloutAggregates", "RollingOut, ScalingUp and ScalingDown, as Cluster API's setRollingOutCondition, setScalingUpCondition and setScalingDownCondition: True (RollingOut, ScalingUp, ScalingDown) when the control plane object (counted only if it reports the condition), a MachineDeployment or, for the scaling ones, a stand-alone MachineSet of the Cluster reports it True, with a \"* <Kind> <names>: <message>\" line per message; Unknown (...Unknown) when one reports it Unknown or not yet; False (NotRollingOut, NotScalingUp, NotScalingDown) otherwise, also with none; Unknown (InternalError) while the control plane object or the MachineDeployments cannot be read.", mirrorRolloutAggregates)
	reg.Mirror("remediating", "Remediating, as Cluster API's setRemediatingCondition: True (Remediating) while a Machine a health checker found unhealthy (HealthCheckSucceeded False) waits for its owner's remediation (OwnerRemediated False), a \"* Machine(s) <names>: <message>\" line per OwnerRemediated message; else False (NotRemediating), naming the unhealthy Machines (\"Machine m1 is not healthy (not to be remediated)\").", mirrorRemediating)
	reg.Mirror("machines", "status.machines counts the Cluster's Machines (total, Ready, being deleted); MachinesReady is True when every one is Ready; Deleting is False (NotDeleting) until the Cluster is deleted; Paused is False unless a row says otherwise.", mirrorMachines)
}

// reconnected: the connection says the workload cluster came back at a
// time the Cluster's status does not record yet.
func reconnected(s *Scope) bool {
	back := s.Workload.ReachableAgain
	if s.Cluster == nil || s.Workload.State != remote.Connected || back.IsZero() {
		return false
	}
	rec := s.Cluster.Status.WorkloadClusterReconnectTime
	return rec == nil || back.Truncate(time.Second).After(rec.Time)
}

// recordReconnection persists when the workload cluster came back, so the
// Machines' Node-side timeouts restart from it across operator restarts.
func recordReconnection(_ context.Context, s *Scope) engine.Outcome {
	back := metav1.NewTime(s.Workload.ReachableAgain.Truncate(time.Second))
	s.Cluster.Status.WorkloadClusterReconnectTime = &back
	return engine.OKf("%s; usable again since %s, so the Node-side timeouts of the Cluster's Machines count from then",
		s.Workload.Message, back.UTC().Format(time.RFC3339))
}

func disconnect(_ context.Context, s *Scope) engine.Outcome {
	s.Connections.Disconnect(s.Key)
	return engine.OKf("workload cluster connection of %s closed", s.Key)
}

func describe(_ context.Context, s *Scope) engine.Outcome {
	w := s.Workload
	msg := w.Message
	if w.State == remote.Unreachable && !w.Since.IsZero() {
		msg = fmt.Sprintf("unreachable since %s: %s", w.Since.UTC().Format(time.RFC3339), msg)
	}
	// The time is kept in memory: after a restart a cluster that was
	// reached before has none, so nothing claims it never was.
	last := ""
	if !w.LastProbeSuccess.IsZero() {
		last = ", probe last succeeded at " + w.LastProbeSuccess.UTC().Format(time.RFC3339)
	}
	return engine.OKf("%s", msg).With("lastProbeSuccess", last)
}

// workersAvailableReasons are setWorkersAvailableCondition's.
var workersAvailableReasons = reconciler.AggregateReasons{Fine: "Available", Issue: "NotAvailable", Unknown: "AvailableUnknown"}

// mirrorWorkers is Cluster API's setWorkersAvailableCondition over the
// MachineDeployments (krtt has no MachinePools): their Available conditions
// aggregated, MachineDeployments with the same message on one line.
func mirrorWorkers(s *Scope) {
	c := s.Cluster
	var cond metav1.Condition
	switch {
	case s.MachineDeploymentsErr != nil:
		cond = metav1.Condition{Type: WorkersAvailableCondition, Status: metav1.ConditionUnknown, Reason: "InternalError", Message: s.MachineDeploymentsErr.Error()}
	case len(s.MachineDeployments) == 0:
		cond = metav1.Condition{Type: WorkersAvailableCondition, Status: metav1.ConditionTrue, Reason: "NoWorkers"}
	default:
		items := make([]reconciler.AggregateItem, len(s.MachineDeployments))
		for i := range s.MachineDeployments {
			md := &s.MachineDeployments[i]
			items[i] = reconciler.AggregateItem{Kind: "MachineDeployment", Name: md.Name, Conditions: md.Status.Conditions}
		}
		cond = reconciler.Aggregate(items, clusterv1.AvailableCondition, WorkersAvailableCondition, workersAvailableReasons, false, c.Generation)
	}
	cond.ObservedGeneration = c.Generation
	meta.SetStatusCondition(&c.Status.Conditions, cond)
}

// summarizeAvailable is Cluster API's setAvailableCondition over the
// conditions krtt's Cluster has (it has no topology; InfrastructureReady is
// there only with an infrastructure object, ControlPlaneAvailable only with a
// control plane object) and the Cluster's spec.availabilityGates.
func summarizeAvailable(s *Scope) {
	c := s.Cluster
	// While the Cluster is deleted, its infrastructure and control plane
	// objects going is what it waits for, not an issue (Cluster API's
	// clusterConditionCustomMergeStrategy).
	var gone []string
	if !c.DeletionTimestamp.IsZero() {
		gone = []string{clusterv1.ObjectDeletedReason, clusterv1.ObjectDoesNotExistReason}
	}
	gates := []reconciler.Gate{
		{Type: clusterv1.DeletingCondition, Negative: true},
		{Type: RemoteConnectionProbeCondition},
		{Type: InfrastructureReadyCondition, Optional: true, Fine: gone},
		{Type: ControlPlaneAvailableCondition, Optional: true, Fine: gone},
		{Type: WorkersAvailableCondition},
	}
	for _, g := range c.Spec.AvailabilityGates {
		gates = reconciler.AddGate(gates, reconciler.Gate{Type: g.ConditionType, Negative: g.Polarity == clusterv1.NegativePolarity})
	}
	status, msg := reconciler.Summarize(c.Status.Conditions, gates...)
	reason := map[metav1.ConditionStatus]string{metav1.ConditionTrue: "Available", metav1.ConditionFalse: "NotAvailable", metav1.ConditionUnknown: "AvailableUnknown"}[status]
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: AvailableCondition, Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation})
}

// shownNotReady is how many not-Ready Machines MachinesReady names.
const shownNotReady = 3

// firstNames keeps in names, sorted, the n smallest names seen.
func firstNames(names []string, name string, n int) []string {
	i, _ := slices.BinarySearch(names, name)
	if i >= n {
		return names
	}
	names = slices.Insert(names, i, name)
	if len(names) > n {
		names = names[:n]
	}
	return names
}

// mirrorWorkerCounts is Cluster API's setWorkersReplicas, which sums the
// counters of the MachineDeployments and stand-alone MachineSets: those
// count their Machines by the same conditions, so counting the Machines
// themselves gives the same figures without waiting for the sets' status.
func mirrorWorkerCounts(s *Scope) {
	var desired, replicas, ready, available, upToDate int32
	var workers []*clusterv1.Machine
	counted := len(s.MachineDeployments) > 0 || len(s.StandaloneSets) > 0
	for _, md := range s.MachineDeployments {
		desired += ptr.Deref(md.Spec.Replicas, 1)
	}
	for _, ms := range s.StandaloneSets {
		desired += ptr.Deref(ms.Spec.Replicas, 1)
	}
	for _, m := range s.Machines {
		if isControlPlane(m) {
			continue
		}
		if ref := metav1.GetControllerOf(m); ref == nil || ref.Kind != "MachineSet" {
			if !ownedByCluster(m, s.Cluster) {
				continue
			}
			// A stand-alone Machine stands for a wish of one replica.
			desired++
		}
		counted = true
		replicas++
		workers = append(workers, m)
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.ReadyCondition) {
			ready++
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.AvailableCondition) {
			available++
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.UpToDateCondition) {
			upToDate++
		}
	}
	if !counted {
		s.Cluster.Status.Workers = clusterv1.ClusterReplicas{}
		return
	}
	s.Cluster.Status.Workers = clusterv1.ClusterReplicas{DesiredReplicas: &desired, Replicas: &replicas,
		ReadyReplicas: &ready, AvailableReplicas: &available, UpToDateReplicas: &upToDate, Versions: reconciler.MachineVersions(workers)}
}

// mirrorMachines counts the Machines and summarises their Ready condition,
// naming the first shownNotReady (by name) that are not Ready.
func mirrorMachines(s *Scope) {
	c := s.Cluster
	var counts clusterv1.ClusterMachines
	// The message names the first shownNotReady of them by name: a fleet
	// does not collect and sort every name on each count.
	var notReady []string
	for _, m := range s.Machines {
		counts.Total++
		if !m.DeletionTimestamp.IsZero() {
			counts.Deleting++
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.ReadyCondition) {
			counts.Ready++
		} else {
			notReady = firstNames(notReady, m.Name, shownNotReady)
		}
	}
	notReadyCount := int(counts.Total - counts.Ready)
	c.Status.Machines = counts
	cond := metav1.Condition{Type: MachinesReadyCondition, Status: metav1.ConditionTrue, Reason: "MachinesReady", ObservedGeneration: c.Generation}
	switch {
	case counts.Total == 0:
		cond.Reason, cond.Message = "NoMachines", "The Cluster has no Machines"
	case notReadyCount > 0:
		shown := notReady
		if notReadyCount > len(shown) {
			shown = append(shown, fmt.Sprintf("and %d more", notReadyCount-len(shown)))
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, "MachinesNotReady"
		cond.Message = fmt.Sprintf("%d of %d Machines are not Ready: %s", notReadyCount, counts.Total, strings.Join(shown, ", "))
	default:
		cond.Message = fmt.Sprintf("All %d Machines are Ready", counts.Total)
	}
	meta.SetStatusCondition(&c.Status.Conditions, cond)
	if c.DeletionTimestamp.IsZero() {
		// While it is being deleted, the teardown rows say what it waits on.
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: clusterv1.DeletingCondition, Status: metav1.ConditionFalse,
			Reason: clusterv1.NotDeletingReason, ObservedGeneration: c.Generation})
	}
	// A row that pauses the Cluster writes Paused=True and skips the
	// mirrors, so reaching here means it is not paused.
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse,
		Reason: "NotPaused", ObservedGeneration: c.Generation})
}

// clusterPause: the Cluster's spec.paused or its paused annotation, and
// why (reconciler.Paused).
func clusterPause(s *Scope) (bool, string) {
	if s.Cluster == nil {
		return false, ""
	}
	return reconciler.Paused("Cluster", s.Cluster, s.Cluster)
}
