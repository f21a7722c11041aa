package machine_test

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/internal/controller/machine"
)

// A merge patch replaces whole lists, so a patch computed from a stale read
// would drop a finalizer another controller added meanwhile. The metadata
// patch must fail with a conflict instead, and write no status either.
func TestPatchNeverDropsAConcurrentWrite(t *testing.T) {
	ns := "patch"
	setup(t, ns)
	ctx := context.Background()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", Annotations: map[string]string{clusterv1.PausedAnnotation: ""}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       "c1",
			Bootstrap:         clusterv1.MachineBootstrap{DataSecretName: strPtr("data")},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachine", Name: "m1"},
		},
	}
	must(t, h.Client.Create(ctx, m))
	// Paused: once the finalizer and the Paused condition are there, the
	// operator leaves the Machine alone and only this test writes to it.
	eventually(t, "paused with the krtt finalizer", func(ctx context.Context) error {
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return err
		}
		if c := condition(m, clusterv1.PausedCondition); len(m.Finalizers) != 1 || c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("finalizers %v, Paused %+v", m.Finalizers, c)
		}
		return nil
	})
	stale := m.DeepCopy()

	// Another controller adds its finalizer.
	other := m.DeepCopy()
	other.Finalizers = append(other.Finalizers, "example.com/keep")
	must(t, h.Client.Update(ctx, other))

	// A reconcile that read the stale copy now labels the Machine and
	// changes its status.
	after := stale.DeepCopy()
	after.Labels = map[string]string{"touched": "yes"}
	after.Status.State = "Failed"
	err := machine.Patch(h.Reconcil, ctx, stale, after, &engine.Step{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("patch from a stale read: want a conflict, got %v", err)
	}
	got := &clusterv1.Machine{}
	must(t, h.Client.Get(ctx, client.ObjectKeyFromObject(m), got))
	kept := false
	for _, f := range got.Finalizers {
		kept = kept || f == "example.com/keep"
	}
	if !kept || got.Labels["touched"] != "" || got.Status.State == "Failed" {
		t.Fatalf("stale patch changed the Machine: finalizers %v labels %v state %q", got.Finalizers, got.Labels, got.Status.State)
	}

	// From a fresh read the same change lands and keeps the other finalizer.
	fresh := got.DeepCopy()
	after = got.DeepCopy()
	after.Labels = map[string]string{"touched": "yes"}
	must(t, machine.Patch(h.Reconcil, ctx, fresh, after, &engine.Step{}))
	must(t, h.Client.Get(ctx, client.ObjectKeyFromObject(m), got))
	if got.Labels["touched"] != "yes" || len(got.Finalizers) != 2 {
		t.Fatalf("fresh patch: labels %v finalizers %v", got.Labels, got.Finalizers)
	}
	// Let the Machine go.
	got.Finalizers = nil
	must(t, h.Client.Update(ctx, got))
	must(t, h.Client.Delete(ctx, got))
}

func strPtr(s string) *string { return &s }
