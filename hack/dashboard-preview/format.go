package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FormatValue writes v in the panel's unit: "s" as a duration (µs, ms, s,
// min, h), "ms" likewise from milliseconds, "bytes" in binary multiples,
// "percent" and "percentunit" with a %, anything else ("short" and the
// rest) with k, M, G, T for large values.
func FormatValue(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	switch unit {
	case "s":
		return formatSeconds(v)
	case "ms":
		return formatSeconds(v / 1000)
	case "bytes":
		return formatScaled(v, 1024, []string{" B", " KiB", " MiB", " GiB", " TiB"})
	case "percent":
		return trimNumber(v) + "%"
	case "percentunit":
		return trimNumber(v*100) + "%"
	default:
		return formatScaled(v, 1000, []string{"", "k", "M", "G", "T"})
	}
}

func formatSeconds(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0 s"
	case a < 1e-3:
		return trimNumber(v*1e6) + " µs"
	case a < 1:
		return trimNumber(v*1e3) + " ms"
	case a < 60:
		return trimNumber(v) + " s"
	case a < 3600:
		return trimNumber(v/60) + " min"
	case a < 86400:
		return trimNumber(v/3600) + " h"
	default:
		return trimNumber(v/86400) + " day"
	}
}

func formatScaled(v, base float64, suffixes []string) string {
	i := 0
	for math.Abs(v) >= base && i < len(suffixes)-1 {
		v /= base
		i++
	}
	return trimNumber(v) + suffixes[i]
}

// trimNumber writes v with at most three significant digits (more for
// whole numbers up to 999), without trailing zeros.
func trimNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	a := math.Abs(v)
	var s string
	switch {
	case a >= 100:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.001:
		s = strconv.FormatFloat(v, 'f', 2-int(math.Floor(math.Log10(a))), 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// NiceTicks returns evenly spaced round values (steps of 1, 2 or 5 times a
// power of ten) from at or below lo to at or above hi, about n of them.
func NiceTicks(lo, hi float64, n int) []float64 {
	if n < 2 {
		n = 2
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)/2, hi+math.Abs(hi)/2
		}
	}
	raw := (hi - lo) / float64(n-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	// Round each tick to the step's decimals (3 × 0.1 is not 0.3).
	dec := max(0, -int(math.Floor(math.Log10(step))))
	first := math.Floor(lo/step) * step
	var ticks []float64
	for i := 0; i < 1000; i++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(first+float64(i)*step, 'f', dec, 64), 64)
		ticks = append(ticks, v)
		if v >= hi {
			break
		}
	}
	return ticks
}

// TimeTicks returns round times between start and end, about n of them.
func TimeTicks(start, end time.Time, n int) []time.Time {
	span := end.Sub(start)
	steps := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
		15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
		10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= time.Duration(n) {
			step = s
			break
		}
	}
	var out []time.Time
	for t := start.Truncate(step); !t.After(end); t = t.Add(step) {
		if !t.Before(start) {
			out = append(out, t)
		}
	}
	return out
}

// SeriesColor is the colour of the i-th series: hues a golden angle apart,
// so neighbours differ and colours repeat only after many series.
func SeriesColor(i int) string {
	h := math.Mod(200+float64(i)*137.508, 360)
	l := 62.0
	if i%2 == 1 {
		l = 70
	}
	return fmt.Sprintf("hsl(%.0f,70%%,%.0f%%)", h, l)
}
