package timeline

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSynced is an informer that has synced to rv.
type fakeSynced struct{ rv atomic.Uint64 }

func (f *fakeSynced) LastSyncResourceVersion() string { return strconv.FormatUint(f.rv.Load(), 10) }

// After a kube-apiserver restart an informer can stay behind for tens of
// seconds (its reflector backs off between list attempts): the window the
// driver opened must stay open until that informer has re-listed, or the
// checks after it compare against the state it missed and report false
// violations.
func TestBlindWindowStaysOpenUntilEveryInformerResynced(t *testing.T) {
	fast, slow := &fakeSynced{}, &fakeSynced{}
	fast.rv.Store(100)
	slow.rv.Store(100)
	r := &Recorder{states: map[string]string{}, synced: []lastSyncer{fast, slow}, maxRV: 100}
	r.BlindFrom()
	fast.rv.Store(120) // the write after the restart is at 110
	r.maxRV = 130
	err := r.Resynced(context.Background(), 110, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stays open") {
		t.Fatalf("Resynced with an informer behind: %v", err)
	}
	if w := r.Timeline().Blind; len(w) != 1 || w[0] != (Window{From: 100, To: 130}) {
		t.Fatalf("blind windows while an informer is behind %v, want (100, 130] up to the newest revision seen", w)
	}
	r.maxRV = 150 // the window is open: everything seen is suspect
	if w := r.Timeline().Blind; w[0].To != 150 {
		t.Fatalf("open window %v, want it to reach the newest revision", w)
	}
	slow.rv.Store(160) // the slow informer re-listed
	if w := r.Timeline().Blind; w[0] != (Window{From: 100, To: 160}) {
		t.Fatalf("blind window after the re-list %v, want (100, 160]", w)
	}
	r.maxRV = 200
	if w := r.Timeline().Blind; w[0].To != 160 {
		t.Fatalf("closed window moved: %v", w)
	}
	if err := r.Resynced(context.Background(), 110, time.Millisecond); err != nil {
		t.Fatalf("Resynced once every informer is there: %v", err)
	}
}
