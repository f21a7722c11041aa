package reconciler

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
)

// A field-by-field patch sets and removes what it names, leaves the rest,
// hands the object the answer, and conflicts when it carries a
// resourceVersion that is no longer current (leaving the object as it was).
func TestPatchFields(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, "patch-fields")
	d := createDoor(t, ns, "front")
	d.SetLabels(map[string]string{"keep": "1", "drop": "1"})
	if err := env.Client.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	stale := d.DeepCopy()
	if err := PatchFields(ctx, env.Client, d, map[string]any{"metadata": map[string]any{
		"labels": map[string]any{"new": "2", "drop": nil}}}); err != nil {
		t.Fatal(err)
	}
	got := newDoor()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
		t.Fatal(err)
	}
	if l := got.GetLabels(); len(l) != 2 || l["keep"] != "1" || l["new"] != "2" {
		t.Errorf("labels after the patch: %v, want keep=1 new=2", l)
	}
	if d.GetResourceVersion() != got.GetResourceVersion() || d.GetLabels()["new"] != "2" {
		t.Errorf("the object after the write: resourceVersion %s, labels %v; want %s and the new labels", d.GetResourceVersion(), d.GetLabels(), got.GetResourceVersion())
	}

	err := PatchFields(ctx, env.Client, stale, map[string]any{"metadata": map[string]any{
		"resourceVersion": stale.GetResourceVersion(), "labels": map[string]any{"late": "3"}}})
	if !apierrors.IsConflict(err) {
		t.Errorf("patch with a stale resourceVersion: %v, want a conflict", err)
	}
	if stale.GetLabels()["late"] != "" || stale.GetLabels()["drop"] != "1" {
		t.Errorf("a failed write changed the object: labels %v", stale.GetLabels())
	}

	// A typed object.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	rv := cm.ResourceVersion
	if err := PatchFields(ctx, env.Client, cm, map[string]any{"data": map[string]any{"k": "v"}}); err != nil || cm.Data["k"] != "v" || cm.ResourceVersion == rv {
		t.Errorf("patching a ConfigMap: %v, the object after it %+v", err, cm)
	}
}

// An owner-and-label write replaces the owner list it observed and adds its
// labels whatever else changed meanwhile (a provider writing its status,
// another writer's annotation); it conflicts only when the owners it
// replaces, or the labels it would create, changed since they were read, or
// the object was recreated under its name.
func TestPatchOwnersAndLabels(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, "patch-owners")
	ours := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "ours", UID: "ours-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other-uid", Controller: ptr.To(true)}
	get := func(d client.Object) *unstructured.Unstructured {
		t.Helper()
		got := newDoor()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	touch := func(d *unstructured.Unstructured) {
		t.Helper()
		u := get(d)
		doorStatus(u).SetRecord(kit.Record{State: "Open", Phase: "Open"})
		if err := env.Client.Status().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	// Status written meanwhile: the write goes through, takes the answer in.
	d := createDoor(t, ns, "free")
	observed := d.DeepCopy()
	touch(d)
	if err := PatchOwnersAndLabels(ctx, env.Client, observed, []metav1.OwnerReference{ours}, map[string]string{"a/b": "1"}); err != nil {
		t.Fatalf("adopting after a status write: %v", err)
	}
	got := get(d)
	if refs := got.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != ours.UID || got.GetLabels()["a/b"] != "1" {
		t.Fatalf("after the write: owners %+v, labels %v", refs, got.GetLabels())
	}
	if observed.GetResourceVersion() != got.GetResourceVersion() {
		t.Errorf("the observed copy did not take the answer in: %s, want %s", observed.GetResourceVersion(), got.GetResourceVersion())
	}

	// Nothing to change: no request.
	rv := got.GetResourceVersion()
	if err := PatchOwnersAndLabels(ctx, env.Client, got, []metav1.OwnerReference{ours}, map[string]string{"a/b": "1"}); err != nil || get(d).GetResourceVersion() != rv {
		t.Errorf("a write with nothing to change: %v, resourceVersion %s → %s", err, rv, get(d).GetResourceVersion())
	}

	// Labels present: a label is added beside one set meanwhile.
	got.SetLabels(map[string]string{"a/b": "1", "late": "x"})
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	stale := observed.DeepCopy()
	if err := PatchOwnersAndLabels(ctx, env.Client, stale, []metav1.OwnerReference{ours}, map[string]string{"c": "2"}); err != nil {
		t.Fatalf("adding a label: %v", err)
	}
	if l := get(d).GetLabels(); len(l) != 3 || l["late"] != "x" || l["c"] != "2" {
		t.Errorf("labels: %v, want a/b, late and c", l)
	}

	// No owners and no labels observed, both set meanwhile: conflicts, and
	// what was set stays.
	d2 := createDoor(t, ns, "taken")
	observed = d2.DeepCopy()
	taken := get(d2)
	taken.SetOwnerReferences([]metav1.OwnerReference{other})
	if err := env.Client.Update(ctx, taken); err != nil {
		t.Fatal(err)
	}
	err := PatchOwnersAndLabels(ctx, env.Client, observed, []metav1.OwnerReference{ours}, nil)
	if !apierrors.IsConflict(err) {
		t.Errorf("adopting an object another controller took meanwhile: %v, want a conflict", err)
	}
	if refs := get(d2).GetOwnerReferences(); len(refs) != 1 || refs[0].UID != other.UID || len(observed.GetOwnerReferences()) != 0 {
		t.Errorf("after the conflict: owners %+v (observed copy %+v), want only %s", refs, observed.GetOwnerReferences(), other.Name)
	}
	taken = get(d2)
	taken.SetLabels(map[string]string{"mine": "1"})
	if err := env.Client.Update(ctx, taken); err != nil {
		t.Fatal(err)
	}
	if err := PatchOwnersAndLabels(ctx, env.Client, observed, nil, map[string]string{"c": "2"}); !apierrors.IsConflict(err) {
		t.Errorf("adding labels to an object observed without any that has some now: %v, want a conflict", err)
	}

	// The owner list goes; an object recreated under the name conflicts.
	fresh := get(d2)
	if err := PatchOwnersAndLabels(ctx, env.Client, fresh, nil, nil); err != nil || len(get(d2).GetOwnerReferences()) != 0 {
		t.Errorf("removing the owners: %v, left %+v", err, get(d2).GetOwnerReferences())
	}
	fresh.SetUID("an-earlier-object")
	if err := PatchOwnersAndLabels(ctx, env.Client, fresh, []metav1.OwnerReference{ours}, nil); !apierrors.IsConflict(err) {
		t.Errorf("writing an object recreated since it was read: %v, want a conflict", err)
	}

	// A typed object.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned", OwnerReferences: []metav1.OwnerReference{other}}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := PatchOwnersAndLabels(ctx, env.Client, cm, []metav1.OwnerReference{ours}, map[string]string{"k": "v"}); err != nil ||
		len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != ours.UID || cm.Labels["k"] != "v" {
		t.Errorf("handing a ConfigMap over: %v, the object after it %+v", err, cm.ObjectMeta)
	}
}
