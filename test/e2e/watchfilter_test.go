package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// TestWatchFilterSplitsTheFleet: two operators started with --watch-filter a
// and b each run the Machines and the Cluster labelled for them, through
// Running and deletion, and neither touches the other's nor an unlabelled
// Machine or Cluster: each Cluster's status is written by its own operator
// only, counting the Machines labelled alike. (The values are
// harness.Filter-a and -b.)
func TestWatchFilterSplitsTheFleet(t *testing.T) {
	ms := newManagers(t)
	trA, trB := ms.operator("a"), ms.operator("b")
	ms.sim()
	c := env.Client
	ctx := context.Background()
	ns := localcp.UniqueName("split")
	harness.Must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	// The fixtures label for this package's fleet; the unlabelled Cluster
	// loses its label before any operator here could see it (none watches
	// harness.Filter itself during this test).
	for _, split := range []string{"a", "b", "none"} {
		cl, err := harness.ClusterObjects(ctx, c, ns, "c-"+split, true)
		harness.Must(t, err)
		before := cl.DeepCopy()
		if split == "none" {
			delete(cl.Labels, clusterv1.WatchFilterLabel)
		} else {
			cl.Labels[clusterv1.WatchFilterLabel] = splitFilter(split)
		}
		harness.Must(t, c.Patch(ctx, cl, client.MergeFrom(before)))
	}

	fast := simv1.SimBehavior{ProvisionDelaySeconds: 1, DeleteDelaySeconds: 1}
	labelled := func(split string) func(*clusterv1.Machine) {
		return func(m *clusterv1.Machine) {
			m.Labels = map[string]string{clusterv1.WatchFilterLabel: splitFilter(split)}
		}
	}
	// The unlabelled Machine first: by the time the others are Running, both
	// operators have long had the chance to see it. The fixture labels it
	// for this package's fleet; the label goes before any operator here
	// could see it (none watches harness.Filter itself during this test).
	none, err := harness.MachineObjects(ctx, c, ns, "c-a", "m-none", fast)
	harness.Must(t, err)
	before := none.DeepCopy()
	delete(none.Labels, clusterv1.WatchFilterLabel)
	harness.Must(t, c.Patch(ctx, none, client.MergeFrom(before)))
	_, err = harness.MachineObjects(ctx, c, ns, "c-a", "m-a", fast, labelled("a"))
	harness.Must(t, err)
	_, err = harness.MachineObjects(ctx, c, ns, "c-b", "m-b", fast, labelled("b"))
	harness.Must(t, err)

	machine := func(ctx context.Context, name string) (*clusterv1.Machine, error) {
		m := &clusterv1.Machine{}
		return m, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m)
	}
	for _, name := range []string{"m-a", "m-b"} {
		harness.Await(t, 60*time.Second, name+" Running", func(ctx context.Context) error {
			m, err := machine(ctx, name)
			if err != nil {
				return err
			}
			if m.Status.Phase != clusterv1.MachinePhaseRunning {
				return fmt.Errorf("phase %q, last row %+v", m.Status.Phase, m.Status.LastTransition)
			}
			return nil
		})
	}

	// Each Cluster counts the Machines labelled alike: c-a its m-a, not the
	// unlabelled m-none that names it too.
	for _, name := range []string{"c-a", "c-b"} {
		harness.Await(t, 60*time.Second, name+" counts its Machine", func(ctx context.Context) error {
			cl := &clusterv1.Cluster{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cl); err != nil {
				return err
			}
			if got := cl.Status.Machines; got.Total != 1 || got.Ready != 1 {
				return fmt.Errorf("status.machines %+v, want 1 Machine, Ready", got)
			}
			return nil
		})
	}

	// Each operator fired rows for its own Machine and Cluster only.
	for _, o := range []struct {
		name        string
		tr          *traces
		own, others []string
	}{
		{"a", trA, []string{"m-a", "c-a"}, []string{"m-b", "m-none", "c-b", "c-none"}},
		{"b", trB, []string{"m-b", "c-b"}, []string{"m-a", "m-none", "c-a", "c-none"}},
	} {
		for _, m := range o.own {
			if len(o.tr.of(ns+"/"+m)) == 0 {
				t.Errorf("operator %s fired no row for its %s", o.name, m)
			}
		}
		for _, m := range o.others {
			if rows := o.tr.of(ns + "/" + m); len(rows) > 0 {
				t.Errorf("operator %s fired %d rows for %s, which is not labelled for it (first: %s %s)", o.name, len(rows), m, rows[0].Table, rows[0].Row)
			}
		}
	}
	none, err = machine(ctx, "m-none")
	harness.Must(t, err)
	if _, ok := none.Labels[clusterv1.WatchFilterLabel]; ok {
		t.Errorf("m-none is labelled %v", none.Labels)
	}
	if none.Status.State != "" || len(none.Finalizers) > 0 {
		t.Errorf("the unlabelled Machine was reconciled: state %q, finalizers %v", none.Status.State, none.Finalizers)
	}
	noCluster := &clusterv1.Cluster{}
	harness.Must(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c-none"}, noCluster))
	if noCluster.Status.State != "" || len(noCluster.Status.Conditions) > 0 {
		t.Errorf("the unlabelled Cluster's status was written: state %q, conditions %v", noCluster.Status.State, noCluster.Status.Conditions)
	}

	// Deletion runs on the same split.
	for _, name := range []string{"m-a", "m-b"} {
		harness.Must(t, c.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
	}
	for _, name := range []string{"m-a", "m-b"} {
		harness.Await(t, 60*time.Second, name+" gone", func(ctx context.Context) error {
			m, err := machine(ctx, name)
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			if err == nil {
				return fmt.Errorf("still there: state %q, last row %+v", m.Status.State, m.Status.LastTransition)
			}
			return nil
		})
	}
	for _, tr := range []*traces{trA, trB} {
		for _, m := range []string{"m-none", "c-none"} {
			if rows := tr.of(ns + "/" + m); len(rows) > 0 {
				t.Errorf("a filtered operator fired rows for %s: %s", m, strings.Join([]string{rows[0].Table, rows[0].Row}, " "))
			}
		}
	}
}
