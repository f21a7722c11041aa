package reconciler

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWaitForCache: the wait ends once an informer cache shows what was
// written directly to the API server, and says what it still misses when
// the cache never shows it.
func TestWaitForCache(t *testing.T) {
	ns := createNamespace(t, "cache")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	// Reading ConfigMaps starts their informer.
	if err := c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, name := range []string{"a", "b", "c"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: []string{"test.krtt.dev/hold"}}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, cm)
	}
	if err := WaitForCache(ctx, c, objs, Created); err != nil {
		t.Fatalf("created: %v", err)
	}
	for _, o := range objs {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("after the wait the cache misses %s: %v", o.GetName(), err)
		}
	}

	// Deleted: held by the finalizer, the objects count as deleted once the
	// cache shows their deletionTimestamp.
	for _, o := range objs {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := WaitForCache(ctx, c, objs, Deleted); err != nil {
		t.Fatalf("deleted: %v", err)
	}
	for _, o := range objs {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), cm); err != nil || cm.DeletionTimestamp.IsZero() {
			t.Fatalf("after the wait %s: %v, deletionTimestamp %v", o.GetName(), err, cm.DeletionTimestamp)
		}
		cm.Finalizers = nil
		if err := env.Client.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	// Never created: the wait ends with an error naming the object.
	never := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "never"}}
	short, stop := context.WithCancel(ctx)
	stop()
	err = WaitForCache(short, c, []client.Object{never}, Created)
	if err == nil || !strings.Contains(err.Error(), ns+"/never") {
		t.Fatalf("waiting for an object never written: %v, want an error naming it", err)
	}
}
