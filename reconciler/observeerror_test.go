package reconciler

import (
	"context"
	"errors"
	"testing"
)

func TestObserveErrorKeepsTheFirst(t *testing.T) {
	var o ObserveError
	first, second := errors.New("list Machines: timeout"), errors.New("get Cluster: timeout")
	o.Keep(first)
	o.Keep(second)
	o.Keep(nil)
	if o.Err != first {
		t.Fatalf("kept %v, want the first error %v", o.Err, first)
	}
}

func TestReportObserveError(t *testing.T) {
	o := &ObserveError{}
	if out := ReportObserveError(context.Background(), o); out.Err == nil || out.Err.Error() != "an API error was observed but not kept" {
		t.Fatalf("without a kept error: %+v, want a failure naming the wiring mistake", out)
	}
	o.Keep(errors.New("list MachineSets: forbidden"))
	if out := ReportObserveError(context.Background(), o); out.Err == nil || out.Err.Error() != "list MachineSets: forbidden" {
		t.Fatalf("with a kept error: %+v, want a failure with it", out)
	}
}
