package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// requestCounts is client-go's rest_client_requests_total summed by HTTP
// method (GET also counts LISTs and WATCHes: client-go labels by method),
// or krtt_api_requests_total summed by verb and resource.
type requestCounts map[string]float64

// parseRequests reads a Prometheus text exposition and sums
// rest_client_requests_total by its method label.
func parseRequests(r io.Reader) (requestCounts, error) {
	byHost, err := parseRequestsByHost(r)
	if err != nil {
		return nil, err
	}
	return byHost.total(), nil
}

// hostRequests is rest_client_requests_total by host label (the API server
// a request went to), then by method.
type hostRequests map[string]requestCounts

// total sums every host.
func (h hostRequests) total() requestCounts {
	out := requestCounts{}
	for _, counts := range h {
		for m, v := range counts {
			out[m] += v
		}
	}
	return out
}

// except sums every host but one (the management cluster: what is left
// went to workload clusters).
func (h hostRequests) except(host string) requestCounts {
	out := requestCounts{}
	for hh, counts := range h {
		if hh == host {
			continue
		}
		for m, v := range counts {
			out[m] += v
		}
	}
	return out
}

// parseRequestsByHost reads a Prometheus text exposition and sums
// rest_client_requests_total by its host and method labels.
func parseRequestsByHost(r io.Reader) (hostRequests, error) {
	out := hostRequests{}
	found, err := scanSamples(r, "rest_client_requests_total", func(labels map[string]string, v float64) {
		method := labels["method"]
		if method == "" {
			method = "?"
		}
		host := labels["host"]
		if out[host] == nil {
			out[host] = requestCounts{}
		}
		out[host][method] += v
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("no rest_client_requests_total in the metrics (is client-go's metrics adapter registered?)")
	}
	return out, nil
}

// parseKinds sums krtt_api_requests_total by "verb resource" (with
// "/subresource" when there is one), e.g. "patch machines.cluster.krtt.dev/status".
// A controller that does not export it (Cluster API, krtt before the
// counter) has none: the map is empty, not an error.
func parseKinds(r io.Reader) (requestCounts, error) {
	out := requestCounts{}
	_, err := scanSamples(r, "krtt_api_requests_total", func(labels map[string]string, v float64) {
		k := labels["verb"] + " " + labels["resource"]
		if s := labels["subresource"]; s != "" {
			k += "/" + s
		}
		out[k] += v
	})
	return out, err
}

// parseRows sums krtt_transitions_total by "controller table row outcome":
// which rows a controller fired how often (what each request paid for).
func parseRows(r io.Reader) (requestCounts, error) {
	out := requestCounts{}
	_, err := scanSamples(r, "krtt_transitions_total", func(labels map[string]string, v float64) {
		out[labels["controller"]+" "+labels["table"]+" "+labels["row"]+" "+labels["outcome"]] += v
	})
	return out, err
}

// parseReconciles sums controller-runtime's controller_runtime_reconcile_total
// by "controller result": how often each controller reconciled (krtt and
// Cluster API both export it), whatever the rows did.
func parseReconciles(r io.Reader) (requestCounts, error) {
	out := requestCounts{}
	_, err := scanSamples(r, "controller_runtime_reconcile_total", func(labels map[string]string, v float64) {
		if v != 0 {
			out[labels["controller"]+" "+labels["result"]] += v
		}
	})
	return out, err
}

// scanSamples calls fn with the labels and value of every sample of the
// metric in a Prometheus text exposition; found says whether there was one.
func scanSamples(r io.Reader, metric string, fn func(labels map[string]string, v float64)) (found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		found = true
		_, labels, _ := strings.Cut(line, "{")
		labels, value, ok := strings.Cut(labels, "} ")
		if !ok {
			return found, fmt.Errorf("metrics line %q: no value", line)
		}
		// A sample may carry a timestamp after the value.
		value, _, _ = strings.Cut(strings.TrimSpace(value), " ")
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return found, fmt.Errorf("metrics line %q: %w", line, err)
		}
		m := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(kv, "="); ok {
				m[k] = strings.Trim(val, `"`)
			}
		}
		fn(m, v)
	}
	return found, sc.Err()
}

// perMachine is (after-before)/n by method, and the total.
func perMachine(before, after requestCounts, n int) (map[string]float64, float64) {
	out := map[string]float64{}
	total := 0.0
	for m, v := range after {
		d := v - before[m]
		if d == 0 {
			continue
		}
		out[m] = round2(d / float64(n))
		total += d
	}
	return out, round2(total / float64(n))
}

// verbOrder is the column order of the tables; methods not listed follow
// alphabetically.
var verbOrder = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// verbs lists the methods that appear in any of the maps, in table order.
func verbs(maps ...map[string]float64) []string {
	present := map[string]bool{}
	for _, m := range maps {
		for k, v := range m {
			if v != 0 {
				present[k] = true
			}
		}
	}
	var out []string
	for _, v := range verbOrder {
		if present[v] {
			out = append(out, v)
			delete(present, v)
		}
	}
	var extra []string
	for v := range present {
		extra = append(extra, v)
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// cpuSeconds reads utime+stime of a process (USER_HZ is 100 on Linux).
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(raw))
}

// parseStatCPU takes utime and stime from a /proc/PID/stat line. The
// command name is parenthesised and may hold spaces, so fields are counted
// from the last ')': state is field 3, utime 14, stime 15.
func parseStatCPU(s string) (float64, error) {
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	ut, err1 := strconv.ParseFloat(fields[11], 64)
	st, err2 := strconv.ParseFloat(fields[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (ut + st) / 100, nil
}

// peakRSSKiB reads VmHWM (KiB) of a process.
func peakRSSKiB(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

// loadAverage is the 1-minute load average of the machine (0 when
// /proc/loadavg cannot be read: it is context, not a figure).
func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(raw))
	if len(fields) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(fields[0], 64)
	return v
}
