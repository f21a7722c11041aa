package controller

import (
	"flag"

	"github.com/krtt-dev/krtt/internal/remote"
)

// BindWorkloadClientFlags defines --workload-client-qps and
// --workload-client-burst on fs, with the words every binary shows; the
// function it returns gives the workload cluster options they set.
func BindWorkloadClientFlags(fs *flag.FlagSet) func() remote.Options {
	qps := fs.Float64("workload-client-qps", remote.DefaultClientQPS,
		"Requests per second of the client of each workload cluster (Cluster API's --clustercache-client-qps); negative: no client-side limit, the workload API server's priority and fairness alone.")
	burst := fs.Int("workload-client-burst", remote.DefaultClientBurst,
		"Burst of the client of each workload cluster above --workload-client-qps (Cluster API's --clustercache-client-burst).")
	return func() remote.Options { return remote.Options{ClientQPS: float32(*qps), ClientBurst: *burst} }
}
