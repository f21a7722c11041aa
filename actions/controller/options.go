// Package controller is what every krtt controller's Setup takes, so the
// operator sets them all up the same way (actions.Controllers).
package controller

import (
	"context"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
)

// Setup adds a controller to a manager.
type Setup func(ctx context.Context, mgr ctrl.Manager, opts Options) error

// Options are the same for every controller but for Set: the operator gives
// each its own table set.
type Options struct {
	// Set is the controller's table set.
	Set *engine.TableSet
	// Concurrency is how many objects a controller reconciles at once. The
	// Cluster controller keeps two whatever it says: it only sets
	// conditions and counts, which does not grow with a fleet's churn.
	Concurrency int
	// Now is the controllers' clock; time.Now when nil (tests inject one).
	Now func() time.Time
	// Traces, when set, receives every row a controller fires.
	Traces func(engine.Trace)
	// ClockJumps is reconciler.Options.ClockJumps for every controller:
	// set with a test clock that scenarios advance.
	ClockJumps func(jumped func())
	// Workload configures the workload cluster connections (health probe
	// interval, timeout, failure threshold); zero values are the defaults.
	Workload remote.Options
	// Clusters are the workload cluster connections the controllers
	// share, opened from Workload by the operator; nil serves every
	// Cluster's Node side from the management cluster.
	Clusters *remote.Cache
	// SelfHostedClusters serves Clusters without a kubeconfig Secret from
	// the management cluster, watching its Nodes, Pods and
	// PodDisruptionBudgets (the RBAC of config/rbac-self-hosted). Off, the
	// operator reads nothing of the Node side in the management cluster and
	// such a Cluster is NoAccess (remote.Options.SelfHosted).
	SelfHostedClusters bool
	// NodeSync: the Machine labels and annotations, beyond the domains
	// always copied, that the Machine controller copies onto Nodes.
	NodeSync NodeSync
	// Events writes the controllers' Events, one sink per manager (set by
	// the operator's Setup); nil uses the manager's recorder.
	Events *reconciler.EventSink
}

// LocalNodeSide: the management cluster is the Node side of some Clusters
// (self-hosted ones are served, or there are no connections at all), so
// its Nodes, Pods and PodDisruptionBudgets are watched.
func (o Options) LocalNodeSide() bool { return o.SelfHostedClusters || o.Clusters == nil }

// Kit is the kit's options for the controller name in mgr: the manager's
// clients, an Event recorder named after the controller, and the clock and
// traces every controller shares.
func (o Options) Kit(mgr ctrl.Manager, name string) reconciler.Options {
	var rec events.EventRecorder
	if o.Events != nil {
		rec = o.Events.Recorder("krtt-" + name + "-controller")
	} else {
		rec = mgr.GetEventRecorder("krtt-" + name + "-controller")
	}
	return reconciler.Options{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec,
		Now: o.Now, Traces: o.Traces, ClockJumps: o.ClockJumps,
	}
}
