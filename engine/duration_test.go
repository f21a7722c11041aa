package engine

import (
	"testing"
	"time"
)

func TestShortDuration(t *testing.T) {
	for in, want := range map[string]string{"30s": "30s", "2m": "2m", "1h30m": "1h30m", "2h": "2h", "1m30s": "1m30s", "1.5s": "1.5s"} {
		d, err := time.ParseDuration(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %s, want %s", in, got, want)
		}
	}
}
