package reconciler

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
)

// The kit's metrics are shared by every controller and carry a controller
// label; they are registered once per process with controller-runtime's
// registry, which the manager serves.
var (
	transitionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "krtt_transitions_total",
		Help: "Rows fired, by controller, table, row and action outcome; outcome Unwritten counts a row whose actions ran but whose result did not reach the object.",
	}, []string{"controller", "table", "row", "outcome"})
	actionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "krtt_action_duration_seconds",
		Help:    "Time spent running one action of a row, by controller and action.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9),
	}, []string{"controller", "action"})
	reconcileErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "krtt_reconcile_errors_total",
		Help: "Reconciles that returned an error (back-off), by controller, table and row.",
	}, []string{"controller", "table", "row"})
	impossibleFactsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "krtt_impossible_facts_total",
		Help: "Observations that fell into a combination the tables declare impossible, by controller and combination.",
	}, []string{"controller", "impossible"})
	registerShared sync.Once

	collectorsMu sync.Mutex
	collectors   = map[string]*objectCollector{}
)

// unwrittenOutcome is the outcome label of a row whose result was not
// written.
const unwrittenOutcome = "Unwritten"

// countTrace counts one firing. A row whose result did not reach the object
// (its patch met a newer version, or failed) is counted apart, as outcome
// Unwritten: its actions ran, but the transition did not happen, and the
// row will be decided again.
func countTrace(controller string, tr engine.Trace) {
	outcome := string(tr.Outcome)
	if tr.Unwritten != "" {
		outcome = unwrittenOutcome
	}
	transitionsTotal.WithLabelValues(controller, tr.Table, tr.Row, outcome).Inc()
	// One series per action: a row's list of actions would make a series
	// of every combination, and hide which action took the time.
	for _, a := range tr.Actions {
		actionDuration.WithLabelValues(controller, a.Name).Observe(a.Duration.Seconds())
	}
}

// registerMetrics registers the shared metrics once, and one collector per
// controller name, pointed at the newest reader (tests restart managers in
// one process).
func registerMetrics(name string, set *engine.TableSet, newList func() client.ObjectList, status func(client.Object) kit.Record, r client.Reader) {
	registerShared.Do(func() {
		metrics.Registry.MustRegister(transitionsTotal, actionDuration, reconcileErrorsTotal, impossibleFactsTotal)
	})
	if newList == nil {
		return
	}
	collectorsMu.Lock()
	defer collectorsMu.Unlock()
	c, ok := collectors[name]
	if !ok {
		c = newObjectCollector(name, set, newList, status)
		collectors[name] = c
		metrics.Registry.MustRegister(c)
	}
	c.reader.Store(&r)
}

// objectCollector reports at scrape time, from the manager's cache (a scrape
// costs no API request), the controller's objects by phase
// (krtt_<name>s{phase}) and how long each object in a deletion step has been
// there (krtt_<name>_deletion_step_seconds). Phases and deletion steps come
// from the tables' state metadata.
type objectCollector struct {
	reader  atomic.Pointer[client.Reader]
	newList func() client.ObjectList
	status  func(client.Object) kit.Record
	phases  []string
	steps   map[string]bool
	now     func() time.Time

	byPhase      *prometheus.Desc
	deletionStep *prometheus.Desc
}

func newObjectCollector(name string, set *engine.TableSet, newList func() client.ObjectList, status func(client.Object) kit.Record) *objectCollector {
	c := &objectCollector{newList: newList, status: status, steps: map[string]bool{}, now: time.Now,
		byPhase: prometheus.NewDesc("krtt_"+name+"s", "Objects of the "+name+" controller by phase.", []string{"phase"}, nil),
		deletionStep: prometheus.NewDesc("krtt_"+name+"_deletion_step_seconds",
			"Seconds an object being deleted has spent in its current deletion step.", []string{"namespace", "name", "state"}, nil),
	}
	seen := map[string]bool{}
	for _, st := range set.States {
		if st.Phase != "" && !seen[st.Phase] {
			seen[st.Phase] = true
			c.phases = append(c.phases, st.Phase)
		}
		if st.DeletionStep {
			c.steps[st.Name] = true
		}
	}
	return c
}

func (c *objectCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.byPhase
	ch <- c.deletionStep
}

func (c *objectCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.reader.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := c.newList()
	// Read only, on every scrape: no deep copy of every object.
	if err := (*r).List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return
	}
	count := map[string]float64{}
	for _, p := range c.phases {
		count[p] = 0
	}
	now := c.now()
	for _, it := range items {
		o, ok := it.(client.Object)
		if !ok {
			continue
		}
		rec := c.status(o)
		phase := rec.Phase
		if phase == "" {
			phase = "Unknown"
		}
		count[phase]++
		if c.steps[rec.State] && rec.StateSince != nil {
			ch <- prometheus.MustNewConstMetric(c.deletionStep, prometheus.GaugeValue,
				now.Sub(rec.StateSince.Time).Seconds(), o.GetNamespace(), o.GetName(), rec.State)
		}
	}
	for phase, n := range count {
		ch <- prometheus.MustNewConstMetric(c.byPhase, prometheus.GaugeValue, n, phase)
	}
}
