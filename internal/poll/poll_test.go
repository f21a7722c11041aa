package poll

import (
	"context"
	"errors"
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
