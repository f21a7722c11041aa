package remote

import "testing"

// TestClientLimitDefaults: a workload cluster's client gets Cluster API's
// limits and request timeout unless told otherwise, and a negative QPS (no
// client-side limit) is kept, not replaced by the default.
func TestClientLimitDefaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    Options
		qps   float32
		burst int
	}{
		{"unset", Options{}, DefaultClientQPS, DefaultClientBurst},
		{"set", Options{ClientQPS: 100, ClientBurst: 200}, 100, 200},
		{"no client-side limit", Options{ClientQPS: -1}, -1, DefaultClientBurst},
	} {
		got := tc.in.withDefaults()
		if got.ClientQPS != tc.qps || got.ClientBurst != tc.burst {
			t.Errorf("%s: QPS %v burst %d, want %v and %d", tc.name, got.ClientQPS, got.ClientBurst, tc.qps, tc.burst)
		}
	}
	if got := (Options{}).withDefaults().RequestTimeout; got != DefaultRequestTimeout {
		t.Errorf("request timeout %s by default, want Cluster API's %s", got, DefaultRequestTimeout)
	}
}
