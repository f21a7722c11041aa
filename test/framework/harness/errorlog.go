package harness

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
)

// ErrorLog keeps every error the operator logs, whatever the log level the
// tests print, with the key/value pairs of its logger, so a scenario can
// ask whether anything about its own objects was logged as an error: the
// ERROR lines a user of `make run` would see.
type ErrorLog struct {
	mu      sync.Mutex
	entries []LoggedError
}

// LoggedError is one error log line.
type LoggedError struct {
	Msg string
	Err error
	// KeysAndValues are the logger's and the call's, in order.
	KeysAndValues []any
}

func (e LoggedError) String() string {
	return fmt.Sprintf("%s: %v %v", e.Msg, e.Err, e.KeysAndValues)
}

// About returns the errors logged about objects of namespace ns: those
// whose logger or call names it (controller-runtime's reconcile logger
// carries "namespace" and the object as namespace/name).
func (l *ErrorLog) About(ns string) []LoggedError {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []LoggedError
	for _, e := range l.entries {
		for i := 1; i < len(e.KeysAndValues); i += 2 {
			v := fmt.Sprint(e.KeysAndValues[i])
			if v == ns || strings.HasPrefix(v, ns+"/") {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func (l *ErrorLog) add(e LoggedError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

// recordingSink passes every call on to inner and records the errors.
type recordingSink struct {
	inner logr.LogSink
	log   *ErrorLog
	kv    []any
}

func (s recordingSink) Init(info logr.RuntimeInfo) { s.inner.Init(info) }

func (s recordingSink) Enabled(level int) bool { return s.inner.Enabled(level) }

func (s recordingSink) Info(level int, msg string, kv ...any) { s.inner.Info(level, msg, kv...) }

func (s recordingSink) Error(err error, msg string, kv ...any) {
	s.log.add(LoggedError{Msg: msg, Err: err, KeysAndValues: append(slices.Clone(s.kv), kv...)})
	s.inner.Error(err, msg, kv...)
}

func (s recordingSink) WithValues(kv ...any) logr.LogSink {
	return recordingSink{inner: s.inner.WithValues(kv...), log: s.log, kv: append(slices.Clone(s.kv), kv...)}
}

func (s recordingSink) WithName(name string) logr.LogSink {
	return recordingSink{inner: s.inner.WithName(name), log: s.log, kv: s.kv}
}

func (s recordingSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.inner.(logr.CallDepthLogSink); ok {
		return recordingSink{inner: cd.WithCallDepth(depth), log: s.log, kv: s.kv}
	}
	return s
}

// Recording returns a logger that writes through base and records its
// errors in l.
func (l *ErrorLog) Recording(base logr.Logger) logr.Logger {
	inner := base.GetSink()
	if cd, ok := inner.(logr.CallDepthLogSink); ok {
		// The lines name their caller, not this sink.
		inner = cd.WithCallDepth(1)
	}
	return logr.New(recordingSink{inner: inner, log: l})
}
