package reconciler

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestHeldKeepsWhatTheCacheHolds: through a cache filtered by a label (as a
// watch filter makes the operator's), Held keeps the requests for objects
// carrying the label and drops those for another's and for missing ones.
func TestHeldKeepsWhatTheCacheHolds(t *testing.T) {
	ns := createNamespace(t, "held")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{"part": "a"})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	for name, part := range map[string]string{"mine": "a", "theirs": "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"part": part}}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	// Only "mine" can show up in this cache.
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}}
	if err := WaitForCache(ctx, c, []client.Object{mine}, Created); err != nil {
		t.Fatal(err)
	}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
	}
	all := func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{req("theirs"), req("mine"), req("missing")}
	}
	got := Held(c, func() client.Object { return &corev1.ConfigMap{} }, all)(ctx, &corev1.Secret{})
	if len(got) != 1 || got[0] != req("mine") {
		t.Errorf("Held kept %v, want only %s/mine", got, ns)
	}
}
