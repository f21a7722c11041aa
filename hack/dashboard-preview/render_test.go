package main

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

func TestPanelRect(t *testing.T) {
	const width = 1600
	left := PanelRect(GridPos{X: 0, Y: 0, W: 12, H: 8}, width)
	right := PanelRect(GridPos{X: 12, Y: 0, W: 12, H: 8}, width)
	below := PanelRect(GridPos{X: 0, Y: 8, W: 24, H: 4}, width)
	if left.X != pagePad || left.Y != headerH {
		t.Errorf("left at %d,%d", left.X, left.Y)
	}
	if left.X+left.W+gridGap != right.X {
		t.Errorf("left ends at %d, right starts at %d: want a %dpx gap", left.X+left.W, right.X, gridGap)
	}
	if right.X+right.W != width-pagePad || below.X+below.W != width-pagePad {
		t.Errorf("right edge %d, full width edge %d, want %d", right.X+right.W, below.X+below.W, width-pagePad)
	}
	if left.W != right.W {
		t.Errorf("halves %d and %d wide", left.W, right.W)
	}
	if left.H != 8*cellHeight+7*gridGap {
		t.Errorf("h 8 is %dpx", left.H)
	}
	if below.Y != left.Y+left.H+gridGap {
		t.Errorf("the panel below starts at %d, want %d", below.Y, left.Y+left.H+gridGap)
	}
}

func TestRenderHTML(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	w := Window{Start: start, End: start.Add(time.Minute), Step: 10 * time.Second, ScrapeInterval: 10 * time.Second}
	var pts []Point
	for i := range 7 {
		pts = append(pts, Point{start.UnixMilli() + int64(i)*10000, float64(i)})
	}
	ts := Panel{Type: "timeseries", Title: "Machines <by> phase", GridPos: GridPos{X: 0, Y: 0, W: 12, H: 8}, Targets: []Target{{Expr: "x"}}}
	ts.Options.Legend.Placement = "right"
	stat := Panel{Type: "stat", Title: "Machines", GridPos: GridPos{X: 12, Y: 0, W: 6, H: 4}, Targets: []Target{{Expr: "y"}}}
	stat.FieldConfig.Defaults.Unit = "s"
	table := Panel{Type: "table", Title: "Table", GridPos: GridPos{X: 18, Y: 0, W: 6, H: 4}, Targets: []Target{{Expr: "z"}}}
	empty := Panel{Type: "timeseries", Title: "Errors", GridPos: GridPos{X: 0, Y: 8, W: 12, H: 8}, Targets: []Target{{Expr: "e"}}}
	broken := Panel{Type: "timeseries", Title: "Broken", GridPos: GridPos{X: 12, Y: 8, W: 12, H: 8}, Targets: []Target{{RefID: "A", Expr: "("}}}
	pg := Page{Title: "krtt operator", Notes: []string{"not Grafana"}, Width: 1600, Window: w, Panels: []PanelView{
		{Panel: ts, Results: []TargetResult{{Series: []Series{{Name: "Running", Points: pts}, {Name: "Deleting <x>", Points: pts[:2]}}}}},
		{Panel: stat, Results: []TargetResult{{Series: []Series{{Name: "p95", Points: []Point{{0, 0.25}, {1, math.NaN()}}}}}}},
		{Panel: table, Results: []TargetResult{{Series: []Series{{Name: "a", Labels: labels.FromStrings("phase", "Running"), Points: []Point{{0, 7}}}}}}},
		{Panel: empty, Results: []TargetResult{{}}, NoData: "No krtt_reconcile_errors_total series in any of the 3 scrapes."},
		{Panel: broken, Results: []TargetResult{{Target: broken.Targets[0], Err: fmt.Errorf("parse error")}}},
	}}
	out := RenderHTML(pg)

	// Each panel at its grid position, with its title escaped.
	for _, pv := range pg.Panels {
		r := PanelRect(pv.Panel.GridPos, 1600)
		pos := fmt.Sprintf(`left:%dpx;top:%dpx;width:%dpx;height:%dpx`, r.X, r.Y, r.W, r.H)
		if !strings.Contains(out, pos) {
			t.Errorf("panel %q not at %s", pv.Panel.Title, pos)
		}
	}
	if pg.Height() != headerH+16*(cellHeight+gridGap)-gridGap+pagePad {
		t.Errorf("page height %d", pg.Height())
	}
	for _, want := range []string{
		"Machines &lt;by&gt; phase", "<p>not Grafana</p>",
		// Legend of the time series, in series colours.
		`<i style="background:` + SeriesColor(0) + `"></i>Running</div>`,
		`<i style="background:` + SeriesColor(1) + `"></i>Deleting &lt;x&gt;</div>`,
		// The stat is the last number in the panel's unit.
		`250 ms<small>p95</small>`,
		// The table has a column per label and the value.
		"<th>phase</th><th>Value</th>", "<td>Running</td><td>7</td>",
		"<b>No data in this run</b><span>No krtt_reconcile_errors_total series in any of the 3 scrapes.</span>",
		"Query error<br>A: parse error",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(out, "Machines <by>") || strings.Contains(out, "Deleting <x>") {
		t.Error("unescaped text in the page")
	}
	if n := strings.Count(out, "<svg"); n != 1 {
		t.Errorf("%d charts, want 1", n)
	}
}

func TestLegendOverflow(t *testing.T) {
	var series []Series
	for i := range 10 {
		series = append(series, Series{Name: fmt.Sprintf("m%d", i)})
	}
	out := legendHTML(series, 4)
	if strings.Count(out, "<i ") != 3 || !strings.Contains(out, "+ 7 more series") {
		t.Errorf("legend of 10 in 4 rows: %s", out)
	}
	if out := legendHTML(series[:3], 4); strings.Contains(out, "more") || strings.Count(out, "<i ") != 3 {
		t.Errorf("legend of 3 in 4 rows: %s", out)
	}
}

var pathRE = regexp.MustCompile(`<path d="([^"]*)" fill="none" stroke="([^"]*)"`)

func TestSVGChart(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	w := Window{Start: start, End: start.Add(60 * time.Second), Step: 10 * time.Second}
	ms := func(s int) int64 { return start.UnixMilli() + int64(s)*1000 }
	series := []Series{
		// Present, then gone for 20s (no points), then back: two runs.
		{Name: "a", Points: []Point{{ms(0), 0}, {ms(10), 10}, {ms(20), 20}, {ms(50), 20}, {ms(60), 10}}},
		// A NaN breaks the line; the lone value after it is a dot.
		{Name: "b", Points: []Point{{ms(0), 5}, {ms(10), 5}, {ms(20), math.NaN()}, {ms(30), 5}}},
	}
	const width, height = 600, 200
	out := SVGChart(series, width, height, w, "s")
	if !strings.HasPrefix(out, `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="200"`) || !strings.HasSuffix(out, "</svg>") {
		t.Fatalf("not an SVG element: %.80s", out)
	}
	paths := pathRE.FindAllStringSubmatch(out, -1)
	if len(paths) != 2 {
		t.Fatalf("%d paths, want 2: %s", len(paths), out)
	}
	if paths[0][2] != SeriesColor(0) || paths[1][2] != SeriesColor(1) {
		t.Errorf("colours %s, %s", paths[0][2], paths[1][2])
	}
	if got := strings.Count(paths[0][1], "M"); got != 2 {
		t.Errorf("series a has %d runs, want 2: %s", got, paths[0][1])
	}
	if got := strings.Count(paths[1][1], "M"); got != 1 {
		t.Errorf("series b has %d runs, want 1: %s", got, paths[1][1])
	}
	if strings.Count(out, "<circle") != 1 {
		t.Errorf("want one dot for b's lone value")
	}
	// The axis runs from 0 to 20 s: a starts at the bottom left of the
	// plot and reaches the top.
	var x0, y0 float64
	if _, err := fmt.Sscanf(paths[0][1], "M%f %f", &x0, &y0); err != nil {
		t.Fatal(err)
	}
	if x0 != 58 || y0 != height-18 {
		t.Errorf("a starts at %v,%v, want the plot's bottom left 58,%d", x0, y0, height-18)
	}
	if !strings.Contains(paths[0][1], "L236.0 6.0") {
		t.Errorf("a's value 20 at +20s is not at the top of the plot: %s", paths[0][1])
	}
	for _, label := range []string{">0 s<", ">20 s<", ">22:13:30<", ">22:14:15<"} {
		if !strings.Contains(out, label) {
			t.Errorf("chart lacks axis label %s", label)
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v    float64
		unit string
		want string
	}{
		{0, "short", "0"}, {7, "short", "7"}, {0.5, "short", "0.5"}, {0.01234, "short", "0.0123"},
		{1500, "short", "1.5k"}, {2_500_000, "", "2.5M"}, {12.345, "short", "12.3"},
		{0.25, "s", "250 ms"}, {0.0000042, "s", "4.2 µs"}, {5, "s", "5 s"}, {90, "s", "1.5 min"}, {7200, "s", "2 h"},
		{2048, "bytes", "2 KiB"}, {0.5, "percentunit", "50%"}, {math.NaN(), "s", "NaN"},
	}
	for _, c := range cases {
		if got := FormatValue(c.v, c.unit); got != c.want {
			t.Errorf("FormatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		n      int
		want   string
	}{
		{0, 60, 5, "[0 20 40 60]"},
		{0, 57, 5, "[0 20 40 60]"},
		{0, 0.3, 4, "[0 0.1 0.2 0.3]"},
		{0, 0, 4, "[0 0.5 1]"},
		{-3, 7, 3, "[-5 0 5 10]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(NiceTicks(c.lo, c.hi, c.n)); got != c.want {
			t.Errorf("NiceTicks(%v, %v, %d) = %s, want %s", c.lo, c.hi, c.n, got, c.want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 7, 0, time.UTC)
	got := TimeTicks(start, start.Add(3*time.Minute), 6)
	var s []string
	for _, x := range got {
		s = append(s, x.Format("15:04:05"))
	}
	if strings.Join(s, " ") != "10:00:30 10:01:00 10:01:30 10:02:00 10:02:30 10:03:00" {
		t.Errorf("ticks %v", s)
	}
}
