package machine

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/poll"
)

// A provider object without finalizers is gone once its delete is
// answered: the action takes it out of the observation (bootstrapConfig
// reads Missing) so the deletion goes on in the same reconcile. One a
// finalizer holds is waited for and stays observed; one that changed since
// it was read is not deleted from the stale version.
func TestDeleteExternalTellsWhatIsGoneAtOnce(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "machine-uid"}}

	free := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "free"}}
	poll.Must(t, env.Client.Create(ctx, free))
	s := scopeFor(t, m, "")
	s.Bootstrap = toUnstructured(t, free)
	out := deleteBootstrap(ctx, s)
	if out.Status != engine.Done || s.Bootstrap != nil {
		t.Fatalf("deleting an object without finalizers: %+v, observed %v; want done and out of the observation", out, s.Bootstrap)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(free), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the object is still there after its deletion was answered: %v", err)
	}

	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{"sim.krtt.dev/cleanup"}}}
	poll.Must(t, env.Client.Create(ctx, held))
	s = scopeFor(t, m, "")
	s.Infrastructure = toUnstructured(t, held)
	out = deleteInfrastructure(ctx, s)
	if out.Status != engine.InProgress || s.Infrastructure == nil {
		t.Fatalf("deleting an object a finalizer holds: %+v; want a wait with the object still observed", out)
	}
	got := &corev1.ConfigMap{}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(held), got))
	if got.DeletionTimestamp == nil {
		t.Fatal("the held object was not asked to go")
	}
	got.Finalizers = nil
	poll.Must(t, env.Client.Update(ctx, got))

	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stale"}}
	poll.Must(t, env.Client.Create(ctx, stale))
	observed := toUnstructured(t, stale)
	stale.Finalizers = []string{"sim.krtt.dev/cleanup"}
	poll.Must(t, env.Client.Update(ctx, stale))
	s = scopeFor(t, m, "")
	s.Bootstrap = observed
	out = deleteBootstrap(ctx, s)
	if out.Status != engine.Failed || !apierrors.IsConflict(out.Err) || s.Bootstrap == nil {
		t.Fatalf("deleting from a stale observation: %+v; want a conflict, the object still observed", out)
	}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(stale), stale))
	if stale.DeletionTimestamp != nil {
		t.Fatal("the object that gained a finalizer was deleted from its stale version")
	}
	stale.Finalizers = nil
	poll.Must(t, env.Client.Update(ctx, stale))

	// An object already gone is gone from the observation too.
	s = scopeFor(t, m, "")
	s.Bootstrap = &unstructured.Unstructured{}
	s.Bootstrap.SetAPIVersion("v1")
	s.Bootstrap.SetKind("ConfigMap")
	s.Bootstrap.SetNamespace(ns)
	s.Bootstrap.SetName("never-was")
	if out := deleteBootstrap(ctx, s); out.Status != engine.Done || s.Bootstrap != nil {
		t.Fatalf("deleting an object that is gone: %+v", out)
	}
}
