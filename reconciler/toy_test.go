package reconciler

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/krtt-dev/krtt/api/kit"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	krttpoll "github.com/krtt-dev/krtt/test/framework/poll"
)

// The toy controller: a Door (a test CRD, read only as unstructured) opens
// and closes as its spec asks. It is a second controller on the kit made of
// tables, facts, status setters and an observer only: no reconcile code.

var doorGVK = schema.GroupVersionKind{Group: "toy.krtt.dev", Version: "v1", Kind: "Door"}

const doorTables = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: door}
spec:
  registry: door
  initialState: Closed
  hitPolicy: first
  states:
    - {name: Closed, phase: Closed, description: shut}
    - {name: Open, phase: Open, description: open}
    - {name: Gone, phase: Gone, terminal: true, description: the door was removed}
  conditions:
    - {type: DoorOpen, description: the door is open}
  statusFields:
    - {name: openedBy, description: status.openedBy}
  facts:
    - {name: found, type: bool, description: the Door exists}
    - {name: wantOpen, type: bool, description: spec.open}
  rows:
    - {id: T01, observed: "-", trigger: gone, action: nothing, resulting: "-", from: [Closed], when: {found: false}}
    - {id: T06, observed: "-", trigger: gone, action: nothing, resulting: Gone, from: [Open], when: {found: false}, then: {state: Gone}}
    - id: T02
      observed: Closed
      trigger: spec.open
      action: open it
      resulting: Open
      from: [Closed]
      when: {wantOpen: true}
      do: [Label]
      then:
        state: Open
        status: {openedBy: krtt}
        conditions: [{type: DoorOpen, status: "True", reason: Opened, message: "opened"}]
    - id: T03
      observed: Open
      trigger: not spec.open
      action: close it
      resulting: Closed
      from: [Open]
      when: {wantOpen: false}
      then:
        state: Closed
        conditions: [{type: DoorOpen, status: "False", reason: Closed, message: "closed"}]
    - {id: T04, observed: any, trigger: as wanted, action: nothing, resulting: "-", from: [Closed], when: {wantOpen: false}}
    - {id: T05, observed: any, trigger: as wanted, action: nothing, resulting: "-", from: [Open], when: {wantOpen: true}}
`

type door struct{ obj *unstructured.Unstructured }

func newDoor() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(doorGVK)
	return u
}

func doorRegistry() *engine.Registry[*door] {
	return doorRegistryLabeling(func(_ context.Context, d *door) engine.Outcome {
		labels := d.obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["toy.krtt.dev/opened"] = "yes"
		d.obj.SetLabels(labels)
		return engine.OK()
	})
}

// doorRegistryLabeling is the door's registry with label as its Label
// action.
func doorRegistryLabeling(label engine.ActionFunc[*door]) *engine.Registry[*door] {
	r := engine.NewRegistry[*door]("door")
	r.Bool("found", func(d *door) bool { return d.obj != nil })
	r.Bool("wantOpen", func(d *door) bool {
		if d.obj == nil {
			return false
		}
		v, _, _ := unstructured.NestedBool(d.obj.Object, "spec", "open")
		return v
	})
	r.Action("Label", "label the door in memory; the kit patches it", label)
	r.StatusField("openedBy", "", func(d *door, v string) {
		_ = unstructured.SetNestedField(d.obj.Object, v, "status", "openedBy")
	})
	return r
}

// doorStatus is the Door's status as the kit sees it: the kit's record and
// the conditions, read and written as unstructured fields.
func doorStatus(u *unstructured.Unstructured) kit.Status { return doorView{u} }

type doorView struct{ u *unstructured.Unstructured }

func (d doorView) GetRecord() kit.Record {
	u := d.u
	st, _, _ := unstructured.NestedString(u.Object, "status", "state")
	ph, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	rec := kit.Record{State: st, Phase: ph, ObservedGeneration: og}
	if row, ok, _ := unstructured.NestedString(u.Object, "status", "lastRow"); ok {
		rec.LastTransition = &kit.LastTransition{Row: row}
	}
	return rec
}

func (d doorView) SetRecord(rec kit.Record) {
	u := d.u
	_ = unstructured.SetNestedField(u.Object, rec.State, "status", "state")
	_ = unstructured.SetNestedField(u.Object, rec.Phase, "status", "phase")
	_ = unstructured.SetNestedField(u.Object, rec.ObservedGeneration, "status", "observedGeneration")
	if rec.LastTransition != nil {
		_ = unstructured.SetNestedField(u.Object, rec.LastTransition.Row, "status", "lastRow")
	}
}

func (d doorView) GetConditions() []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(d.u.Object, "status", "conditions")
	var out []metav1.Condition
	for _, c := range raw {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		var cond metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond) == nil {
			out = append(out, cond)
		}
	}
	return out
}

func (d doorView) SetConditions(conds []metav1.Condition) {
	raw := make([]any, 0, len(conds))
	for i := range conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err == nil {
			raw = append(raw, m)
		}
	}
	_ = unstructured.SetNestedSlice(d.u.Object, raw, "status", "conditions")
}

var (
	env     *localcp.ControlPlane
	toySet  *engine.TableSet
	toyTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error {
		env = cp
		return installDoorCRD()
	}))
}

func installDoorCRD() error {
	lib, findings := engine.LoadBytes("door.yaml", []byte(doorTables))
	if lib == nil || findings.HasErrors() {
		return fmt.Errorf("door tables: %v", findings)
	}
	if fs := engine.Check(lib, map[string]*engine.Catalog{"door": doorRegistry().Catalog()}); len(fs) > 0 {
		return fmt.Errorf("door tables: %v", fs)
	}
	toySet = lib.TableSet("door")
	open := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "doors.toy.krtt.dev"},
		"spec": map[string]any{
			"group": "toy.krtt.dev", "scope": "Namespaced",
			"names": map[string]any{"kind": "Door", "listKind": "DoorList", "plural": "doors", "singular": "door"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": open}}},
		},
	}}
	ctx := context.Background()
	// Another run on the shared control plane may have installed it.
	if err := env.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return poll(ctx, func(ctx context.Context) error {
		return env.Client.List(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "toy.krtt.dev/v1", "kind": "DoorList"}})
	})
}

func poll(ctx context.Context, cond func(context.Context) error) error {
	return krttpoll.Until(ctx, krttpoll.Timeout(), cond)
}

func doorSpec(c client.Client) Spec[*unstructured.Unstructured, *door] {
	return Spec[*unstructured.Unstructured, *door]{
		Name:      "door",
		Set:       toySet,
		Registry:  doorRegistry(),
		NewObject: newDoor,
		NewList: func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(doorGVK.GroupVersion().WithKind("DoorList"))
			return l
		},
		Status: doorStatus,
		Observe: func(ctx context.Context, key client.ObjectKey, _ time.Time) Observation[*unstructured.Unstructured, *door] {
			u := newDoor()
			err := c.Get(ctx, key, u)
			switch {
			case apierrors.IsNotFound(err):
				return Observation[*unstructured.Unstructured, *door]{Env: &door{}}
			case err != nil:
				return Observation[*unstructured.Unstructured, *door]{Env: &door{}, Err: err}
			}
			return Observation[*unstructured.Unstructured, *door]{Env: &door{obj: u}, Object: u, Found: true}
		},
	}
}

func getDoor(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	u := newDoor()
	return u, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
}

// createNamespace creates a fresh namespace for one run of a test (so
// -count=N runs on one control plane) and returns its name.
func createNamespace(t *testing.T, base string) string {
	t.Helper()
	name := localcp.UniqueName(base)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestToyController runs the Door controller in a manager: the kit alone
// turns its rows into state, phase, conditions, status fields and traces.
func TestToyController(t *testing.T) {
	ns := createNamespace(t, "toy")
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(doorSpec(mgr.GetClient()), Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	fired := make(chan string, 100)
	r.Runner().Subscribe(func(tr engine.Trace) {
		if tr.Object == ns+"/front" {
			fired <- tr.Row
		}
	})
	if err := r.Setup(mgr, r.Builder(mgr), 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	d := newDoor()
	d.SetNamespace(ns)
	d.SetName("front")
	_ = unstructured.SetNestedField(d.Object, true, "spec", "open")
	if err := env.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	err = poll(ctx, func(ctx context.Context) error {
		u, err := getDoor(ctx, ns, "front")
		if err != nil {
			return err
		}
		rec := doorStatus(u).GetRecord()
		by, _, _ := unstructured.NestedString(u.Object, "status", "openedBy")
		c := meta.FindStatusCondition(doorStatus(u).GetConditions(), "DoorOpen")
		if rec.State != "Open" || rec.Phase != "Open" || by != "krtt" || u.GetLabels()["toy.krtt.dev/opened"] != "yes" || c == nil || c.Status != metav1.ConditionTrue ||
			rec.ObservedGeneration != u.GetGeneration() || rec.LastTransition == nil {
			return fmt.Errorf("status %v", u.Object["status"])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("door did not open: %v", err)
	}
	if row := <-fired; row != "T02" {
		t.Errorf("first published row %s, want T02", row)
	}

	// Another controller's condition survives the Door closing. Like any
	// controller, it reads again and retries when its write conflicts with
	// the kit's (a starved run showed one).
	if err := poll(ctx, func(ctx context.Context) error {
		u, err := getDoor(ctx, ns, "front")
		if err != nil {
			return err
		}
		conds := append(doorStatus(u).GetConditions(), metav1.Condition{Type: "Painted", Status: metav1.ConditionTrue, Reason: "Blue", LastTransitionTime: metav1.Now()})
		doorStatus(u).SetConditions(conds)
		return env.Client.Status().Update(ctx, u)
	}); err != nil {
		t.Fatal(err)
	}
	if err := poll(ctx, func(ctx context.Context) error {
		u, err := getDoor(ctx, ns, "front")
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, false, "spec", "open")
		return env.Client.Update(ctx, u)
	}); err != nil {
		t.Fatal(err)
	}
	err = poll(ctx, func(ctx context.Context) error {
		u, err := getDoor(ctx, ns, "front")
		if err != nil {
			return err
		}
		cs := doorStatus(u).GetConditions()
		open, painted := meta.FindStatusCondition(cs, "DoorOpen"), meta.FindStatusCondition(cs, "Painted")
		if doorStatus(u).GetRecord().State != "Closed" || open == nil || open.Status != metav1.ConditionFalse || painted == nil {
			return fmt.Errorf("status %v", u.Object["status"])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("door did not close keeping the other condition: %v", err)
	}
}
