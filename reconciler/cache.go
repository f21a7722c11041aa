package reconciler

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheWait bounds how long an action waits for the cache to show its own
// writes.
const CacheWait = 10 * time.Second

// WaitForCache waits until the cached reader shows every object of objs as
// seen says (created: found; deleted: gone or carrying a deletionTimestamp).
// A controller that creates or deletes objects it counts must not decide
// again on a cache that has not seen its writes yet, or it would create (or
// delete) them twice: its next reconcile may come from the first write's
// event while the others are still on their way.
func WaitForCache(ctx context.Context, r client.Reader, objs []client.Object, seen func(obj client.Object, err error) bool) error {
	pending := append([]client.Object(nil), objs...)
	var last error
	err := wait.PollUntilContextTimeout(ctx, cachePollInterval, CacheWait, true, func(ctx context.Context) (bool, error) {
		left := pending[:0]
		for _, o := range pending {
			probe := o.DeepCopyObject().(client.Object)
			err := r.Get(ctx, client.ObjectKeyFromObject(o), probe)
			if !seen(probe, err) {
				left = append(left, o)
			}
		}
		pending = left
		if len(pending) > 0 {
			last = fmt.Errorf("the cache does not show %d of %d written objects yet (first: %s)", len(pending), len(objs), client.ObjectKeyFromObject(pending[0]))
			return false, nil
		}
		return true, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("not within %s: %w", CacheWait, last)
	}
	return err
}

// cachePollInterval is how often WaitForCache looks at the cache.
const cachePollInterval = 100 * time.Millisecond

// Created is the seen function of WaitForCache for created objects.
func Created(_ client.Object, err error) bool { return err == nil }

// Deleted is the seen function of WaitForCache for deleted objects: gone,
// or held by a finalizer with a deletionTimestamp.
func Deleted(obj client.Object, err error) bool {
	return apierrors.IsNotFound(err) || err == nil && !obj.GetDeletionTimestamp().IsZero()
}
