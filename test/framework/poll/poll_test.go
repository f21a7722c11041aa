package poll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	n := 0
	err := Until(context.Background(), time.Minute, func(context.Context) error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("err %v after %d calls", err, n)
	}
	err = Until(context.Background(), 0, func(context.Context) error { return errors.New("still missing") })
	if err == nil || !strings.Contains(err.Error(), "still missing") {
		t.Fatalf("timeout error %v does not carry the last answer", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Until(ctx, time.Minute, func(context.Context) error { return errors.New("never") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// fatalT records what Must and Await would end a test with.
type fatalT struct{ msg string }

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(format string, args ...any) {
	if f.msg == "" {
		f.msg = fmt.Sprintf(format, args...)
	}
}

func TestMustAndAwait(t *testing.T) {
	var f fatalT
	Must(&f, nil)
	Await(&f, time.Minute, "ready", func(context.Context) error { return nil })
	if f.msg != "" {
		t.Fatalf("ended a test that succeeded: %s", f.msg)
	}
	Must(&f, errors.New("setup broke"))
	if f.msg != "setup broke" {
		t.Errorf("Must: %q", f.msg)
	}
	f = fatalT{}
	Await(&f, 0, "ready", func(context.Context) error { return errors.New("not yet") })
	if !strings.HasPrefix(f.msg, "ready: ") || !strings.Contains(f.msg, "not yet") {
		t.Errorf("Await: %q", f.msg)
	}
}

func TestScaleFactor(t *testing.T) {
	for _, tc := range []struct {
		env   string
		procs int
		want  float64
	}{
		{"", 8, 1},
		{"", 4, 1},
		{"", 2, 2},
		{"", 1, 4},
		{"2.5", 8, 2.5},
		{"3", 1, 12},
	} {
		if got := factor(tc.env, tc.procs); got != tc.want {
			t.Errorf("factor(%q, %d) = %v, want %v", tc.env, tc.procs, got, tc.want)
		}
	}
	for _, bad := range []string{"0", "-1", "fast"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("factor(%q) accepted", bad)
				}
			}()
			factor(bad, 8)
		}()
	}
}
