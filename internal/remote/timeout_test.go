package remote

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestEveryCallOfAWorkloadClientIsBounded: against an API server that never
// answers (every call waits for its context), each call the Machine
// controller makes through a workload cluster's client (reads, writes,
// evictions and status writes through subresources) returns
// context.DeadlineExceeded instead of holding its reconcile; a server that
// answers is not affected.
func TestEveryCallOfAWorkloadClientIsBounded(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	silent := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(ctx context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			return hang(ctx)
		},
		List: func(ctx context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
			return hang(ctx)
		},
		Create: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.CreateOption) error {
			return hang(ctx)
		},
		Delete: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.DeleteOption) error {
			return hang(ctx)
		},
		DeleteAllOf: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.DeleteAllOfOption) error {
			return hang(ctx)
		},
		Update: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.UpdateOption) error {
			return hang(ctx)
		},
		Patch: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ client.Patch, _ ...client.PatchOption) error {
			return hang(ctx)
		},
		SubResourceGet: func(ctx context.Context, _ client.Client, _ string, _, _ client.Object, _ ...client.SubResourceGetOption) error {
			return hang(ctx)
		},
		SubResourceCreate: func(ctx context.Context, _ client.Client, _ string, _, _ client.Object, _ ...client.SubResourceCreateOption) error {
			return hang(ctx)
		},
		SubResourceUpdate: func(ctx context.Context, _ client.Client, _ string, _ client.Object, _ ...client.SubResourceUpdateOption) error {
			return hang(ctx)
		},
		SubResourcePatch: func(ctx context.Context, _ client.Client, _ string, _ client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
			return hang(ctx)
		},
	})
	c := withTimeout(silent, 50*time.Millisecond)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`))
	// The caller's context has no deadline: only the client's bounds the call.
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"get Node":        func() error { return c.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}) },
		"list Pods":       func() error { return c.List(ctx, &corev1.PodList{}) },
		"create":          func() error { return c.Create(ctx, pod.DeepCopy()) },
		"delete Node":     func() error { return c.Delete(ctx, node.DeepCopy()) },
		"delete all of":   func() error { return c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace("default")) },
		"update":          func() error { return c.Update(ctx, node.DeepCopy()) },
		"cordon (patch)":  func() error { return c.Patch(ctx, node.DeepCopy(), patch) },
		"evict":           func() error { return c.SubResource("eviction").Create(ctx, pod.DeepCopy(), &policyv1.Eviction{}) },
		"subresource get": func() error { return c.SubResource("status").Get(ctx, pod.DeepCopy(), &corev1.Pod{}) },
		"status update":   func() error { return c.Status().Update(ctx, node.DeepCopy()) },
		"status patch":    func() error { return c.Status().Patch(ctx, node.DeepCopy(), patch) },
	} {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s against a silent server: %v, want context.DeadlineExceeded", name, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s against a silent server still waits after a minute: the client does not bound it", name)
		}
	}

	answering := withTimeout(fake.NewClientBuilder().Build(), time.Minute)
	if err := answering.Create(ctx, node.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := answering.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}); err != nil {
		t.Errorf("a server that answers: %v", err)
	}
}
