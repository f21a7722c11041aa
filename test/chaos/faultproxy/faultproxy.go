// Package faultproxy is a reverse proxy on 127.0.0.1 in front of
// kube-apiserver that injects faults: 500, 429 and 409 answers, a 500 after
// a write was applied, latency, and watches cut after a few seconds.
package faultproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Faults are the probabilities of what the proxy does to a request.
type Faults struct {
	// Error500, Error429 apply to any request; Error409 and
	// Error500AfterCommit only to writes (the latter forwards the write,
	// then answers 500 as a timed-out request would).
	Error500, Error429, Error409, Error500AfterCommit float64
	// Latency delays a request by up to MaxLatency.
	Latency    float64
	MaxLatency time.Duration
	// Watches are cut after a random time in [WatchMin, WatchMax].
	WatchMin, WatchMax time.Duration
}

// DefaultFaults hit well over 10% of requests and cut every watch within
// a few seconds.
var DefaultFaults = Faults{Error500: 0.04, Error429: 0.03, Error409: 0.04, Error500AfterCommit: 0.02,
	Latency: 0.06, MaxLatency: 400 * time.Millisecond, WatchMin: time.Second, WatchMax: 5 * time.Second}

// Counts are what the proxy did while on.
type Counts struct {
	Requests, E500, E429, E409, AfterCommit, Delayed, WatchesCut atomic.Int64
}

// Proxy authenticates upstream with the upstream config's credentials
// (the admin client certificate), so its clients talk plain HTTP without
// any, and injects faults while On.
type Proxy struct {
	URL    string
	faults Faults
	// N counts what was done.
	N Counts
	// On switches fault injection on (off: a plain proxy).
	On atomic.Bool

	mu  sync.Mutex
	rnd *rand.Rand
	rp  *httputil.ReverseProxy
	srv *http.Server
}

// Start listens on a free port of 127.0.0.1 and proxies to upstream with
// its credentials; seed makes the faults reproducible. It starts off.
func Start(upstream *rest.Config, faults Faults, seed uint64) (*Proxy, error) {
	target, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, err
	}
	tr, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, err
	}
	p := &Proxy{faults: faults, rnd: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      nil,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			// Upstream down (a restart) or a cut watch: a bad gateway, as
			// a real load balancer would answer.
			writeStatus(w, http.StatusBadGateway, metav1.StatusReasonServiceUnavailable, "chaos proxy: upstream: "+err.Error())
		},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.URL = "http://" + l.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func (p *Proxy) float() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rnd.Float64()
}

func (p *Proxy) between(a, b time.Duration) time.Duration {
	return a + time.Duration(p.float()*float64(b-a))
}

// Injected is how many requests got a fault.
func (p *Proxy) Injected() int64 {
	return p.N.E500.Load() + p.N.E429.Load() + p.N.E409.Load() + p.N.AfterCommit.Load() + p.N.Delayed.Load()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.On.Load() {
		p.rp.ServeHTTP(w, r)
		return
	}
	p.N.Requests.Add(1)
	write := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch || r.Method == http.MethodDelete
	watch := r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1"
	f := p.faults
	// Write-only faults take no share of a read's roll.
	e409, after := f.Error409, f.Error500AfterCommit
	if !write {
		e409, after = 0, 0
	}
	roll := p.float()
	switch {
	case roll < f.Error500:
		p.N.E500.Add(1)
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "chaos proxy: injected internal error")
		return
	case roll < f.Error500+f.Error429:
		p.N.E429.Add(1)
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "chaos proxy: injected throttling")
		return
	case roll < f.Error500+f.Error429+e409:
		p.N.E409.Add(1)
		writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict, "chaos proxy: injected conflict, the object has been modified")
		return
	case roll < f.Error500+f.Error429+e409+after:
		p.N.AfterCommit.Add(1)
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "chaos proxy: injected error after the request was applied")
		return
	case roll < f.Error500+f.Error429+e409+after+f.Latency:
		p.N.Delayed.Add(1)
		select {
		case <-time.After(p.between(10*time.Millisecond, f.MaxLatency)):
		case <-r.Context().Done():
			return
		}
	}
	if watch && f.WatchMax > 0 {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		t := time.AfterFunc(p.between(f.WatchMin, f.WatchMax), func() {
			p.N.WatchesCut.Add(1)
			cancel()
		})
		defer t.Stop()
		r = r.WithContext(ctx)
	}
	p.rp.ServeHTTP(w, r)
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg})
}

// Stop closes the proxy.
func (p *Proxy) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	_ = p.srv.Close()
}

// Kubeconfig is a kubeconfig that reaches the API server through the proxy.
func (p *Proxy) Kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: chaos-proxy
  cluster:
    server: %s
users:
- name: anonymous
  user: {}
contexts:
- name: chaos
  context: {cluster: chaos-proxy, user: anonymous}
current-context: chaos
`, p.URL)
}
