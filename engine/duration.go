package engine

import (
	"strings"
	"time"
)

// ShortDuration prints 30s, 2m and 1h30m rather than 2m0s. It lives in the
// core rather than in engine/explain because the rendered docs and the
// explanations must print a row's durations alike, and the renderer should
// not pull in the cluster reading that explanations do.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
