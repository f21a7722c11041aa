package main

import (
	"sort"
	"time"
)

// durations returns end[name]-start[i] for every name, sorted ascending.
// A name without an end is left out.
func durations(names []string, start []time.Time, end map[string]time.Time) []time.Duration {
	out := make([]time.Duration, 0, len(names))
	for i, name := range names {
		if t, ok := end[name]; ok {
			out = append(out, t.Sub(start[i]))
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// pct is the nearest-rank percentile p (0 < p ≤ 100) of sorted durations:
// the smallest value that at least p% of the values do not exceed.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// Integer arithmetic on per-mille ranks, so 95% of 200 is exactly rank
	// 190 and not 191 through a float rounding error.
	n := len(sorted)
	rank := (int(p*10)*n + 999) / 1000
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// newHalf summarises one half of the lifecycle.
func newHalf(wall time.Duration, sorted []time.Duration) *Half {
	return &Half{
		WallSeconds: round3(wall.Seconds()),
		P50Seconds:  round3(pct(sorted, 50).Seconds()),
		P95Seconds:  round3(pct(sorted, 95).Seconds()),
		P99Seconds:  round3(pct(sorted, 99).Seconds()),
	}
}
