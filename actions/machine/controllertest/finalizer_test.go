package controllertest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
)

// TestLegacyFinalizerIsReplaced: a Machine that carries the finalizer under
// its old name (written by an earlier version) gets the new one in its
// place, and its deletion still runs to the end.
func TestLegacyFinalizerIsReplaced(t *testing.T) {
	ns := setup(t, "legacy-finalizer")
	ctx := context.Background()
	running(t, ns, "m1", func(m *clusterv1.Machine) {
		m.Finalizers = []string{clusterv1.LegacyMachineFinalizer}
	})
	eventually(t, "the legacy finalizer replaced", func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, "m1")
		if err != nil {
			return err
		}
		if !slices.Equal(m.Finalizers, []string{clusterv1.MachineFinalizer}) {
			return fmt.Errorf("finalizers %v, want only %s", m.Finalizers, clusterv1.MachineFinalizer)
		}
		return nil
	})
	harness.Must(t, h.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}))
	eventually(t, "the Machine deleted", func(ctx context.Context) error {
		m, err := h.Machine(ctx, ns, "m1")
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: finalizers %v, state %s", m.Finalizers, m.Status.State)
	})
}
