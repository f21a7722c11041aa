package actions

import (
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// apiRequestsTotal counts the operator's API requests the way the API
// server names them (verb, resource, subresource), which client-go's
// rest_client_requests_total (by HTTP method and host only) cannot tell:
// it is how the bench shows where an operator's writes per Machine go.
var (
	apiRequestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "krtt_api_requests_total",
		Help: "API requests sent by the operator, by API verb (get, list, watch, create, patch, …), resource and subresource.",
	}, []string{"verb", "resource", "subresource"})
	registerRequests sync.Once
)

// CountRequests makes every client built from cfg count its requests in
// krtt_api_requests_total (registered with controller-runtime's registry,
// which the manager's metrics endpoint serves). Counting is a map lookup
// per request; nothing is read from the bodies.
func CountRequests(cfg *rest.Config) {
	registerRequests.Do(func() { metrics.Registry.MustRegister(apiRequestsTotal) })
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return countingTransport{next: rt}
	}
}

type countingTransport struct{ next http.RoundTripper }

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	verb, resource, sub := RequestKind(req.Method, req.URL.Path, req.URL.Query().Get("watch"))
	apiRequestsTotal.WithLabelValues(verb, resource, sub).Inc()
	return t.next.RoundTrip(req)
}

// RequestKind names a request as the API server's request info does: the
// verb (a GET of a collection is list, or watch with ?watch=true), the
// resource (group-qualified unless core: "machines.cluster.krtt.dev") and
// the subresource. Paths that are not resources (discovery, /version) are
// verb and the path's first segment.
func RequestKind(method, path, watch string) (verb, resource, subresource string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:] // api, v1
	case len(parts) >= 3 && parts[0] == "apis":
		group = parts[1]
		parts = parts[3:] // apis, group, version
	default:
		return strings.ToLower(method), "/" + parts[0], ""
	}
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:] // namespaces/NAME/<resource>…, not a Namespace's own subresource
	}
	if len(parts) == 0 {
		return strings.ToLower(method), "discovery", ""
	}
	resource = parts[0]
	if group != "" {
		resource += "." + group
	}
	named := len(parts) >= 2
	if len(parts) >= 3 {
		subresource = parts[2]
	}
	switch method {
	case http.MethodGet:
		switch {
		case watch == "true" || watch == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(method)
	}
	return verb, resource, subresource
}
