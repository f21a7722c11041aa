package cluster

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func cachedMachines(t testing.TB, n int) toolscache.Indexer {
	t.Helper()
	ix := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{machinesByCluster: machineClusterKey})
	add := func(ns, cluster, name string) {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}}}
		if err := ix.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		add("fleet", "big", fmt.Sprintf("m-%05d", i))
	}
	// The same Cluster name in another namespace, another Cluster, and a
	// Machine of no Cluster are not big's.
	add("other", "big", "o-1")
	add("fleet", "small", "s-1")
	if err := ix.Add(&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "loose"}}); err != nil {
		t.Fatal(err)
	}
	return ix
}

// A Cluster's Machines come from the informer's index as the cached
// objects: counting 10,000 costs a slice of pointers, not a copy of each
// Machine (as a cache List does, even without a deep copy).
func TestIndexedMachinesReadsTheCachedObjects(t *testing.T) {
	const n = 10000
	read := IndexedMachines(cachedMachines(t, n))
	ctx := context.Background()
	got, err := read(ctx, client.ObjectKey{Namespace: "fleet", Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d Machines of fleet/big, want %d", len(got), n)
	}
	if small, _ := read(ctx, client.ObjectKey{Namespace: "fleet", Name: "small"}); len(small) != 1 || small[0].Name != "s-1" {
		t.Errorf("fleet/small: %v, want s-1", small)
	}
	if none, _ := read(ctx, client.ObjectKey{Namespace: "fleet", Name: "nope"}); len(none) != 0 {
		t.Errorf("fleet/nope: %d Machines, want none", len(none))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 10
	for range runs {
		if _, err := read(ctx, client.ObjectKey{Namespace: "fleet", Name: "big"}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perMachine := float64(after.TotalAlloc-before.TotalAlloc) / runs / n
	// A copy of each would be at least the size of a Machine.
	if size := float64(unsafe.Sizeof(clusterv1.Machine{})); perMachine >= size/4 {
		t.Errorf("reading %d Machines allocated %.0f bytes per Machine; a Machine is %.0f bytes: they are copied", n, perMachine, size)
	}
}

// MachinesReady names the first three not-Ready Machines by name, whatever
// order the cache hands them in, and counts the rest.
func TestMachinesReadyNamesTheFirstThreeNotReady(t *testing.T) {
	ready := []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue}}
	s := &Scope{Cluster: &clusterv1.Cluster{}}
	for _, name := range []string{"m-7", "m-2", "m-9", "m-1", "m-5", "m-3"} {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if name == "m-5" {
			m.Status.Conditions = ready
		}
		s.Machines = append(s.Machines, m)
	}
	mirrorMachines(s)
	c := meta.FindStatusCondition(s.Cluster.Status.Conditions, MachinesReadyCondition)
	if c == nil {
		t.Fatal("no MachinesReady condition")
	}
	if want := "5 of 6 Machines are not Ready: m-1, m-2, m-3, and 2 more"; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	if got := s.Cluster.Status.Machines; got.Total != 6 || got.Ready != 1 {
		t.Errorf("counts %+v", got)
	}
}
