package faultproxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// upstream answers 200 "ok", counts requests, and streams watches until
// the client goes away.
func upstream(t *testing.T, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := io.WriteString(w, "{}\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func start(t *testing.T, f Faults) (*Proxy, *atomic.Int64) {
	t.Helper()
	hits := &atomic.Int64{}
	p, err := Start(&rest.Config{Host: upstream(t, hits).URL}, f, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	p.On.Store(true)
	return p, hits
}

func do(t *testing.T, method, url string) (int, metav1.Status) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var st metav1.Status
	if resp.StatusCode != http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatalf("%s %s: %d with a body that is no Status: %v", method, url, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, st
}

func TestErrorsAreStatuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      Faults
		method string
		code   int
		reason metav1.StatusReason
		upHits int64
	}{
		{"500", Faults{Error500: 1}, http.MethodGet, 500, metav1.StatusReasonInternalError, 0},
		{"429", Faults{Error429: 1}, http.MethodGet, 429, metav1.StatusReasonTooManyRequests, 0},
		{"409 on a write", Faults{Error409: 1}, http.MethodPatch, 409, metav1.StatusReasonConflict, 0},
		{"409 never on a read", Faults{Error409: 1}, http.MethodGet, 200, "", 1},
		{"500 after the write went through", Faults{Error500AfterCommit: 1}, http.MethodPost, 500, metav1.StatusReasonInternalError, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, hits := start(t, tc.f)
			code, st := do(t, tc.method, p.URL+"/api/v1/namespaces/x/pods/y")
			if code != tc.code || st.Reason != tc.reason || (code != 200 && st.Code != int32(code)) {
				t.Errorf("got %d %+v, want %d %s", code, st, tc.code, tc.reason)
			}
			if hits.Load() != tc.upHits {
				t.Errorf("upstream saw %d requests, want %d", hits.Load(), tc.upHits)
			}
			if p.N.Requests.Load() != 1 || (tc.code != 200) != (p.Injected() == 1) {
				t.Errorf("counts: requests %d injected %d", p.N.Requests.Load(), p.Injected())
			}
		})
	}
}

func TestOffIsAPlainProxy(t *testing.T) {
	p, hits := start(t, Faults{Error500: 1})
	p.On.Store(false)
	if code, _ := do(t, http.MethodGet, p.URL+"/api"); code != 200 || hits.Load() != 1 || p.Injected() != 0 {
		t.Errorf("code %d, upstream hits %d, injected %d", code, hits.Load(), p.Injected())
	}
}

func TestWatchesAreCut(t *testing.T) {
	p, _ := start(t, Faults{WatchMin: 200 * time.Millisecond, WatchMax: 400 * time.Millisecond})
	resp, err := http.Get(p.URL + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	// The upstream streams forever: the body ends only because the proxy
	// cut it (the read fails or reaches EOF).
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the watch was not cut")
	}
	if p.N.WatchesCut.Load() != 1 {
		t.Errorf("watches cut %d", p.N.WatchesCut.Load())
	}
}

func TestLatencyDelaysAndForwards(t *testing.T) {
	p, hits := start(t, Faults{Latency: 1, MaxLatency: 50 * time.Millisecond})
	if code, _ := do(t, http.MethodGet, p.URL+"/api"); code != 200 || hits.Load() != 1 || p.N.Delayed.Load() != 1 {
		t.Errorf("code %d, upstream hits %d, delayed %d", code, hits.Load(), p.N.Delayed.Load())
	}
}

// TestDefaultFaultsShare: over many requests (a fixed seed), DefaultFaults
// hit a read about 13% of the time and a write about 19%, so a chaos run's
// share of faulted requests says the retries were exercised.
func TestDefaultFaultsShare(t *testing.T) {
	f := DefaultFaults
	f.MaxLatency = time.Millisecond
	p, _ := start(t, f)
	const n = 1500
	for i := range n {
		method := http.MethodGet
		if i%2 == 1 {
			method = http.MethodPatch
		}
		do(t, method, p.URL+"/api")
	}
	share := float64(p.Injected()) / float64(p.N.Requests.Load())
	t.Logf("DefaultFaults hit %.1f%% of %d requests", 100*share, p.N.Requests.Load())
	if share < 0.12 || share > 0.20 {
		t.Errorf("DefaultFaults hit %.1f%% of %d requests, want 12%% to 20%% (13%% of reads, 19%% of writes)", 100*share, p.N.Requests.Load())
	}
}
