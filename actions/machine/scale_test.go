package machine

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// A Machine reconcile must cost the same whatever the size of the fleet in
// the cache. Memory allocated, unlike time, is the same on a busy machine
// and a quiet one, so the test compares it: counting a Cluster's control
// plane with 10,000 cached Machines may allocate at most 1.5 times the bytes
// it does with 100 (a scan of the namespace allocates a slice of all of it).
func TestControlPlaneCountDoesNotGrowWithTheFleet(t *testing.T) {
	small := controlPlaneCountBytes(t, 100)
	large := controlPlaneCountBytes(t, 10_000)
	t.Logf("bytes allocated per count: %.0f with 100 cached Machines, %.0f with 10,000", small, large)
	if large > 1.5*small {
		t.Errorf("counting the control plane allocates %.0f bytes with 10,000 cached Machines against %.0f with 100: its cost grows with the fleet", large, small)
	}
}

// controlPlaneCountAllocs fills a real controller-runtime cache (its
// informers fed from memory, with the indexes Setup registers) with n
// worker Machines of one Cluster and 3 control-plane ones, and measures one
// worker's control-plane count.
func controlPlaneCountBytes(t *testing.T, n int) float64 {
	t.Helper()
	list := &clusterv1.MachineList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range n + 3 {
		m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: fmt.Sprintf("m%d", i), ResourceVersion: "1",
			UID: types.UID(fmt.Sprint("uid-", i)), Labels: map[string]string{clusterv1.ClusterNameLabel: "c"}}}
		m.Spec.ClusterName = "c"
		if i < 3 {
			m.Labels[clusterv1.ControlPlaneLabel] = ""
		}
		list.Items = append(list.Items, m)
	}
	c := memoryCache(t, list)
	// The observer the manager's path builds (a watcher given), so the
	// test fails if that path stops using the index.
	o := newObserver(explainedSet(t), readFrom{r: c}, nil, reconciler.NewKindWatcher(&clusterv1.Machine{}))
	s := &Scope{Machine: &list.Items[len(list.Items)-1]}
	ctx := context.Background()
	o.countControlPlaneMachines(ctx, s)
	if s.Err != nil || s.ControlPlaneMachines != 3 {
		t.Fatalf("with %d workers: counted %d control-plane Machines (err %v), want 3", n, s.ControlPlaneMachines, s.Err)
	}
	const runs = 50
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range runs {
		o.countControlPlaneMachines(ctx, &Scope{Machine: s.Machine})
	}
	goruntime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / runs
}

// memoryCache is a controller-runtime cache whose Machine informer lists
// the given Machines from memory instead of an API server, with the Machine
// indexes of the manager's path.
func memoryCache(t *testing.T, machines *clusterv1.MachineList) client.Reader {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	gvk := clusterv1.GroupVersion.WithKind("Machine")
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(gvk, meta.RESTScopeNamespace)
	lw := &toolscache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) { return machines.DeepCopy(), nil },
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				// No streaming list here: the reflector falls back to List.
				return nil, errors.New("streaming lists are not served from memory")
			}
			return watch.NewFake(), nil
		},
	}
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{
		Scheme: scheme, Mapper: mapper,
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, ix := range machineIndexes() {
		if err := c.IndexField(ctx, ix.Object, ix.Field, ix.Extract); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if _, err := c.GetInformer(ctx, &clusterv1.Machine{}); err != nil {
		t.Fatal(err)
	}
	syncCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if !c.WaitForCacheSync(syncCtx) {
		t.Fatal("the in-memory cache did not sync")
	}
	return c
}

// readFrom is a client whose reads come from r; the count and the mappers
// only read.
type readFrom struct {
	client.Client
	r client.Reader
}

func (l readFrom) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return l.r.Get(ctx, key, obj, opts...)
}

func (l readFrom) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return l.r.List(ctx, list, opts...)
}

// failingSetReads fails every MachineSet read as a cache that cannot answer
// would.
type failingSetReads struct{ client.Client }

func (f failingSetReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*clusterv1.MachineSet); ok {
		return errors.New("the cache did not answer")
	}
	return f.Client.Get(ctx, key, obj, opts...)
}

// The owners are read for the rollout's conditions only: an error reading
// them is kept apart (OwnersErr) and is no API error of the Machine, which
// would hold its lifecycle (row E02).
func TestOwnersReadErrorHoldsNothing(t *testing.T) {
	m := testMachine("default", nil)
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: "ms", UID: "ms-uid", Controller: ptr.To(true)}}
	s := &Scope{Machine: m}
	(&Observer{Client: failingSetReads{}}).getOwners(context.Background(), s)
	if s.Err != nil || s.OwnersErr == nil || !strings.Contains(s.OwnersErr.Error(), "get MachineSet ms") {
		t.Errorf("Err %v, OwnersErr %v; want only OwnersErr, naming the MachineSet", s.Err, s.OwnersErr)
	}
	if s.Set != nil {
		t.Error("a set that could not be read is the Machine's set")
	}
	// UpToDate says so, Unknown, as Cluster API's InternalError.
	mirrorUpToDate(s)
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.UpToDateCondition)
	if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != "InternalError" || !strings.Contains(c.Message, "get MachineSet ms") {
		t.Errorf("UpToDate %+v, want Unknown InternalError naming the MachineSet", c)
	}
}
