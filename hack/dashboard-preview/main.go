// Command dashboard-preview draws config/grafana/krtt-operator.json from
// real data (`make dashboard-preview`), since Grafana itself cannot be
// installed here. It is not Grafana and does not claim to look exactly
// like it.
//
// It runs `krtt-bench -n N` (a real krtt operator on a local control plane
// creating, draining and deleting N Machines), scrapes the operator's
// metrics endpoint every -scrape-interval until the bench ends, and
// appends the samples to a Prometheus TSDB in a temporary directory, as
// Prometheus's scrape loop would (job and instance labels, staleness
// markers). It then evaluates every panel's queries, with Grafana's
// variables substituted, as range queries over the scraped window with
// Prometheus's PromQL engine, lays the panels out by their gridPos in one
// HTML page (a panel whose queries return nothing says so, and why), and
// takes a PNG of it with headless Chromium.
//
// With -metrics-url it scrapes that endpoint for -duration instead of
// running the bench.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/prometheus/tsdb"
)

type options struct {
	repo, dashboard, out, htmlOut, chromium, metricsURL string
	n, width                                            int
	interval, duration                                  time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.repo, "repo", "../..", "Root of the krtt repository (the bench runs there).")
	flag.StringVar(&o.dashboard, "dashboard", "", "Dashboard JSON (default: REPO/config/grafana/krtt-operator.json).")
	flag.StringVar(&o.out, "out", "", "PNG to write (default: REPO/docs/img/dashboard.png).")
	flag.StringVar(&o.htmlOut, "html", "", "Also keep the HTML page here (default: only in a temporary directory).")
	flag.StringVar(&o.chromium, "chromium", "/usr/bin/chromium", "Chromium binary for the screenshot.")
	flag.StringVar(&o.metricsURL, "metrics-url", "", "Scrape this endpoint for -duration instead of running krtt-bench.")
	flag.IntVar(&o.n, "n", 400, "Worker Machines of the bench run (krtt-bench -n): 400 take about a minute on 2 cores.")
	flag.IntVar(&o.width, "width", 1600, "Page width in pixels.")
	flag.DurationVar(&o.interval, "scrape-interval", time.Second, "Scrape interval (the bench run is short).")
	flag.DurationVar(&o.duration, "duration", 2*time.Minute, "With -metrics-url: how long to scrape.")
	flag.Parse()
	if o.dashboard == "" {
		o.dashboard = filepath.Join(o.repo, "config", "grafana", "krtt-operator.json")
	}
	if o.out == "" {
		o.out = filepath.Join(o.repo, "docs", "img", "dashboard.png")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard-preview:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "dashboard-preview: "+format+"\n", args...)
}

func run(ctx context.Context, o options) error {
	d, err := LoadDashboard(o.dashboard)
	if err != nil {
		return err
	}
	if _, err := os.Stat(o.chromium); err != nil {
		return fmt.Errorf("%s: %w (apt-get install chromium)", o.chromium, err)
	}
	tmp, err := os.MkdirTemp("", "dashboard-preview-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db, err := tsdb.Open(filepath.Join(tmp, "tsdb"), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return err
	}
	defer db.Close()

	commit := gitCommit(o.repo)
	var sc *Scraper
	var source string
	if o.metricsURL != "" {
		sc, err = scrapeFor(ctx, db, o.metricsURL, o.interval, o.duration)
		source = fmt.Sprintf("of %s", o.metricsURL)
	} else {
		sc, err = scrapeBench(ctx, db, o, tmp)
		source = fmt.Sprintf("of the krtt operator during `krtt-bench -n %d` (%d worker Machines created, given Pods, drained and deleted) at commit %s", o.n, o.n, commit)
	}
	if err != nil {
		return err
	}
	if sc.Scrapes < 2 {
		return fmt.Errorf("only %d scrape(s) succeeded: nothing to draw", sc.Scrapes)
	}
	w := Window{Start: sc.First, End: sc.Last, Step: o.interval, ScrapeInterval: o.interval}
	if span := w.End.Sub(w.Start); span/w.Step > 400 {
		w.Step = (span / 400).Round(time.Second) + time.Second
	}

	eng := NewEngine()
	vars := d.DashboardVariables()
	pg := Page{Title: d.Title, Width: o.width, Window: w}
	for _, p := range d.AllPanels() {
		pv := PanelView{Panel: p, Results: Evaluate(ctx, eng, db, p, w, vars)}
		pv.NoData = NoDataReason(pv.Results, sc.Seen, sc.Scrapes)
		for _, r := range pv.Results {
			if r.Err != nil {
				logf("panel %q %s: %v", p.Title, r.Target.RefID, r.Err)
			} else {
				logf("panel %q %s: %d series", p.Title, r.Target.RefID, len(r.Series))
			}
		}
		pg.Panels = append(pg.Panels, pv)
	}
	pg.Notes = []string{
		fmt.Sprintf("Preview drawn by `make dashboard-preview` (hack/dashboard-preview) from the queries of %s, evaluated with the PromQL engine of Prometheus %s. Not a Grafana screenshot: Grafana cannot be installed here.",
			filepath.Base(o.dashboard), prometheusVersion()),
		fmt.Sprintf("Data: %d scrapes, every %s, %s; %s – %s UTC.",
			sc.Scrapes, o.interval, source, w.Start.UTC().Format("2006-01-02 15:04:05"), w.End.UTC().Format("15:04:05")),
	}

	page := RenderHTML(pg)
	htmlPath := filepath.Join(tmp, "dashboard.html")
	if err := os.WriteFile(htmlPath, []byte(page), 0o644); err != nil {
		return err
	}
	if o.htmlOut != "" {
		if err := os.WriteFile(o.htmlOut, []byte(page), 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := Screenshot(ctx, o.chromium, htmlPath, o.out, o.width, pg.Height(), tmp); err != nil {
		return err
	}
	fi, err := os.Stat(o.out)
	if err != nil {
		return err
	}
	logf("wrote %s (%dx%d, %d KB)", o.out, o.width, pg.Height(), fi.Size()/1024)
	if fi.Size() > 400<<10 {
		logf("%s is over 400 KB: a smaller -width or -n keeps docs/ light", o.out)
	}
	return nil
}

// NoDataReason says why a panel's queries returned nothing: the metrics
// they read had no series at all in this run, or had some but none the
// queries select.
func NoDataReason(results []TargetResult, seen func(string) int, scrapes int) string {
	var never, some []string
	for _, r := range results {
		for _, m := range r.Metrics {
			if seen(m) == 0 {
				never = append(never, m)
			} else {
				some = append(some, m)
			}
		}
	}
	if len(never) > 0 {
		return fmt.Sprintf("No %s series in any of the %d scrapes: the operator reported none during this run.", strings.Join(never, ", "), scrapes)
	}
	if len(some) > 0 {
		return fmt.Sprintf("%s had series in this run's %d scrapes, but none that the query selects.", strings.Join(some, ", "), scrapes)
	}
	return fmt.Sprintf("The query returned no series over this run's %d scrapes.", scrapes)
}

// scrapeFor scrapes u every interval for d.
func scrapeFor(ctx context.Context, db *tsdb.DB, u string, interval, d time.Duration) (*Scraper, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	sc := &Scraper{Store: db, Job: "krtt-operator", Instance: pu.Host}
	loop(ctx, sc, u, interval, ctx.Done())
	return sc, nil
}

// metricsLine is the bench's line naming the operator's metrics endpoint.
var metricsLine = regexp.MustCompile(`krtt-operator pid \d+, metrics (http://\S+/metrics)`)

// scrapeBench builds and runs krtt-bench and scrapes the operator it
// starts until the bench ends.
func scrapeBench(ctx context.Context, db *tsdb.DB, o options, tmp string) (*Scraper, error) {
	benchBin := filepath.Join(tmp, "krtt-bench")
	logf("building %s", benchBin)
	build := exec.CommandContext(ctx, "go", "build", "-o", benchBin, "./cmd/krtt-bench")
	build.Dir, build.Stdout, build.Stderr = o.repo, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build krtt-bench: %w", err)
	}
	// The operator binary goes to the temporary directory, not bin/, so a
	// bench running from bin/ at the same time is left alone.
	cmd := exec.Command(benchBin, "-n", strconv.Itoa(o.n), "-operator", filepath.Join(tmp, "krtt-operator"))
	cmd.Dir, cmd.Stdout = o.repo, os.Stderr
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// On Ctrl-C the bench is interrupted, so it stops its operator and
	// control plane itself.
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(os.Interrupt)
		case <-stopped:
		}
	}()
	urls := make(chan string, 1)
	lines := make(chan struct{})
	go func() {
		defer close(lines)
		s := bufio.NewScanner(stderr)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			fmt.Fprintln(os.Stderr, s.Text())
			if m := metricsLine.FindStringSubmatch(s.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	done := make(chan struct{})
	var waitErr error
	go func() {
		<-lines
		waitErr = cmd.Wait()
		close(stopped)
		close(done)
	}()

	var u string
	select {
	case u = <-urls:
	case <-done:
		return nil, fmt.Errorf("krtt-bench ended before starting the operator: %v", waitErr)
	}
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	logf("scraping %s every %s until the bench ends", u, o.interval)
	sc := &Scraper{Store: db, Job: "krtt-operator", Instance: pu.Host}
	loop(ctx, sc, u, o.interval, done)
	<-done
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if waitErr != nil {
		return nil, fmt.Errorf("krtt-bench: %w", waitErr)
	}
	return sc, nil
}

// loop scrapes u every interval until stop is closed. A failed scrape is
// logged and skipped (the operator is not listening yet, or any more).
func loop(ctx context.Context, sc *Scraper, u string, interval time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	failures := 0
	for {
		now := time.Now()
		sctx, cancel := context.WithTimeout(ctx, interval)
		n, err := sc.Scrape(sctx, u, now)
		cancel()
		if err != nil && ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			if failures <= 3 || failures%20 == 0 {
				logf("scrape %d failed: %v", failures, err)
			}
		} else {
			if sc.Scrapes == 1 {
				sc.First = now
			}
			sc.Last = now
			if sc.Scrapes%20 == 1 {
				logf("scrape %d: %d samples", sc.Scrapes, n)
			}
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Screenshot takes a PNG of the page with headless Chromium at w×h.
func Screenshot(ctx context.Context, chromium, htmlPath, pngPath string, w, h int, tmp string) error {
	profile, err := os.MkdirTemp(tmp, "chromium-")
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(pngPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir="+profile,
		"--screenshot="+abs,
		fmt.Sprintf("--window-size=%d,%d", w, h),
		"file://"+htmlPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("chromium: %w\n%s", err, out)
	}
	if _, err := os.Stat(abs); err != nil {
		return errors.Join(fmt.Errorf("chromium wrote no screenshot"), err, errors.New(string(out)))
	}
	return nil
}

// gitCommit is the repository's HEAD, short, with -dirty when tracked
// files differ from it.
func gitCommit(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "-dirty"
	}
	return c
}

// prometheusVersion is the version of the Prometheus module built in.
func prometheusVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/prometheus/prometheus" {
				return m.Version
			}
		}
	}
	return "(unknown version)"
}
