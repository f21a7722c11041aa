package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// Dashboard is the part of a Grafana dashboard JSON the preview reads.
type Dashboard struct {
	Title      string  `json:"title"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// Variable is a dashboard template variable.
type Variable struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Query   string `json:"query"`
	Current struct {
		Value any `json:"value"`
	} `json:"current"`
}

// GridPos is a panel's place on Grafana's grid: 24 columns wide, rows of
// a fixed height, x and y from the top left.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Panel is one dashboard panel.
type Panel struct {
	ID          int     `json:"id"`
	Type        string  `json:"type"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	GridPos     GridPos `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Options struct {
		Legend struct {
			DisplayMode string `json:"displayMode"`
			Placement   string `json:"placement"`
			ShowLegend  *bool  `json:"showLegend"`
		} `json:"legend"`
		Content string `json:"content"`
	} `json:"options"`
	Targets []Target `json:"targets"`
	// Panels are the panels of a collapsed row.
	Panels []Panel `json:"panels"`
}

// Target is one query of a panel.
type Target struct {
	RefID        string `json:"refId"`
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
	Format       string `json:"format"`
	Instant      bool   `json:"instant"`
	Hide         bool   `json:"hide"`
}

// LoadDashboard reads a dashboard JSON file.
func LoadDashboard(path string) (*Dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &d, nil
}

// AllPanels returns the dashboard's panels with those of collapsed rows
// after their row, as Grafana lays them out when the row is expanded.
func (d *Dashboard) AllPanels() []Panel {
	var out []Panel
	for _, p := range d.Panels {
		inner := p.Panels
		p.Panels = nil
		out = append(out, p)
		out = append(out, inner...)
	}
	return out
}

// Window is the time range the panels are drawn over and the intervals
// Grafana's built-in variables stand for.
type Window struct {
	Start, End time.Time
	// Step is the range query's resolution ($__interval).
	Step time.Duration
	// ScrapeInterval is how often the samples were scraped; it sets
	// $__rate_interval.
	ScrapeInterval time.Duration
}

// Builtins returns Grafana's built-in interval variables for w.
func (w Window) Builtins() map[string]string {
	rng := w.End.Sub(w.Start)
	// Grafana's documented rule: four scrape intervals, or the step plus
	// one scrape interval when that is longer.
	rate := max(4*w.ScrapeInterval, w.Step+w.ScrapeInterval)
	return map[string]string{
		"__interval":      promDuration(w.Step),
		"__interval_ms":   fmt.Sprint(w.Step.Milliseconds()),
		"__rate_interval": promDuration(rate),
		"__range":         promDuration(rng),
		"__range_s":       fmt.Sprint(int64(rng.Seconds())),
		"__range_ms":      fmt.Sprint(rng.Milliseconds()),
	}
}

// promDuration writes d as a PromQL duration, rounded to the millisecond
// and never zero.
func promDuration(d time.Duration) string {
	d = d.Round(time.Millisecond)
	if d <= 0 {
		d = time.Millisecond
	}
	return model.Duration(d).String()
}

// DashboardVariables returns the values the preview gives the dashboard's
// own variables: a data source variable stands for the one Prometheus the
// samples are in; a variable with a current value keeps it; any other
// (a query variable, say) matches every value.
func (d *Dashboard) DashboardVariables() map[string]string {
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		switch {
		case v.Type == "datasource":
			vars[v.Name] = "preview"
		case v.Current.Value != nil && fmt.Sprint(v.Current.Value) != "" && fmt.Sprint(v.Current.Value) != "$__all":
			switch cv := v.Current.Value.(type) {
			case []any:
				parts := make([]string, len(cv))
				for i, x := range cv {
					parts[i] = regexp.QuoteMeta(fmt.Sprint(x))
				}
				vars[v.Name] = strings.Join(parts, "|")
			default:
				vars[v.Name] = fmt.Sprint(cv)
			}
		default:
			vars[v.Name] = ".*"
		}
	}
	return vars
}

// varRef matches Grafana's variable syntaxes: $name, ${name},
// ${name:format} and [[name]]. A $ followed by a digit ($1 in
// label_replace) or by anything but a name is left alone.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}|\[\[([A-Za-z_][A-Za-z0-9_]*)\]\]|\$([A-Za-z_][A-Za-z0-9_]*)`)

// Substitute replaces the variables in expr with their values in vars. A
// variable vars does not name is an error.
func Substitute(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(expr, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("unknown variable(s) %s in %q", strings.Join(missing, ", "), expr)
	}
	return out, nil
}

var legendRef = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// LegendName is a series' name in the legend: legendFormat with each
// {{label}} replaced by the series' value of it (empty when it has none),
// or with no legendFormat (or Grafana's "__auto") the series' labels.
func LegendName(format string, ls labels.Labels) string {
	if format == "" || format == "__auto" {
		if ls.IsEmpty() {
			return "value"
		}
		return ls.String()
	}
	return legendRef.ReplaceAllStringFunc(format, func(m string) string {
		return ls.Get(legendRef.FindStringSubmatch(m)[1])
	})
}
