package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/krtt-dev/krtt/api/kit"
)

func doorPatcher() patcher[*unstructured.Unstructured] {
	return patcher[*unstructured.Unstructured]{client: env.Client, apiReader: env.Client, newObject: newDoor,
		status: doorStatus, owned: map[string]bool{"DoorOpen": true}, finalizer: "toy.krtt.dev/door"}
}

func createDoor(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	d := newDoor()
	d.SetNamespace(ns)
	d.SetName(name)
	d.SetFinalizers([]string{"toy.krtt.dev/door"})
	if err := env.Client.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	doorStatus(d).SetRecord(kit.Record{State: "Closed", Phase: "Closed"})
	if err := env.Client.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

func setCondition(u *unstructured.Unstructured, typ string, status metav1.ConditionStatus) {
	cs := doorStatus(u).GetConditions()
	meta.SetStatusCondition(&cs, metav1.Condition{Type: typ, Status: status, Reason: "R"})
	doorStatus(u).SetConditions(cs)
}

// A merge patch replaces whole lists, so a metadata patch computed from a
// stale read would drop a finalizer another controller added meanwhile: it
// must conflict instead, and write no status either.
func TestPatchNeverDropsAConcurrentFinalizer(t *testing.T) {
	ns := createNamespace(t, "patch-meta")
	ctx := context.Background()
	stale := createDoor(t, ns, "d")
	other := stale.DeepCopy()
	other.SetFinalizers(append(other.GetFinalizers(), "example.com/keep"))
	if err := env.Client.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	after := stale.DeepCopy()
	after.SetLabels(map[string]string{"touched": "yes"})
	doorStatus(after).SetRecord(kit.Record{State: "Open"})
	p := doorPatcher()
	if err := p.patch(ctx, stale, after, true); !apierrors.IsConflict(err) || !IsStale(err) {
		t.Fatalf("patch from a stale read: want a conflict, got %v", err)
	}
	got, _ := getDoor(ctx, ns, "d")
	if len(got.GetFinalizers()) != 2 || got.GetLabels()["touched"] != "" || doorStatus(got).GetRecord().State != "Closed" {
		t.Fatalf("stale patch changed the Door: finalizers %v labels %v state %q", got.GetFinalizers(), got.GetLabels(), doorStatus(got).GetRecord().State)
	}
}

// Releasing the object writes its last status only while another
// finalizer keeps it: an object that goes with the patch has no status
// left to keep, one held by another controller shows where this one left it.
func TestReleaseWritesStatusOnlyWhileTheObjectStays(t *testing.T) {
	ns := createNamespace(t, "patch-release")
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		others []string
	}{{"held", []string{"example.com/keep"}}, {"gone", nil}} {
		d := createDoor(t, ns, tc.name)
		d.SetFinalizers(append(d.GetFinalizers(), tc.others...))
		if err := env.Client.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Delete(ctx, d); err != nil {
			t.Fatal(err)
		}
		before, err := getDoor(ctx, ns, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		after := before.DeepCopy()
		after.SetFinalizers(tc.others)
		doorStatus(after).SetRecord(kit.Record{State: "Released", Phase: "Released"})
		p := doorPatcher()
		if err := p.patch(ctx, before, after, true); err != nil {
			t.Fatalf("%s: patch: %v", tc.name, err)
		}
		got, err := getDoor(ctx, ns, tc.name)
		switch {
		case tc.others == nil && !apierrors.IsNotFound(err):
			t.Errorf("%s: the Door should be gone, got %v", tc.name, err)
		case tc.others != nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.others != nil && doorStatus(got).GetRecord().State != "Released":
			t.Errorf("%s: state %q, want the released state written", tc.name, doorStatus(got).GetRecord().State)
		}
	}
}

// A status patch from a read that another writer overtook is rebased: this
// controller's conditions and fields land on top of the newest object, and
// the other writer's condition stays.
func TestStatusPatchRebasesOntoOtherWriters(t *testing.T) {
	ns := createNamespace(t, "patch-status")
	ctx := context.Background()
	stale := createDoor(t, ns, "d")
	setCondition(stale, "DoorOpen", metav1.ConditionFalse)
	if err := env.Client.Status().Update(ctx, stale); err != nil {
		t.Fatal(err)
	}
	other := stale.DeepCopy()
	setCondition(other, "Painted", metav1.ConditionTrue)
	if err := env.Client.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	after := stale.DeepCopy()
	setCondition(after, "DoorOpen", metav1.ConditionTrue)
	_ = unstructured.SetNestedField(after.Object, "krtt", "status", "openedBy")
	p := doorPatcher()
	if err := p.patch(ctx, stale, after, true); err != nil {
		t.Fatalf("patch: %v", err)
	}
	got, _ := getDoor(ctx, ns, "d")
	cs := doorStatus(got).GetConditions()
	by, _, _ := unstructured.NestedString(got.Object, "status", "openedBy")
	if c := meta.FindStatusCondition(cs, "DoorOpen"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("owned condition not written: %v", cs)
	}
	if meta.FindStatusCondition(cs, "Painted") == nil {
		t.Errorf("the other writer's condition was lost: %v", cs)
	}
	if by != "krtt" {
		t.Errorf("status field not written: %v", got.Object["status"])
	}
}

// A status patch decided on a state that has moved on since is dropped: the
// newer state must never be rewound.
func TestStatusPatchNeverRewindsTheState(t *testing.T) {
	ns := createNamespace(t, "patch-rewind")
	ctx := context.Background()
	stale := createDoor(t, ns, "d")
	newer := stale.DeepCopy()
	doorStatus(newer).SetRecord(kit.Record{State: "Open", Phase: "Open"})
	if err := env.Client.Status().Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	after := stale.DeepCopy()
	setCondition(after, "DoorOpen", metav1.ConditionFalse)
	p := doorPatcher()
	err := p.patch(ctx, stale, after, true)
	if !errors.Is(err, errStale) || !IsStale(err) {
		t.Fatalf("want a stale error, got %v", err)
	}
	got, _ := getDoor(ctx, ns, "d")
	if doorStatus(got).GetRecord().State != "Open" {
		t.Fatalf("state rewound to %q", doorStatus(got).GetRecord().State)
	}
}

// A decision made on an object whose first status write the cache had not
// shown yet (status.state empty) was made in the initial state: when the
// newer object says the initial state, the patch is rebased, not dropped,
// so the row that fired (and whatever its actions did) is recorded.
func TestStatusPatchEmptyStateIsTheInitialState(t *testing.T) {
	ns := createNamespace(t, "patch-initial")
	ctx := context.Background()
	d := newDoor()
	d.SetNamespace(ns)
	d.SetName("d")
	if err := env.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	stale := d.DeepCopy()
	newer := d.DeepCopy()
	doorStatus(newer).SetRecord(kit.Record{State: "Closed", Phase: "Closed"})
	if err := env.Client.Status().Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	after := stale.DeepCopy()
	doorStatus(after).SetRecord(kit.Record{State: "Open", Phase: "Open"})
	p := doorPatcher()
	p.initialState = "Closed"
	if err := p.patch(ctx, stale, after, true); err != nil {
		t.Fatalf("patch decided in the initial state: %v", err)
	}
	got, _ := getDoor(ctx, ns, "d")
	if doorStatus(got).GetRecord().State != "Open" {
		t.Fatalf("state %q, want Open", doorStatus(got).GetRecord().State)
	}
	// Without the initial state the same patch is stale.
	p.initialState = ""
	stale2 := d.DeepCopy()
	after2 := stale2.DeepCopy()
	doorStatus(after2).SetRecord(kit.Record{State: "Closed"})
	if err := p.patch(ctx, stale2, after2, true); !errors.Is(err, errStale) {
		t.Fatalf("want a stale error against state Open, got %v", err)
	}
}

func TestOwnedChanges(t *testing.T) {
	c := func(typ string, st metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: "R"}
	}
	before := []metav1.Condition{c("A", "True"), c("B", "True"), c("X", "True")}
	after := []metav1.Condition{c("A", "False"), c("X", "False"), c("C", "True")}
	got := ownedChanges(before, after, map[string]bool{"A": true, "B": true, "C": true})
	want := map[string]string{"A": "False", "C": "True", "B": "removed"}
	if len(got) != len(want) {
		t.Fatalf("changes %+v", got)
	}
	for _, ch := range got {
		st := "removed"
		if ch.cond != nil {
			st = string(ch.cond.Status)
		}
		if want[ch.typ] != st {
			t.Errorf("%s: %s, want %s", ch.typ, st, want[ch.typ])
		}
	}
}

// A reconcile that writes the spec itself (a copied name) and succeeded
// observes the generation its own write made: the status it writes says so,
// and the next reconcile has nothing left to write. One that did not
// succeed keeps the generation it observed.
func TestPatchObservesTheGenerationOfItsOwnSpecWrite(t *testing.T) {
	ns := createNamespace(t, "patch-generation")
	ctx := context.Background()
	for _, observed := range []bool{true, false} {
		name := fmt.Sprintf("d-%t", observed)
		before := createDoor(t, ns, name)
		gen := before.GetGeneration()
		after := before.DeepCopy()
		_ = unstructured.SetNestedField(after.Object, "krtt-copied", "spec", "name")
		doorStatus(after).SetRecord(kit.Record{State: "Open", Phase: "Open", ObservedGeneration: gen})
		cs := doorStatus(after).GetConditions()
		meta.SetStatusCondition(&cs, metav1.Condition{Type: "DoorOpen", Status: metav1.ConditionTrue, Reason: "Opened", ObservedGeneration: gen})
		meta.SetStatusCondition(&cs, metav1.Condition{Type: "Painted", Status: metav1.ConditionTrue, Reason: "R", ObservedGeneration: gen})
		doorStatus(after).SetConditions(cs)
		p := doorPatcher()
		if err := p.patch(ctx, before, after, observed); err != nil {
			t.Fatalf("patch: %v", err)
		}
		got, _ := getDoor(ctx, ns, name)
		if got.GetGeneration() != gen+1 {
			t.Fatalf("generation %d, want %d after the spec write", got.GetGeneration(), gen+1)
		}
		want := gen
		if observed {
			want = gen + 1
		}
		if og := doorStatus(got).GetRecord().ObservedGeneration; og != want {
			t.Errorf("observed=%t: status.observedGeneration %d, want %d", observed, og, want)
		}
		if c := meta.FindStatusCondition(doorStatus(got).GetConditions(), "DoorOpen"); c == nil || c.ObservedGeneration != want {
			t.Errorf("observed=%t: owned condition %+v, want observedGeneration %d", observed, c, want)
		}
		if meta.FindStatusCondition(doorStatus(got).GetConditions(), "Painted") != nil {
			t.Errorf("a condition the controller does not own was written")
		}
	}
}

// Encodings are compared field by field; an empty field and an absent one
// are the same, as they are to semantic equality.
func TestSameFields(t *testing.T) {
	f := func(kv ...string) fields {
		m := fields{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = json.RawMessage(kv[i+1])
		}
		return m
	}
	cases := []struct {
		name string
		a, b fields
		same bool
	}{
		{"equal", f("spec", `{"a":1}`), f("spec", `{"a":1}`), true},
		{"changed", f("spec", `{"a":1}`), f("spec", `{"a":2}`), false},
		{"added", f(), f("phase", `"Running"`), false},
		{"removed", f("phase", `"Running"`), f(), false},
		{"empty list is absent", f("addresses", `[]`), f(), true},
		{"null is empty object", f("x", `null`), f("x", `{}`), true},
	}
	for _, c := range cases {
		if got := sameFields(c.a, c.b); got != c.same {
			t.Errorf("%s: sameFields = %t", c.name, got)
		}
		if got := sameFields(c.b, c.a); got != c.same {
			t.Errorf("%s (reversed): sameFields = %t", c.name, got)
		}
	}
}

// The metadata patch carries the resourceVersion it was computed from, so
// the API server refuses it when the object changed since.
func TestMergePatchCarriesTheResourceVersion(t *testing.T) {
	before := fields{"metadata": json.RawMessage(`{"name":"d","finalizers":["a"]}`)}
	after := fields{"metadata": json.RawMessage(`{"name":"d","finalizers":["a","b"]}`)}
	got, err := mergePatch(before, after, "42")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"metadata":{"finalizers":["a","b"],"resourceVersion":"42"}}`; string(got) != want {
		t.Errorf("patch %s, want %s", got, want)
	}
}

// Only fields that differ make the patch: one left as it was adds nothing,
// one gone is removed, one new is set.
func TestMergePatchOfDifferingFields(t *testing.T) {
	before := fields{"metadata": json.RawMessage(`{"name":"d"}`), "spec": json.RawMessage(`{"size":3,"colour":"red"}`),
		"old": json.RawMessage(`"x"`)}
	after := fields{"metadata": json.RawMessage(`{"name":"d"}`), "spec": json.RawMessage(`{"size":4,"colour":"red"}`),
		"new": json.RawMessage(`[1]`)}
	got, err := mergePatch(before, after, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"new":[1],"old":null,"spec":{"size":4}}`; string(got) != want {
		t.Errorf("patch %s, want %s", got, want)
	}
}

// The status write sends the changed fields, and the conditions only when
// the owned changes change the list of the version it is sent against.
func TestStatusPatch(t *testing.T) {
	open := metav1.Condition{Type: "DoorOpen", Status: metav1.ConditionTrue, Reason: "Opened"}
	painted := metav1.Condition{Type: "Painted", Status: metav1.ConditionTrue, Reason: "R"}
	phase := fields{"phase": json.RawMessage(`"Open"`)}
	cases := []struct {
		name    string
		status  fields
		conds   []metav1.Condition
		changes []conditionChange
		want    string
	}{
		{"nothing", nil, []metav1.Condition{open}, []conditionChange{{typ: "DoorOpen", cond: &open}}, ""},
		{"fields only", phase, []metav1.Condition{open}, nil,
			`{"metadata":{"resourceVersion":"7"},"status":{"phase":"Open"}}`},
		{"condition added after another writer's", nil, []metav1.Condition{painted}, []conditionChange{{typ: "DoorOpen", cond: &open}},
			`{"metadata":{"resourceVersion":"7"},"status":{"conditions":[{"type":"Painted","status":"True","lastTransitionTime":null,"reason":"R","message":""},{"type":"DoorOpen","status":"True","lastTransitionTime":null,"reason":"Opened","message":""}]}}`},
		{"condition removed", phase, []metav1.Condition{open, painted}, []conditionChange{{typ: "DoorOpen"}},
			`{"metadata":{"resourceVersion":"7"},"status":{"conditions":[{"type":"Painted","status":"True","lastTransitionTime":null,"reason":"R","message":""}],"phase":"Open"}}`},
	}
	for _, c := range cases {
		got, err := statusPatch(c.status, c.conds, c.changes, "7")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
