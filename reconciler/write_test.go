package reconciler

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
