package machine

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/poll"
)

// A provider object observed without a controller, then taken over by
// another controller before the Machine writes its own reference, stays with
// that controller: the adoption conflicts instead of replacing the owner list.
func TestAdoptDoesNotOverwriteANewController(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "machine-uid"}, Spec: clusterv1.MachineSpec{ClusterName: "c1"}}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1-infra"}}
	poll.Must(t, env.Client.Create(ctx, obj))

	observed := toUnstructured(t, obj)

	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other-uid", Controller: ptr.To(true)}
	obj.OwnerReferences = []metav1.OwnerReference{other}
	poll.Must(t, env.Client.Update(ctx, obj))

	out := adopt(ctx, scopeFor(t, m, ""), observed, claimOf(scopeFor(t, m, ""), observed, nil))
	if out.Status != engine.Failed || !strings.Contains(out.Message, "set owner of ConfigMap m1-infra") {
		t.Fatalf("adopting a stale observation: %+v, want a failed write", out)
	}
	got := &corev1.ConfigMap{}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got))
	if ctrl := metav1.GetControllerOf(got); ctrl == nil || ctrl.UID != other.UID {
		t.Fatalf("controller after the failed adoption: %+v, want %s", ctrl, other.Name)
	}

	// Observed afresh, the object is refused without a write.
	fresh := toUnstructured(t, got)
	out = adopt(ctx, scopeFor(t, m, ""), fresh, claimOf(scopeFor(t, m, ""), fresh, nil))
	if out.Status != engine.Failed || out.Message != "ConfigMap/m1-infra is controlled by ConfigMap/other; the Machine does not take it over" {
		t.Fatalf("adopting an object controlled by another: %+v", out)
	}

	// An object nobody controls is adopted: its other labels and owner
	// references stay, and the observed copy is what the API server answered.
	keep := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "keep-uid"}
	free := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1-bootstrap",
		Labels: map[string]string{"team": "a"}, OwnerReferences: []metav1.OwnerReference{keep}}}
	poll.Must(t, env.Client.Create(ctx, free))
	u := toUnstructured(t, free)
	if out := adopt(ctx, scopeFor(t, m, ""), u, ""); out.Status == engine.Failed {
		t.Fatalf("adopting a free object: %+v", out)
	}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(free), free))
	if ctrl := metav1.GetControllerOf(free); ctrl == nil || ctrl.UID != m.UID || free.Labels[clusterv1.ClusterNameLabel] != m.Spec.ClusterName ||
		free.Labels["team"] != "a" || len(free.OwnerReferences) != 2 || free.OwnerReferences[0].UID != keep.UID {
		t.Fatalf("after adoption: owners %+v, labels %v", free.OwnerReferences, free.Labels)
	}
	if ctrl := metav1.GetControllerOf(u); ctrl == nil || ctrl.UID != m.UID || u.GetResourceVersion() != free.ResourceVersion {
		t.Fatalf("observed copy after adoption: controller %+v, resourceVersion %s, want %s", ctrl, u.GetResourceVersion(), free.ResourceVersion)
	}

	// Owned already, an object that lost its cluster-name label gets it
	// back, its owner references untouched; with the label there, adopting
	// writes nothing.
	delete(free.Labels, clusterv1.ClusterNameLabel)
	poll.Must(t, env.Client.Update(ctx, free))
	u = toUnstructured(t, free)
	if out := adopt(ctx, scopeFor(t, m, ""), u, ""); out.Status == engine.Failed {
		t.Fatalf("adopting an owned object without its label: %+v", out)
	}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(free), free))
	if free.Labels[clusterv1.ClusterNameLabel] != m.Spec.ClusterName || free.Labels["team"] != "a" || len(free.OwnerReferences) != 2 {
		t.Fatalf("after re-adoption: owners %+v, labels %v", free.OwnerReferences, free.Labels)
	}
	rv := free.ResourceVersion
	if out := adopt(ctx, scopeFor(t, m, ""), toUnstructured(t, free), ""); out.Status == engine.Failed {
		t.Fatalf("adopting an owned, labelled object: %+v", out)
	}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(free), free))
	if free.ResourceVersion != rv {
		t.Fatalf("adopting an owned, labelled object wrote it: resourceVersion %s, was %s", free.ResourceVersion, rv)
	}

	// Released, it keeps only the references that are not the Machine's;
	// with none left the list goes.
	if out := release(ctx, scopeFor(t, m, ""), u, "claimed"); out.Status == engine.Failed {
		t.Fatalf("releasing: %+v", out)
	}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(free), free))
	if len(free.OwnerReferences) != 1 || free.OwnerReferences[0].UID != keep.UID {
		t.Fatalf("after release: owners %+v, want only %s", free.OwnerReferences, keep.Name)
	}
	only := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1-only"}}
	poll.Must(t, env.Client.Create(ctx, only))
	u = toUnstructured(t, only)
	poll.Must(t, adopt(ctx, scopeFor(t, m, ""), u, "").Err)
	if out := release(ctx, scopeFor(t, m, ""), u, "claimed"); out.Status == engine.Failed {
		t.Fatalf("releasing the only owner: %+v", out)
	}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(only), only))
	if len(only.OwnerReferences) != 0 {
		t.Fatalf("after releasing the only owner: owners %+v", only.OwnerReferences)
	}
}

func toUnstructured(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	poll.Must(t, err)
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	return u
}
