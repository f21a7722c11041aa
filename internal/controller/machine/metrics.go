package machine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"

	"github.com/krtt-dev/krtt/engine"
)

// Metrics are registered once with controller-runtime's registry, which the
// manager serves on its metrics endpoint.
var (
	transitionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "krtt_transitions_total",
		Help: "Rows fired, by table, row and action outcome.",
	}, []string{"table", "row", "outcome"})
	actionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "krtt_action_duration_seconds",
		Help:    "Time spent running a row's actions, by actions.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9),
	}, []string{"action"})
	reconcileErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "krtt_reconcile_errors_total",
		Help: "Reconciles that returned an error (back-off), by table and row.",
	}, []string{"table", "row"})
	registerOnce sync.Once
)

// registerMetrics registers the metrics once per process and points the
// collector at the newest manager's cache (tests restart the operator).
func registerMetrics(r client.Reader) {
	collector.reader.Store(&r)
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(transitionsTotal, actionDuration, reconcileErrorsTotal, collector)
	})
}

// observeTrace counts one firing.
func observeTrace(tr engine.Trace) {
	transitionsTotal.WithLabelValues(tr.Table, tr.Row, string(tr.Outcome)).Inc()
	if tr.Action != "" {
		actionDuration.WithLabelValues(tr.Action).Observe(tr.Duration.Seconds())
	}
}

// machineCollector reports, at scrape time, Machines by phase and how long
// each Machine being deleted has been in its current deletion step. It
// reads the manager's cache, so a scrape costs no API request.
type machineCollector struct {
	reader atomic.Pointer[client.Reader]
	now    func() time.Time
}

var (
	machinesDesc = prometheus.NewDesc("krtt_machines",
		"Machines by phase.", []string{"phase"}, nil)
	deletionStepDesc = prometheus.NewDesc("krtt_machine_deletion_step_seconds",
		"Seconds a Machine being deleted has spent in its current deletion step.", []string{"namespace", "name", "state"}, nil)
	collector = &machineCollector{now: time.Now}
)

func (c *machineCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- machinesDesc
	ch <- deletionStepDesc
}

func (c *machineCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.reader.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := &clusterv1.MachineList{}
	if err := (*r).List(ctx, list); err != nil {
		return
	}
	byPhase := map[string]float64{}
	for _, p := range []clusterv1.MachinePhase{clusterv1.MachinePhasePending, clusterv1.MachinePhaseProvisioning,
		clusterv1.MachinePhaseProvisioned, clusterv1.MachinePhaseRunning, clusterv1.MachinePhaseDeleting, clusterv1.MachinePhaseFailed} {
		byPhase[string(p)] = 0
	}
	now := c.now()
	for i := range list.Items {
		m := &list.Items[i]
		byPhase[string(m.Status.Phase)]++
		if m.Status.Phase == clusterv1.MachinePhaseDeleting && m.Status.StateSince != nil {
			ch <- prometheus.MustNewConstMetric(deletionStepDesc, prometheus.GaugeValue,
				now.Sub(m.Status.StateSince.Time).Seconds(), m.Namespace, m.Name, m.Status.State)
		}
	}
	for phase, n := range byPhase {
		if phase == "" {
			phase = "Unknown"
		}
		ch <- prometheus.MustNewConstMetric(machinesDesc, prometheus.GaugeValue, n, phase)
	}
}
