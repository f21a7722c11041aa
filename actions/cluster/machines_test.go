package cluster

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
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

// status.workers sums what Cluster API's setWorkersReplicas sums: the
// deployments' and stand-alone sets' spec.replicas, one per stand-alone
// worker Machine; the worker Machines of sets and the stand-alone ones by
// their conditions; control-plane Machines and Machines controlled by
// something else are not counted.
func TestWorkerCounts(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: "c1-uid"}}
	clusterOwned := []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1", UID: "c1-uid"}}
	s := &Scope{Cluster: c}
	mirrorWorkerCounts(s)
	if w := c.Status.Workers; !reflect.DeepEqual(w, clusterv1.ClusterReplicas{}) {
		t.Fatalf("no workers: %+v, want every counter unset", w)
	}
	conds := func(types ...string) []metav1.Condition {
		var out []metav1.Condition
		for _, t := range types {
			out = append(out, metav1.Condition{Type: t, Status: metav1.ConditionTrue})
		}
		return out
	}
	machine := func(name, controllerKind string, cp bool, ready ...string) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		m.Status.Conditions = conds(ready...)
		if controllerKind != "" {
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: controllerKind, Name: "x", UID: "x", Controller: ptr.To(true)}}
		} else {
			m.OwnerReferences = clusterOwned
		}
		if cp {
			m.Labels[clusterv1.ControlPlaneLabel] = ""
		}
		return m
	}
	md := clusterv1.MachineDeployment{}
	md.Spec.Replicas = ptr.To[int32](3)
	ms := clusterv1.MachineSet{}
	ms.Spec.Replicas = ptr.To[int32](2)
	s.MachineDeployments, s.StandaloneSets = []clusterv1.MachineDeployment{md}, []clusterv1.MachineSet{ms}
	s.Machines = []*clusterv1.Machine{
		machine("d1", "MachineSet", false, clusterv1.ReadyCondition, clusterv1.AvailableCondition, clusterv1.UpToDateCondition),
		machine("d2", "MachineSet", false, clusterv1.ReadyCondition),
		machine("s1", "MachineSet", false),
		machine("alone", "", false, clusterv1.ReadyCondition, clusterv1.AvailableCondition),
		machine("cp", "", true, clusterv1.ReadyCondition),
		machine("pool", "MachinePool", false, clusterv1.ReadyCondition),
	}
	for _, m := range s.Machines {
		m.Spec.Version = "v1.37.0"
	}
	s.Machines[0].Spec.Version = "v1.37.1"
	mirrorWorkerCounts(s)
	got := c.Status.Workers
	// The control-plane Machine and the pool's are not workers here.
	if v := fmt.Sprint(got.Versions); v != "[{v1.37.0 3} {v1.37.1 1}]" {
		t.Errorf("worker versions %s", v)
	}
	want := "desired 6 replicas 4 ready 3 available 2 upToDate 1"
	if g := fmt.Sprintf("desired %d replicas %d ready %d available %d upToDate %d", *got.DesiredReplicas, *got.Replicas,
		*got.ReadyReplicas, *got.AvailableReplicas, *got.UpToDateReplicas); g != want {
		t.Errorf("%s, want %s", g, want)
	}
}
