package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// apiServerRequests reads apiserver_request_total from the bench's API
// server (its /metrics, through the admin client) by "verb resource", the
// resource with its API group and subresource, and the HTTP code when it is
// not a success: every request the API server answered, whoever sent it
// (the controller, the simulated provider and kubelets, the bench's
// clients, the API server's own loopback calls such as the PodDisruptionBudget
// list each eviction makes). A phase's share tells what the API server, the
// process that sets the pace, spends its time on.
func apiServerRequests(ctx context.Context, cfg *rest.Config) (requestCounts, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for kube-apiserver's metrics: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("kube-apiserver metrics: %s", resp.Status)
	}
	return parseAPIServerRequests(resp.Body)
}

// parseAPIServerRequests sums apiserver_request_total by request kind (see
// apiServerRequests), e.g. "patch machines.cluster.krtt.dev/status" or
// "delete pods 404".
func parseAPIServerRequests(r io.Reader) (requestCounts, error) {
	out := requestCounts{}
	found, err := scanSamples(r, "apiserver_request_total", func(labels map[string]string, v float64) {
		res := labels["resource"]
		if g := labels["group"]; g != "" {
			res += "." + g
		}
		if s := labels["subresource"]; s != "" {
			res += "/" + s
		}
		k := strings.ToLower(labels["verb"]) + " " + res
		if code, err := strconv.Atoi(labels["code"]); err == nil && code >= 300 {
			k += " " + labels["code"]
		}
		out[k] += v
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no apiserver_request_total in kube-apiserver's metrics")
	}
	return out, nil
}

// kindsPerMachine is perMachine without the kinds that round to 0.
func kindsPerMachine(before, after requestCounts, n int) map[string]float64 {
	out, _ := perMachine(before, after, max(n, 1))
	for k, v := range out {
		if v <= 0 {
			delete(out, k)
		}
	}
	return out
}

// apiServerLine words a phase's API server requests per Machine, largest
// first, those under 0.05 added up at the end.
func apiServerLine(perMachine map[string]float64) string {
	kinds := make([]string, 0, len(perMachine))
	var total, small float64
	for k, v := range perMachine {
		total += v
		if v < 0.05 {
			small += v
			continue
		}
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if perMachine[kinds[i]] != perMachine[kinds[j]] {
			return perMachine[kinds[i]] > perMachine[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, 0, len(kinds)+1)
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%.2f %s", perMachine[k], k))
	}
	if small > 0 {
		parts = append(parts, fmt.Sprintf("%.2f in smaller kinds", small))
	}
	return fmt.Sprintf("%.1f per Machine: %s", total, strings.Join(parts, ", "))
}
