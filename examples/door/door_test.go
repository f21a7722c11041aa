package door

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/engine"
)

var (
	cfg    *envtest.Environment
	scheme = runtime.NewScheme()
	cl     client.Client
	// fired collects every row the controller fires, published once its
	// patch landed.
	fired traces
)

type traces struct {
	mu  sync.Mutex
	all []engine.Trace
}

func (t *traces) add(tr engine.Trace) { t.mu.Lock(); t.all = append(t.all, tr); t.mu.Unlock() }

func (t *traces) of(object string) []engine.Trace {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []engine.Trace
	for _, tr := range t.all {
		if tr.Object == object && tr.Unwritten == "" {
			out = append(out, tr)
		}
	}
	return out
}

// TestMain starts an API server (envtest, with the binaries krtt's make
// tools builds into bin/k8s) and the Door controller in a manager.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets, _ = filepath.Abs("../../bin/k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			fmt.Fprintf(os.Stderr, "door tests need kube-apiserver and etcd in KUBEBUILDER_ASSETS (%s): %v\n"+
				"run `make tools` in the krtt checkout, or set KUBEBUILDER_ASSETS\n", assets, err)
			return 1
		}
	}
	_ = clientgoscheme.AddToScheme(scheme)
	_ = AddToScheme(scheme)
	cfg = &envtest.Environment{CRDDirectoryPaths: []string{"testdata"}, ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets, Scheme: scheme}
	rc, err := cfg.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		return 1
	}
	defer func() { _ = cfg.Stop() }()
	ctrl.SetLogger(logr.Discard())
	mgr, err := ctrl.NewManager(rc, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err == nil {
		err = Setup(mgr, Options{Traces: fired.add})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "setting up the Door controller: %v\n", err)
		return 1
	}
	cl = mgr.GetClient()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	defer func() { cancel(); <-done }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		fmt.Fprintln(os.Stderr, "the manager's cache did not sync")
		return 1
	}
	return m.Run()
}

// eventually polls cond until it holds or 30s have passed.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func get(name string) (*Door, error) {
	d := &Door{}
	return d, cl.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, d)
}

// waitFor waits until the Door is in state with the DoorOpen condition's
// reason (empty: no condition) and the rest holds.
func waitFor(t *testing.T, name, state, reason string, more func(*Door) error) *Door {
	t.Helper()
	var d *Door
	eventually(t, fmt.Sprintf("%s in %s (%s)", name, state, reason), func() error {
		var err error
		if d, err = get(name); err != nil {
			return err
		}
		c := meta.FindStatusCondition(d.Status.Conditions, "DoorOpen")
		got := ""
		if c != nil {
			got = c.Reason
		}
		if d.Status.State != state || got != reason {
			return fmt.Errorf("state %q reason %q, status %+v", d.Status.State, got, d.Status)
		}
		if more != nil {
			return more(d)
		}
		return nil
	})
	return d
}

// update changes the Door's spec, retrying on conflicts with the
// controller's own writes.
func update(t *testing.T, name string, change func(*DoorSpec)) {
	t.Helper()
	eventually(t, "update "+name, func() error {
		d, err := get(name)
		if err != nil {
			return err
		}
		change(&d.Spec)
		return cl.Update(context.Background(), d)
	})
}

func bell(name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, cl.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: BellName(name)}, cm)
}

// TestDoorLifecycle walks the Door through every state of its tables:
// Pending, Closed, Open (closed by hand, then by its timeout), Deleting
// and Gone.
func TestDoorLifecycle(t *testing.T) {
	ctx := context.Background()
	d := &Door{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "front"}}
	if err := cl.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "front", "Closed", "", func(d *Door) error {
		if !slices.Contains(d.Finalizers, Finalizer) {
			return fmt.Errorf("no finalizer: %v", d.Finalizers)
		}
		return nil
	})

	update(t, "front", func(s *DoorSpec) { s.Open = true })
	waitFor(t, "front", "Open", "Opened", func(d *Door) error {
		if d.Status.OpenedAt == nil || d.Status.OpenedBy != "door-controller" || d.Status.Phase != "Open" {
			return fmt.Errorf("status %+v", d.Status)
		}
		cm, err := bell("front")
		if err != nil {
			return err
		}
		if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != d.UID {
			return fmt.Errorf("the bell is not owned by the Door: %v", cm.OwnerReferences)
		}
		return nil
	})

	update(t, "front", func(s *DoorSpec) { s.Open = false })
	waitFor(t, "front", "Closed", "Closed", func(d *Door) error {
		if d.Status.OpenedAt != nil {
			return fmt.Errorf("openedAt %v left", d.Status.OpenedAt)
		}
		return nil
	})

	// The timed wait: nothing else happens, the kit wakes the Door at its
	// deadline and the engine's openTooLong fact closes it.
	// Open lasts a second, too short to be sure to see: AutoClosed, which
	// only the Open state's timeout row writes, says it was open.
	update(t, "front", func(s *DoorSpec) { s.Open, s.AutoCloseSeconds = true, 1 })
	waitFor(t, "front", "Closed", "AutoClosed", func(d *Door) error {
		if d.Spec.Open {
			return fmt.Errorf("spec.open still true")
		}
		return nil
	})

	if err := cl.Delete(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "front deleted", func() error {
		if _, err := get("front"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Door is still there (%v)", err)
		}
		if _, err := bell("front"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the bell is still there (%v)", err)
		}
		return nil
	})

	set, err := Tables()
	if err != nil {
		t.Fatal(err)
	}
	visited := map[string]bool{}
	rows := map[string]bool{}
	eventually(t, "every state visited", func() error {
		for _, tr := range fired.of("default/front") {
			visited[tr.From], visited[tr.To], rows[tr.Row] = true, true, true
		}
		for _, st := range set.States {
			if !visited[st.Name] {
				return fmt.Errorf("state %s never visited; rows fired: %v", st.Name, rows)
			}
		}
		return nil
	})
	for _, row := range []string{"P01", "C01", "O01", "O02", "G02", "D01", "D02"} {
		if !rows[row] {
			t.Errorf("row %s never fired; fired: %v", row, rows)
		}
	}
}

// TestFinalizerSavedBeforeBell: a Door created open gets its finalizer
// (a pure action) saved before the bell (a write-through action) is
// written, so no bell exists on a Door that could go without deleting it.
// The path stops after the finalizer row; opening is a reconcile of its own.
func TestFinalizerSavedBeforeBell(t *testing.T) {
	d := &Door{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "back"}, Spec: DoorSpec{Open: true}}
	if err := cl.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	d = waitFor(t, "back", "Open", "Opened", nil)
	// The reconcile that opened it started in Closed: its path (via, then
	// the last row) begins with C01, never with the finalizer's P01.
	lt := d.Status.LastTransition
	if lt == nil {
		t.Fatal("no lastTransition")
	}
	path := []string{}
	for _, v := range lt.Via {
		path = append(path, v.Row)
	}
	path = append(path, lt.Row)
	if path[0] != "C01" {
		t.Fatalf("the reconcile that opened the Door went %v: want it to start at C01, after the finalizer's own reconcile", path)
	}
	var order []string
	for _, tr := range fired.of("default/back") {
		order = append(order, tr.Row)
	}
	if len(order) < 2 || order[0] != "P01" || order[1] != "C01" {
		t.Fatalf("rows fired %v, want P01 then C01", order)
	}
}
