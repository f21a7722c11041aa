package main

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// Grid geometry: Grafana's grid is 24 columns wide and its rows are 30px
// high with 8px between panels; the preview keeps those proportions.
const (
	gridColumns = 24
	cellHeight  = 30
	gridGap     = 8
	pagePad     = 8
	headerH     = 64
	titleH      = 26
	legendRowH  = 16
)

// Rect is a box on the page, in CSS pixels.
type Rect struct{ X, Y, W, H int }

// PanelRect places a panel's grid position on a page width pixels wide.
func PanelRect(gp GridPos, width int) Rect {
	col := float64(width-2*pagePad+gridGap) / gridColumns
	x := pagePad + int(math.Round(float64(gp.X)*col))
	right := pagePad + int(math.Round(float64(gp.X+gp.W)*col)) - gridGap
	return Rect{
		X: x,
		Y: headerH + gp.Y*(cellHeight+gridGap),
		W: right - x,
		H: gp.H*(cellHeight+gridGap) - gridGap,
	}
}

// PanelView is a panel with what its targets returned.
type PanelView struct {
	Panel   Panel
	Results []TargetResult
	// NoData says why the panel is empty, when it is.
	NoData string
}

// Page is the whole preview.
type Page struct {
	Title  string
	Notes  []string
	Width  int
	Window Window
	Panels []PanelView
}

// Height is the page's height: below its lowest panel.
func (pg Page) Height() int {
	h := headerH
	for _, pv := range pg.Panels {
		r := PanelRect(pv.Panel.GridPos, pg.Width)
		h = max(h, r.Y+r.H)
	}
	return h + pagePad
}

// RenderHTML writes the page as one self-contained HTML document.
func RenderHTML(pg Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>
body{margin:0;background:#111217;color:#ccccdc;font-family:"DejaVu Sans","Liberation Sans",sans-serif;font-size:12px;width:%dpx;height:%dpx;position:relative;overflow:hidden}
.header{position:absolute;left:%dpx;top:6px;right:%dpx}
.header h1{font-size:18px;font-weight:500;margin:0 0 4px 0;color:#d8d9e6}
.header p{margin:0;color:#9fa1b1;font-size:11.5px;line-height:15px}
.panel{position:absolute;background:#181b1f;border:1px solid #2b2e35;border-radius:3px;box-sizing:border-box;overflow:hidden}
.title{height:%dpx;line-height:%dpx;padding:0 8px;font-weight:600;font-size:12.5px;color:#d8d9e6;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.body{position:absolute;left:6px;right:6px;bottom:4px;top:%dpx}
.legend{position:absolute;top:0;right:0;bottom:0;overflow:hidden;font-size:11px}
.legend div{height:%dpx;line-height:%dpx;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.legend i{display:inline-block;width:12px;height:3px;margin:0 6px 3px 0;vertical-align:middle}
.legend .more{color:#8e8e9c;font-style:italic}
.nodata{position:absolute;left:0;right:0;top:38%%;text-align:center}
.nodata b{display:block;font-size:15px;color:#ccccdc;font-weight:500;margin-bottom:6px}
.nodata span{color:#8e8e9c;font-size:11.5px;padding:0 16px;display:block}
.err{color:#f2495c;padding:8px;white-space:pre-wrap}
.stat{position:absolute;left:0;right:0;top:30%%;text-align:center;font-size:40px;font-weight:500}
.stat small{display:block;font-size:12px;color:#8e8e9c;font-weight:400}
table{border-collapse:collapse;width:100%%;font-size:11px}
th,td{text-align:left;padding:2px 6px;border-bottom:1px solid #2b2e35;white-space:nowrap}
th{color:#6e9fff}
svg text{fill:#9fa1b1;font-size:10px;font-family:"DejaVu Sans","Liberation Sans",sans-serif}
</style></head><body>
`, html.EscapeString(pg.Title), pg.Width, pg.Height(), pagePad, pagePad, titleH, titleH, titleH, legendRowH, legendRowH)
	fmt.Fprintf(&b, `<div class="header"><h1>%s</h1>`, html.EscapeString(pg.Title))
	for _, n := range pg.Notes {
		fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(n))
	}
	b.WriteString("</div>\n")
	for _, pv := range pg.Panels {
		r := PanelRect(pv.Panel.GridPos, pg.Width)
		if pv.Panel.Type == "row" {
			fmt.Fprintf(&b, `<div style="position:absolute;left:%dpx;top:%dpx;width:%dpx;height:%dpx;font-size:15px;font-weight:500;color:#d8d9e6;border-bottom:1px solid #2b2e35">%s</div>`+"\n",
				r.X, r.Y, r.W, r.H, html.EscapeString(pv.Panel.Title))
			continue
		}
		fmt.Fprintf(&b, `<div class="panel" style="left:%dpx;top:%dpx;width:%dpx;height:%dpx"><div class="title">%s</div><div class="body">`,
			r.X, r.Y, r.W, r.H, html.EscapeString(pv.Panel.Title))
		// The body's size inside the panel's border and padding.
		bw, bh := r.W-2-12, r.H-2-titleH-4
		b.WriteString(panelBody(pv, bw, bh, pg.Window))
		b.WriteString("</div></div>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

func panelBody(pv PanelView, w, h int, win Window) string {
	var errs []string
	var series []Series
	for _, r := range pv.Results {
		if r.Err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", r.Target.RefID, r.Err))
			continue
		}
		series = append(series, r.Series...)
	}
	unit := pv.Panel.FieldConfig.Defaults.Unit
	switch {
	case len(errs) > 0:
		return `<div class="err">Query error<br>` + html.EscapeString(strings.Join(errs, "\n")) + `</div>`
	case pv.Panel.Type == "text":
		return `<div style="padding:4px;white-space:pre-wrap">` + html.EscapeString(pv.Panel.Options.Content) + `</div>`
	case len(pv.Panel.Targets) == 0:
		return noData("Panel type " + pv.Panel.Type + " with no queries: not drawn by the preview.")
	case len(series) == 0:
		return noData(pv.NoData)
	}
	switch pv.Panel.Type {
	case "timeseries", "graph":
		return timeSeriesBody(pv.Panel, series, w, h, win, unit)
	case "stat", "gauge", "singlestat", "bargauge":
		return statBody(series, unit)
	case "table":
		return tableBody(series, unit)
	default:
		return noData("Panel type " + pv.Panel.Type + " is not drawn by the preview.")
	}
}

func noData(reason string) string {
	return `<div class="nodata"><b>No data in this run</b><span>` + html.EscapeString(reason) + `</span></div>`
}

func timeSeriesBody(p Panel, series []Series, w, h int, win Window, unit string) string {
	lg := p.Options.Legend
	showLegend := lg.ShowLegend == nil || *lg.ShowLegend
	if lg.DisplayMode == "hidden" {
		showLegend = false
	}
	var b strings.Builder
	cw, ch := w, h
	if showLegend && lg.Placement == "right" {
		lw := min(w*2/5, 320)
		cw = w - lw - 8
		b.WriteString(SVGChart(series, cw, ch, win, unit))
		fmt.Fprintf(&b, `<div class="legend" style="width:%dpx">%s</div>`, lw, legendHTML(series, h/legendRowH))
		return b.String()
	}
	if showLegend {
		rows := min(len(series), max(1, h/(4*legendRowH)))
		ch = h - rows*legendRowH - 4
		b.WriteString(SVGChart(series, cw, ch, win, unit))
		fmt.Fprintf(&b, `<div class="legend" style="left:0;top:auto;height:%dpx">%s</div>`, rows*legendRowH, legendHTML(series, rows))
		return b.String()
	}
	return SVGChart(series, cw, ch, win, unit)
}

// legendHTML lists the series with their colours, at most rows lines: past
// that the last line says how many more there are.
func legendHTML(series []Series, rows int) string {
	var b strings.Builder
	shown := len(series)
	if shown > rows {
		shown = max(rows-1, 0)
	}
	for i := range shown {
		fmt.Fprintf(&b, `<div><i style="background:%s"></i>%s</div>`, SeriesColor(i), html.EscapeString(series[i].Name))
	}
	if shown < len(series) {
		fmt.Fprintf(&b, `<div class="more">+ %d more series</div>`, len(series)-shown)
	}
	return b.String()
}

// SVGChart draws the series as lines over the window, with a value axis
// in the unit on the left and a time axis below. A series is broken where
// it has no value for more than one and a half steps (as a series is
// between two runs of a state) and a point with no neighbours is a dot.
func SVGChart(series []Series, w, h int, win Window, unit string) string {
	const left, right, top, bottom = 58, 8, 6, 18
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
				continue
			}
			lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if lo > 0 {
		lo = 0
	}
	ticks := NiceTicks(lo, hi, max(3, int(ph)/40))
	ylo, yhi := ticks[0], ticks[len(ticks)-1]
	t0, t1 := win.Start.UnixMilli(), win.End.UnixMilli()
	if t1 <= t0 {
		t1 = t0 + 1
	}
	xOf := func(t int64) float64 { return left + pw*float64(t-t0)/float64(t1-t0) }
	yOf := func(v float64) float64 { return top + ph - ph*(v-ylo)/(yhi-ylo) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`, w, h, w, h)
	for _, v := range ticks {
		y := yOf(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#2b2e35" stroke-width="1"/>`, left, y, w-right, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, y+3.5, html.EscapeString(FormatValue(v, unit)))
	}
	layout := "15:04:05"
	if win.End.Sub(win.Start) > 30*time.Minute {
		layout = "15:04"
	}
	for _, t := range TimeTicks(win.Start, win.End, max(2, int(pw)/90)) {
		x := xOf(t.UnixMilli())
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#2b2e35" stroke-width="1"/>`, x, top, x, top+ph)
		// A label at either end of the axis is kept inside the chart.
		anchor := "middle"
		if x > float64(w)-30 {
			anchor = "end"
		} else if x < left+30 {
			anchor = "start"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="%s">%s</text>`, x, h-4, anchor, t.UTC().Format(layout))
	}
	gap := int64(math.Max(1.5*float64(win.Step.Milliseconds()), 1))
	for i, s := range series {
		color := SeriesColor(i)
		var path strings.Builder
		for _, run := range runs(s.Points, gap) {
			if len(run) == 1 {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>`, xOf(run[0].T), yOf(run[0].V), color)
				continue
			}
			for j, p := range run {
				op := "L"
				if j == 0 {
					op = "M"
				}
				fmt.Fprintf(&path, "%s%.1f %.1f", op, xOf(p.T), yOf(p.V))
			}
		}
		if path.Len() > 0 {
			fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-linejoin="round"/>`, path.String(), color)
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

// runs splits points into the runs a line joins: a value that is not a
// number, or a gap of more than gap milliseconds, ends a run.
func runs(points []Point, gap int64) [][]Point {
	var out [][]Point
	var cur []Point
	for _, p := range points {
		if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		if len(cur) > 0 && p.T-cur[len(cur)-1].T > gap {
			out, cur = append(out, cur), nil
		}
		cur = append(cur, p)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func statBody(series []Series, unit string) string {
	v, ok := series[0].Last()
	if !ok {
		return noData("Its series has no value at the end of the run.")
	}
	return fmt.Sprintf(`<div class="stat" style="color:%s">%s<small>%s</small></div>`,
		SeriesColor(0), html.EscapeString(FormatValue(v, unit)), html.EscapeString(series[0].Name))
}

func tableBody(series []Series, unit string) string {
	cols := map[string]bool{}
	for _, s := range series {
		s.Labels.Range(func(l labels.Label) { cols[l.Name] = true })
	}
	names := make([]string, 0, len(cols))
	for c := range cols {
		names = append(names, c)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("<table><tr>")
	for _, c := range names {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c))
	}
	b.WriteString("<th>Value</th></tr>")
	for _, s := range series {
		b.WriteString("<tr>")
		for _, c := range names {
			fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(s.Labels.Get(c)))
		}
		v, ok := s.Last()
		cell := "–"
		if ok {
			cell = FormatValue(v, unit)
		}
		fmt.Fprintf(&b, "<td>%s</td></tr>", html.EscapeString(cell))
	}
	b.WriteString("</table>")
	return b.String()
}
