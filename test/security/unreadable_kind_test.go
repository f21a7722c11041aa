package security

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// acmeGroup is a provider API group the shipped role does not grant: a
// provider installed without adding its group to the operator's RBAC.
const acmeGroup = "infrastructure.acme.krtt.dev"

// TestUngrantedProviderKindDoesNotStarveTheOthers: Machines whose
// infrastructure kind the operator's RBAC does not let it list report that,
// naming the resource to grant, while a Machine on a granted kind reaches
// Running on the same two workers.
func TestUngrantedProviderKindDoesNotStarveTheOthers(t *testing.T) {
	ctx := context.Background()
	applyRBAC(t, ctx)
	// The healthy Machine's Node is in this control plane: self-hosted.
	applySelfHostedRBAC(t, ctx)
	c := env.Client
	if err := c.Create(ctx, acmeCRD()); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ns := localcp.UniqueName("acme")
	harness.Must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	_, err := harness.ClusterObjects(ctx, c, ns, "c1", true)
	harness.Must(t, err)
	const bad = 10
	for i := range bad {
		name := fmt.Sprintf("acme-%02d", i)
		// The CRD takes a moment to be served.
		harness.Await(t, poll.DefaultTimeout, "AcmeMachine served", func(ctx context.Context) error {
			o := &unstructured.Unstructured{}
			o.SetAPIVersion(acmeGroup + "/v1")
			o.SetKind("AcmeMachine")
			o.SetNamespace(ns)
			o.SetName(name)
			if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		})
		_, err := harness.MachineObjects(ctx, c, ns, "c1", name, simv1.SimBehavior{}, func(m *clusterv1.Machine) {
			m.Spec.InfrastructureRef = clusterv1.ObjectReference{APIGroup: acmeGroup, Kind: "AcmeMachine", Name: name}
		})
		harness.Must(t, err)
	}

	rec := &recorder{requests: map[access]int{}, forbidden: map[string]int{}}
	_, opMgr := startOperator(t, ctx, rec, false, true)
	// Registered after the operator's stop, so it runs first: the other
	// tests' operators share this package's watch filter and would find
	// these Machines and their ungranted kind.
	t.Cleanup(func() { removeMachines(t, ns) })
	_, err = harness.MachineObjects(ctx, c, ns, "c1", "healthy", simv1.SimBehavior{ProvisionDelaySeconds: 1})
	harness.Must(t, err)
	harness.Await(t, 90*time.Second, "the healthy Machine Running", func(ctx context.Context) error {
		m := &clusterv1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "healthy"}, m); err != nil {
			return err
		}
		if m.Status.Phase != clusterv1.MachinePhaseRunning {
			return fmt.Errorf("phase %q last row %+v", m.Status.Phase, m.Status.LastTransition)
		}
		return nil
	})
	want := []string{"cannot list or watch AcmeMachine." + acmeGroup, "RBAC forbids it",
		"grant list and watch on acmemachines." + acmeGroup, `cannot list resource "acmemachines"`}
	harness.Await(t, 60*time.Second, "the Machines on the ungranted kind report it", func(ctx context.Context) error {
		for i := range bad {
			m := &clusterv1.Machine{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("acme-%02d", i)}, m); err != nil {
				return err
			}
			lt := m.Status.LastTransition
			if lt == nil || lt.Row != "E02" {
				return fmt.Errorf("%s: last transition %+v, want row E02", m.Name, lt)
			}
			for _, w := range want {
				if !strings.Contains(lt.Message, w) {
					return fmt.Errorf("%s: %q does not say %q", m.Name, lt.Message, w)
				}
			}
		}
		return nil
	})
	// Its informer stays unsynced while the kind cannot be listed; the
	// replica stays ready (it serves its metrics) all the same.
	req, _ := http.NewRequest(http.MethodGet, "/readyz", nil)
	harness.Await(t, 30*time.Second, "the operator ready", func(context.Context) error { return actions.CacheSynced(opMgr)(req) })
}

// removeMachines deletes the namespace's Machines and lifts their
// finalizers: Machines on an ungranted kind can never finish their deletion.
func removeMachines(t *testing.T, ns string) {
	t.Helper()
	c := env.Client
	harness.Await(t, 60*time.Second, "Machines of "+ns+" gone", func(ctx context.Context) error {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			m := &list.Items[i]
			if err := c.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
				return err
			}
			if len(m.Finalizers) > 0 {
				patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
				if err := c.Patch(ctx, m, patch); client.IgnoreNotFound(err) != nil {
					return err
				}
			}
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d Machines left", len(list.Items))
		}
		return nil
	})
}

// acmeCRD serves AcmeMachine in acmeGroup.
func acmeCRD() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "acmemachines." + acmeGroup},
		"spec": map[string]any{
			"group": acmeGroup,
			"scope": "Namespaced",
			"names": map[string]any{"kind": "AcmeMachine", "listKind": "AcmeMachineList", "plural": "acmemachines", "singular": "acmemachine"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
}
