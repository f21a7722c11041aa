package harness

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/krtt-dev/krtt/engine"
)

// WriteAudit checks every request the operator sends from inside an
// action against the action's markers (engine.Pure, engine.WritesThrough),
// which let the controller kit decide again without a new observation.
// A marker that lies makes the kit decide on facts that are no longer
// true, and nothing else would notice: a Pure action must send no write at
// all; a WritesThrough action must not write the object it is reconciling
// (the kit's patch does that; a write of its own would leave the observed
// copy stale).
type WriteAudit struct {
	mu sync.Mutex
	// plural names the resource each table set reconciles, to recognise a
	// write of the reconciled object itself.
	plural     map[string]string
	violations []string
	// through counts the writes of WritesThrough actions by action, which
	// shows the audit sees the actions' requests at all.
	through map[string]int
}

// NewWriteAudit audits actions of the sets named in plural (set name →
// resource of the object it reconciles).
func NewWriteAudit(plural map[string]string) *WriteAudit {
	return &WriteAudit{plural: plural, through: map[string]int{}}
}

// Wrap is a rest.Config WrapTransport.
func (a *WriteAudit) Wrap(rt http.RoundTripper) http.RoundTripper {
	return auditTransport{next: rt, audit: a}
}

type auditTransport struct {
	next  http.RoundTripper
	audit *WriteAudit
}

func (t auditTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.audit.check(req)
	return t.next.RoundTrip(req)
}

func (a *WriteAudit) check(req *http.Request) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return
	}
	ra, ok := engine.RunningActionOf(req.Context())
	if !ok || (!ra.Pure && !ra.WritesThrough) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case ra.Pure:
		a.violations = append(a.violations, fmt.Sprintf("%s action %s (marked Pure) for %s sent %s %s",
			ra.Set, ra.Action, ra.Object, req.Method, req.URL.Path))
	case a.writesItself(ra, req.URL.Path):
		a.violations = append(a.violations, fmt.Sprintf("%s action %s (marked WritesThrough) wrote the object it reconciles, %s: %s %s",
			ra.Set, ra.Action, ra.Object, req.Method, req.URL.Path))
	default:
		a.through[ra.Set+" "+ra.Action]++
	}
}

// writesItself: the path names the reconciled object (or its status).
func (a *WriteAudit) writesItself(ra engine.RunningAction, path string) bool {
	plural, ok := a.plural[ra.Set]
	ns, name, found := strings.Cut(ra.Object, "/")
	if !ok || !found {
		return false
	}
	own := "/namespaces/" + ns + "/" + plural + "/" + name
	return strings.HasSuffix(path, own) || strings.HasSuffix(path, own+"/status")
}

// Violations lists every write that broke an action's marker.
func (a *WriteAudit) Violations() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.violations...)
}

// WritesThrough lists, sorted, the write-through actions seen writing and
// how often.
func (a *WriteAudit) WritesThrough() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.through))
	for k, n := range a.through {
		out = append(out, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(out)
	return out
}
