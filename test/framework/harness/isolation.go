package harness

import (
	"context"
	"github.com/krtt-dev/krtt/actions"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// Test packages share one control plane under make test (localcp.ForTest),
// so each keeps to its own objects: every operator and sim a test starts
// here watches only objects labelled cluster.krtt.dev/watch-filter=Filter
// (or a value derived from it), and every fixture here carries that label.

// Filter is this test process's watch-filter value: the test binary's name
// and localcp.RunToken, e.g. features-k3x9q.
var Filter = filterValue()

func filterValue() string {
	base := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	name := b.String()
	if len(name) > 40 {
		name = name[:40]
	}
	if name == "" {
		name = "test"
	}
	return name + "-" + localcp.RunToken()
}

// Label puts the Filter label on o unless it has a watch-filter label
// already, and returns o.
func Label[T client.Object](o T) T {
	l := o.GetLabels()
	if _, ok := l[clusterv1.WatchFilterLabel]; ok {
		return o
	}
	if l == nil {
		l = map[string]string{}
	}
	l[clusterv1.WatchFilterLabel] = Filter
	o.SetLabels(l)
	return o
}

// OperatorOptions are the manager options of an operator that manages only
// the objects labelled filter (actions.WatchFilter: Machines, MachineSets
// and Clusters), as the operator's --watch-filter makes it.
func OperatorOptions(filter string) (ctrl.Options, error) {
	o := ctrl.Options{Controller: ctrlConfig()}
	return o, actions.WatchFilter(&o, filter)
}

// NewSimManager returns a manager running the simulated provider's
// controllers, acting only on objects labelled opts.WatchFilter (Filter when
// empty). Start it as its own process would run.
func NewSimManager(ctx context.Context, cfg *rest.Config, opts sim.Options) (ctrl.Manager, error) {
	if opts.WatchFilter == "" {
		opts.WatchFilter = Filter
	}
	return sim.NewManager(ctx, cfg, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}, Controller: ctrlConfig()}, opts)
}

// labelling is the harness's client: it labels every cluster.krtt.dev and
// sim.krtt.dev object it creates with Filter (unless labelled already), so
// steps that build a Machine or Cluster by hand reach the harness's
// operator as the fixtures' do.
type labelling struct{ client.Client }

func (c labelling) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil && (gvk.Group == clusterv1.GroupVersion.Group || gvk.Group == simv1.GroupVersion.Group) {
		Label(obj)
	}
	return c.Client.Create(ctx, obj, opts...)
}
