package localcp

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections on 127.0.0.1 to an API server (TLS passes
// through untouched, so clients keep trusting its certificate). Cut takes the
// API server away from the proxy's clients as its death would: the listener
// closes (new connections are refused) and every open connection drops;
// Restore listens again on the same address.
type Proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

// NewProxy starts a proxy to target (host:port) on a free port.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Cut refuses new connections and drops the open ones until Restore.
func (p *Proxy) Cut() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return errors.New("localcp: the proxy is cut already")
	}
	err := p.ln.Close()
	p.ln = nil
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	return err
}

// Restore listens again on the same address after Cut.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	cut := p.ln == nil
	p.mu.Unlock()
	if !cut {
		return errors.New("localcp: the proxy is not cut")
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serve(ln)
	return nil
}

// Close stops the proxy for good.
func (p *Proxy) Close() error {
	p.mu.Lock()
	cut := p.ln == nil
	p.mu.Unlock()
	if cut {
		return nil
	}
	return p.Cut()
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

// forward copies both ways until either side closes or Cut drops both.
func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut meanwhile
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}
