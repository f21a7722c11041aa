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
// answers with the new metadata, and conflicts when it carries a
// resourceVersion that is no longer current.
func TestPatchFields(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, "patch-fields")
	d := createDoor(t, ns, "front")
	d.SetLabels(map[string]string{"keep": "1", "drop": "1"})
	if err := env.Client.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	answer, err := PatchFields(ctx, env.Client, d, map[string]any{"metadata": map[string]any{
		"labels": map[string]any{"new": "2", "drop": nil}}})
	if err != nil {
		t.Fatal(err)
	}
	got := newDoor()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
		t.Fatal(err)
	}
	if l := got.GetLabels(); len(l) != 2 || l["keep"] != "1" || l["new"] != "2" {
		t.Errorf("labels after the patch: %v, want keep=1 new=2", l)
	}
	if answer.ResourceVersion != got.GetResourceVersion() || answer.Labels["new"] != "2" || answer.GroupVersionKind() != doorGVK {
		t.Errorf("answer: %s %s %v, want resourceVersion %s and the new labels", answer.GroupVersionKind(), answer.ResourceVersion, answer.Labels, got.GetResourceVersion())
	}
	if d.GetLabels()["new"] != "" {
		t.Error("the object handed in was changed; only the answer should carry the write")
	}

	// d's resourceVersion is now stale.
	_, err = PatchFields(ctx, env.Client, d, map[string]any{"metadata": map[string]any{
		"resourceVersion": d.GetResourceVersion(), "labels": map[string]any{"late": "3"}}})
	if !apierrors.IsConflict(err) {
		t.Errorf("patch with a stale resourceVersion: %v, want a conflict", err)
	}

	// A typed object's kind comes from the scheme.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	answer, err = PatchFields(ctx, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}},
		map[string]any{"data": map[string]any{"k": "v"}})
	if err != nil || answer.Kind != "ConfigMap" || answer.ResourceVersion == cm.ResourceVersion {
		t.Errorf("patching a ConfigMap: %v, answer %+v", err, answer)
	}
}
