package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
)

// Scraper appends the samples of each scrape of one target to a storage,
// as Prometheus's scrape loop does for the text exposition format: every
// series gets the target's job and instance labels, and a series that was
// in the previous scrape and is not in this one gets a staleness marker,
// so a query stops seeing it at once rather than five minutes later.
type Scraper struct {
	Store         storage.Appendable
	Job, Instance string
	Client        *http.Client

	// previous are the series of the last scrape, by label hash.
	previous map[uint64]labels.Labels
	// names counts, per metric name, the scrapes it had series in.
	names map[string]int
	// Scrapes is the number of scrapes ingested; First and Last are the
	// times of the first and the last (set by the caller).
	Scrapes     int
	First, Last time.Time
}

// Seen reports how many scrapes had series of the metric name.
func (s *Scraper) Seen(name string) int { return s.names[name] }

// Scrape fetches url and ingests what it returns with timestamp ts.
func (s *Scraper) Scrape(ctx context.Context, url string, ts time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	// Ask for the plain text format (no protobuf, no OpenMetrics).
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "text/plain" {
		return 0, fmt.Errorf("GET %s: content type %q, want the text format", url, resp.Header.Get("Content-Type"))
	}
	return s.Ingest(ctx, body, ts)
}

// Ingest parses one scrape's body in the text exposition format and
// appends its samples at ts (or at the sample's own timestamp, when it has
// one), plus the staleness markers of the series that went away. It
// returns the number of samples appended; nothing is appended when the
// body does not parse.
func (s *Scraper) Ingest(ctx context.Context, body []byte, ts time.Time) (int, error) {
	type sample struct {
		ls labels.Labels
		t  int64
		v  float64
	}
	var samples []sample
	p := textparse.NewPromParser(body, labels.NewSymbolTable(), false)
	b := labels.NewBuilder(labels.EmptyLabels())
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("parse scrape: %w", err)
		}
		if e != textparse.EntrySeries {
			continue
		}
		_, sts, v := p.Series()
		var ls labels.Labels
		p.Labels(&ls)
		b.Reset(ls)
		if s.Job != "" {
			b.Set(labelJob, s.Job)
		}
		if s.Instance != "" {
			b.Set(labelInstance, s.Instance)
		}
		t := ts.UnixMilli()
		if sts != nil {
			t = *sts
		}
		samples = append(samples, sample{b.Labels(), t, v})
	}

	app := s.Store.Appender(ctx)
	seen := make(map[uint64]labels.Labels, len(samples))
	names := map[string]bool{}
	for _, smp := range samples {
		if _, err := app.Append(0, smp.ls, smp.t, smp.v); err != nil {
			_ = app.Rollback()
			return 0, fmt.Errorf("append %s: %w", smp.ls, err)
		}
		seen[smp.ls.Hash()] = smp.ls
		names[smp.ls.Get(labels.MetricName)] = true
	}
	n := len(samples)
	stale := math.Float64frombits(value.StaleNaN)
	for h, ls := range s.previous {
		if _, ok := seen[h]; ok {
			continue
		}
		if _, err := app.Append(0, ls, ts.UnixMilli(), stale); err != nil {
			_ = app.Rollback()
			return 0, fmt.Errorf("append staleness marker of %s: %w", ls, err)
		}
	}
	if err := app.Commit(); err != nil {
		return 0, err
	}
	s.previous = seen
	if s.names == nil {
		s.names = map[string]int{}
	}
	for name := range names {
		s.names[name]++
	}
	s.Scrapes++
	return n, nil
}

// The target labels a scrape adds.
const (
	labelJob      = "job"
	labelInstance = "instance"
)
