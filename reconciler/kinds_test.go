package reconciler

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	krttpoll "github.com/krtt-dev/krtt/test/framework/poll"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// TestKindNotReadableErrorSays: the message names the kind and, when the
// informer reported one, the cause; a Forbidden cause names the resource
// to grant list and watch on. The error never reads as its cause.
func TestKindNotReadableErrorSays(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "infrastructure.acme.example", Version: "v1beta1", Kind: "AcmeMachine"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: gvk.Group, Resource: "acmemachines"}, "",
		errors.New(`User "system:serviceaccount:krtt-system:krtt" cannot list resource "acmemachines"`))
	for _, tc := range []struct {
		name  string
		cause error
		want  []string
	}{
		{"no cause yet", nil, []string{"has not synced the kind AcmeMachine.infrastructure.acme.example/v1beta1 yet"}},
		{"forbidden", forbidden, []string{"cannot list or watch AcmeMachine.infrastructure.acme.example/v1beta1",
			"RBAC forbids it", "grant list and watch on acmemachines.infrastructure.acme.example", "cannot list resource"}},
		{"other", errors.New("conversion webhook for x failed"), []string{"cannot list or watch AcmeMachine.infrastructure.acme.example/v1beta1",
			"conversion webhook for x failed"}},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: "acmemachines"}, ""),
			[]string{"cannot list or watch AcmeMachine", "not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := error(&KindNotReadableError{GVK: gvk, Cause: tc.cause})
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			if !IsKindNotReadable(err) {
				t.Error("IsKindNotReadable is false")
			}
			if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
				t.Errorf("%q reads as its cause", err)
			}
		})
	}
}

// TestKindSyncFailsFastOnAForbiddenKind, against the API server: a reader
// whose credentials may not list ConfigMaps gets a KindNotReadableError
// saying RBAC forbids it once the kind's grace is over, and every later read
// gets it at once; a reader that may list them reads through the guard.
func TestKindSyncFailsFastOnAForbiddenKind(t *testing.T) {
	ns := createNamespace(t, "kinds")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	nobody := rest.CopyConfig(env.Config)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "krtt-test-nobody", Groups: []string{"system:authenticated"}}
	denied := startKindSync(ctx, t, nobody)
	denied.kinds.grace = 0
	cm := &unstructured.Unstructured{}
	cm.SetGroupVersionKind(configMapGVK)
	var last error
	// The first reads may come before the informer's first list failed:
	// they say the cache has not synced yet, without a cause.
	err := krttpoll.Until(ctx, CacheWait, func(ctx context.Context) error {
		last = denied.Get(ctx, client.ObjectKey{Namespace: ns, Name: "any"}, cm)
		if !apierrors.IsForbidden(causeOf(last)) {
			return errors.New("no Forbidden cause yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v; last read: %v", err, last)
	}
	for _, w := range []string{"cannot list or watch ConfigMap/v1", "RBAC forbids it", "grant list and watch on configmaps", `"krtt-test-nobody"`} {
		if !strings.Contains(last.Error(), w) {
			t.Errorf("%q does not say %q", last, w)
		}
	}
	if err := denied.List(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList"}}); !IsKindNotReadable(err) {
		t.Errorf("list of the forbidden kind: %v, want a KindNotReadableError", err)
	}

	// The same kind with credentials that may list it reads normally.
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}); err != nil {
		t.Fatal(err)
	}
	allowed := startKindSync(ctx, t, env.Config)
	err = krttpoll.Until(ctx, CacheWait, func(ctx context.Context) error {
		return allowed.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm"}, cm)
	})
	if err != nil {
		t.Fatalf("read of a listable kind: %v", err)
	}
}

// causeOf is the cause a KindNotReadableError reports, nil otherwise.
func causeOf(err error) error {
	var e *KindNotReadableError
	if errors.As(err, &e) {
		return e.Cause
	}
	return nil
}

// startKindSync starts a cache for cfg with a KindSync's watch error handler
// and returns the guarded reader.
func startKindSync(ctx context.Context, t *testing.T, cfg *rest.Config) *syncedReader {
	t.Helper()
	k := NewKindSync(logr.Discard())
	c, err := cache.New(cfg, cache.Options{Scheme: env.Scheme, DefaultWatchErrorHandler: k.WatchErrorHandler})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not start")
	}
	return k.Reader(c).(*syncedReader)
}

// TestKindSyncProbesTheCause: when the informer reports no error, a read
// past the grace starts one direct list whose error becomes the kind's
// cause, and later reads say it.
func TestKindSyncProbesTheCause(t *testing.T) {
	ctx := context.Background()
	nobody := rest.CopyConfig(env.Config)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "krtt-test-nobody", Groups: []string{"system:authenticated"}}
	probe, err := client.New(nobody, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	k := NewKindSync(logr.Discard())
	k.probe = probe
	st := k.state(configMapGVK)
	var last error
	err = krttpoll.Until(ctx, CacheWait, func(context.Context) error {
		last = k.notReadable(st)
		if !apierrors.IsForbidden(causeOf(last)) {
			return errors.New("no Forbidden cause yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v; last: %v", err, last)
	}
	if !strings.Contains(last.Error(), "RBAC forbids it") {
		t.Errorf("%q does not say RBAC forbids it", last)
	}
}
