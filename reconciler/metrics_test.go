package reconciler

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/krtt-dev/krtt/engine"
)

// A row that ran two actions counts each in its own series, with its own
// duration, never the comma-joined list.
func TestActionDurationHasOneSeriesPerAction(t *testing.T) {
	countTrace("metrics-test", engine.Trace{Table: "t", Row: "R1", Outcome: engine.Done, Action: "Cordon,Drain", Duration: 2 * time.Second,
		Actions: []engine.ActionRun{{Name: "Cordon", Duration: time.Millisecond}, {Name: "Drain", Duration: time.Second}}})
	ch := make(chan prometheus.Metric, 1000)
	actionDuration.Collect(ch)
	close(ch)
	got := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["controller"] == "metrics-test" {
			got[labels["action"]] = d.GetHistogram().GetSampleSum()
		}
	}
	want := map[string]float64{"Cordon": 0.001, "Drain": 1}
	if len(got) != len(want) || got["Cordon"] != want["Cordon"] || got["Drain"] != want["Drain"] {
		t.Errorf("series (action → seconds) %v, want %v", got, want)
	}
}
