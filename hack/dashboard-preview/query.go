package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// Point is one value of a series at a time (Unix milliseconds).
type Point struct {
	T int64
	V float64
}

// Series is one line of a panel.
type Series struct {
	Name   string
	Labels labels.Labels
	Points []Point
}

// Last returns the series' last value that is a number.
func (s Series) Last() (float64, bool) {
	for i := len(s.Points) - 1; i >= 0; i-- {
		if !math.IsNaN(s.Points[i].V) {
			return s.Points[i].V, true
		}
	}
	return 0, false
}

// TargetResult is what one target of a panel returned.
type TargetResult struct {
	Target Target
	// Expr is the expression as evaluated (variables substituted).
	Expr   string
	Series []Series
	Err    error
	// Metrics are the metric names the expression selects.
	Metrics []string
}

// NewEngine returns a PromQL engine as Prometheus configures its own (a
// five-minute lookback, the @ modifier and negative offsets allowed).
func NewEngine() *promql.Engine {
	return promql.NewEngine(promql.EngineOpts{
		MaxSamples:           50_000_000,
		Timeout:              2 * time.Minute,
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
	})
}

// Evaluate runs each visible target of p over w: a range query at w.Step
// from w.Start to w.End, or an instant query at w.End for an instant or
// table target.
func Evaluate(ctx context.Context, eng *promql.Engine, q storage.Queryable, p Panel, w Window, vars map[string]string) []TargetResult {
	all := map[string]string{}
	for k, v := range vars {
		all[k] = v
	}
	for k, v := range w.Builtins() {
		all[k] = v
	}
	var out []TargetResult
	for _, t := range p.Targets {
		if t.Hide || t.Expr == "" {
			continue
		}
		r := TargetResult{Target: t}
		r.Expr, r.Err = Substitute(t.Expr, all)
		if r.Err == nil {
			r.Metrics = metricNames(r.Expr)
			r.Series, r.Err = query(ctx, eng, q, r.Expr, t, w)
		}
		out = append(out, r)
	}
	return out
}

func query(ctx context.Context, eng *promql.Engine, q storage.Queryable, expr string, t Target, w Window) ([]Series, error) {
	var (
		qry promql.Query
		err error
	)
	if t.Instant || t.Format == "table" {
		qry, err = eng.NewInstantQuery(ctx, q, nil, expr, w.End)
	} else {
		qry, err = eng.NewRangeQuery(ctx, q, nil, expr, w.Start, w.End, w.Step)
	}
	if err != nil {
		return nil, err
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return nil, res.Err
	}
	var out []Series
	add := func(ls labels.Labels, pts []Point) {
		out = append(out, Series{Name: LegendName(t.LegendFormat, ls), Labels: ls, Points: pts})
	}
	switch v := res.Value.(type) {
	case promql.Matrix:
		for _, s := range v {
			pts := make([]Point, 0, len(s.Floats))
			for _, f := range s.Floats {
				pts = append(pts, Point{f.T, f.F})
			}
			if len(s.Histograms) > 0 {
				return nil, fmt.Errorf("native histograms are not drawn by the preview")
			}
			add(s.Metric, pts)
		}
	case promql.Vector:
		for _, s := range v {
			add(s.Metric, []Point{{s.T, s.F}})
		}
	case promql.Scalar:
		add(labels.EmptyLabels(), []Point{{v.T, v.V}})
	default:
		return nil, fmt.Errorf("result of type %s is not drawn by the preview", res.Value.Type())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// metricNames returns the metric names expr selects, sorted.
func metricNames(expr string) []string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	for _, sel := range parser.ExtractSelectors(e) {
		for _, m := range sel {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				set[m.Value] = true
			}
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
