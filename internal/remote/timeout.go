package remote

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// timeoutClient bounds every call of a workload cluster's client: a
// workload API server that accepts connections and never answers would
// otherwise hold the reconcile that asked (one of --machine-concurrency
// shared by every Cluster) until its TCP connection is found dead, and a
// cache read of a kind whose informer cannot sync would wait for good.
// The watches behind the cache are not bounded; they are long by design.
type timeoutClient struct {
	client.Client
	timeout time.Duration
}

func withTimeout(c client.Client, d time.Duration) client.Client {
	return &timeoutClient{Client: c, timeout: d}
}

// within makes call with a context that ends after d at the latest.
func within(ctx context.Context, d time.Duration, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return call(ctx)
}

func (c *timeoutClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.Get(ctx, key, obj, opts...) })
}

func (c *timeoutClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.List(ctx, list, opts...) })
}

func (c *timeoutClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.Apply(ctx, obj, opts...) })
}

func (c *timeoutClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.Create(ctx, obj, opts...) })
}

func (c *timeoutClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c *timeoutClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.Update(ctx, obj, opts...) })
}

func (c *timeoutClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

func (c *timeoutClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.Client.DeleteAllOf(ctx, obj, opts...) })
}

func (c *timeoutClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *timeoutClient) SubResource(sub string) client.SubResourceClient {
	return &timeoutSubResource{SubResourceClient: c.Client.SubResource(sub), timeout: c.timeout}
}

type timeoutSubResource struct {
	client.SubResourceClient
	timeout time.Duration
}

func (c *timeoutSubResource) Get(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceGetOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.SubResourceClient.Get(ctx, obj, sub, opts...) })
}

func (c *timeoutSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.SubResourceClient.Create(ctx, obj, sub, opts...) })
}

func (c *timeoutSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.SubResourceClient.Update(ctx, obj, opts...) })
}

func (c *timeoutSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.SubResourceClient.Patch(ctx, obj, patch, opts...) })
}

func (c *timeoutSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return within(ctx, c.timeout, func(ctx context.Context) error { return c.SubResourceClient.Apply(ctx, obj, opts...) })
}
