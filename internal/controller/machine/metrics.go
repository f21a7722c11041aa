package machine

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

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

func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(transitionsTotal, actionDuration, reconcileErrorsTotal)
	})
}

// observeTrace counts one firing.
func observeTrace(tr engine.Trace) {
	transitionsTotal.WithLabelValues(tr.Table, tr.Row, string(tr.Outcome)).Inc()
	if tr.Action != "" {
		actionDuration.WithLabelValues(tr.Action).Observe(tr.Duration.Seconds())
	}
}
