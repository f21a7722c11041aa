package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

var (
	env *localcp.ControlPlane
	ns  = localcp.UniqueName("validation")
	seq atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error {
		env = cp
		if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("create namespace: %w", err)
		}
		return nil
	}))
}

// freshNamespace gives a test that names its objects a namespace of its own
// for this run, so -count=N runs on one control plane (tests here do not run
// in parallel).
func freshNamespace(t *testing.T) {
	t.Helper()
	name := localcp.UniqueName("validation")
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	prev := ns
	ns = name
	t.Cleanup(func() { ns = prev })
}

// validMachine returns a Machine that the API server accepts.
func validMachine() *clusterv1.Machine {
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("m-%d", seq.Add(1))},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c1",
			Bootstrap: clusterv1.MachineBootstrap{
				ConfigRef: &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfig", Name: "b1"},
			},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachine", Name: "i1"},
		},
	}
}

func create(t *testing.T, m *clusterv1.Machine) {
	t.Helper()
	if err := env.Client.Create(context.Background(), m); err != nil {
		t.Fatalf("create valid Machine: %v", err)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error containing %q, got nil", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("want error containing %q, got: %v", p, err)
		}
	}
}

func TestValidMachineAccepted(t *testing.T) {
	m := validMachine()
	m.Spec.Bootstrap.DataSecretName = ptr.To("secret")
	m.Spec.ProviderID = ptr.To("sim://one")
	m.Spec.FailureDomain = "fd-a"
	m.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](0)
	m.Spec.Deletion.NodeVolumeDetachTimeoutSeconds = ptr.To[int32](30)
	create(t, m)

	// Only a data secret, no config ref, is fine as well.
	m2 := validMachine()
	m2.Spec.Bootstrap = clusterv1.MachineBootstrap{DataSecretName: ptr.To("secret")}
	create(t, m2)
}

func TestNodeDeletionTimeoutDefaults(t *testing.T) {
	freshNamespace(t)
	m := validMachine()
	create(t, m)
	if got := m.Spec.Deletion.NodeDeletionTimeoutSeconds; got == nil || *got != 10 {
		t.Fatalf("nodeDeletionTimeoutSeconds = %v, want 10", got)
	}

	// The default also applies when spec.deletion is absent from the request.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(),
		"kind":       "Machine",
		"metadata":   map[string]any{"namespace": ns, "name": "raw-default"},
		"spec": map[string]any{
			"clusterName":       "c1",
			"bootstrap":         map[string]any{"dataSecretName": "s"},
			"infrastructureRef": map[string]any{"apiGroup": "sim.krtt.dev", "kind": "SimMachine", "name": "i1"},
		},
	}}
	if err := env.Client.Create(context.Background(), u); err != nil {
		t.Fatalf("create: %v", err)
	}
	got, found, err := unstructured.NestedInt64(u.Object, "spec", "deletion", "nodeDeletionTimeoutSeconds")
	if err != nil || !found || got != 10 {
		t.Fatalf("nodeDeletionTimeoutSeconds = %v (found %v, err %v), want 10", got, found, err)
	}
}

// spec.health defaults to the machine-controller-manager's values when the
// request has no spec.health at all, and per field when it has some.
func TestHealthDefaults(t *testing.T) {
	freshNamespace(t)
	m := validMachine()
	create(t, m)
	h := m.Spec.Health
	if h.HealthTimeoutSeconds == nil || *h.HealthTimeoutSeconds != clusterv1.DefaultHealthTimeoutSeconds ||
		h.CreationTimeoutSeconds == nil || *h.CreationTimeoutSeconds != clusterv1.DefaultCreationTimeoutSeconds ||
		!slices.Equal(h.NodeConditions, clusterv1.DefaultHealthNodeConditions) {
		t.Fatalf("spec.health = %+v (timeouts %v, %v), want 600, 1200 and %v", h, h.HealthTimeoutSeconds, h.CreationTimeoutSeconds, clusterv1.DefaultHealthNodeConditions)
	}

	m2 := validMachine()
	m2.Spec.Health.HealthTimeoutSeconds = ptr.To[int32](30)
	create(t, m2)
	if got := m2.Spec.Health; *got.HealthTimeoutSeconds != 30 || got.CreationTimeoutSeconds == nil || *got.CreationTimeoutSeconds != 1200 || len(got.NodeConditions) != 4 {
		t.Fatalf("spec.health = %+v, want the given health timeout and the other defaults", got)
	}
}

func TestCreateRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*clusterv1.Machine)
		want   []string
	}{
		{"empty clusterName", func(m *clusterv1.Machine) { m.Spec.ClusterName = "" },
			[]string{"spec.clusterName", "at least 1 chars long"}},
		{"no bootstrap source", func(m *clusterv1.Machine) { m.Spec.Bootstrap = clusterv1.MachineBootstrap{} },
			[]string{"bootstrap needs configRef or dataSecretName"}},
		{"negative drain timeout", func(m *clusterv1.Machine) { m.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](-1) },
			[]string{"spec.deletion.nodeDrainTimeoutSeconds", "greater than or equal to 0"}},
		{"negative volume detach timeout", func(m *clusterv1.Machine) { m.Spec.Deletion.NodeVolumeDetachTimeoutSeconds = ptr.To[int32](-1) },
			[]string{"spec.deletion.nodeVolumeDetachTimeoutSeconds", "greater than or equal to 0"}},
		{"negative node deletion timeout", func(m *clusterv1.Machine) { m.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](-5) },
			[]string{"spec.deletion.nodeDeletionTimeoutSeconds", "greater than or equal to 0"}},
		{"empty infrastructureRef kind", func(m *clusterv1.Machine) { m.Spec.InfrastructureRef.Kind = "" },
			[]string{"spec.infrastructureRef.kind"}},
		{"bad infrastructureRef name", func(m *clusterv1.Machine) { m.Spec.InfrastructureRef.Name = "Not_A_Name" },
			[]string{"spec.infrastructureRef.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := validMachine()
			tc.mutate(m)
			wantErr(t, env.Client.Create(context.Background(), m), tc.want...)
		})
	}
}

func TestClusterNameRequired(t *testing.T) {
	freshNamespace(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(),
		"kind":       "Machine",
		"metadata":   map[string]any{"namespace": ns, "name": "raw-no-cluster"},
		"spec": map[string]any{
			"bootstrap":         map[string]any{"dataSecretName": "s"},
			"infrastructureRef": map[string]any{"apiGroup": "sim.krtt.dev", "kind": "SimMachine", "name": "i1"},
		},
	}}
	wantErr(t, env.Client.Create(context.Background(), u), "spec.clusterName", "Required value")
}

func TestUpdateRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(*clusterv1.Machine)
		mutate func(*clusterv1.Machine)
		want   string
	}{
		{"change clusterName", nil, func(m *clusterv1.Machine) { m.Spec.ClusterName = "c2" },
			"clusterName is immutable"},
		{"change infrastructureRef", nil, func(m *clusterv1.Machine) { m.Spec.InfrastructureRef.Name = "i2" },
			"infrastructureRef is immutable"},
		{"change providerID", func(m *clusterv1.Machine) { m.Spec.ProviderID = ptr.To("sim://a") },
			func(m *clusterv1.Machine) { m.Spec.ProviderID = ptr.To("sim://b") },
			"providerID cannot be changed or removed once set"},
		{"remove providerID", func(m *clusterv1.Machine) { m.Spec.ProviderID = ptr.To("sim://a") },
			func(m *clusterv1.Machine) { m.Spec.ProviderID = nil },
			"providerID cannot be changed or removed once set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := validMachine()
			if tc.before != nil {
				tc.before(m)
			}
			create(t, m)
			tc.mutate(m)
			wantErr(t, env.Client.Update(context.Background(), m), tc.want)
		})
	}
}

func TestUpdateAllowed(t *testing.T) {
	ctx := context.Background()
	m := validMachine()
	create(t, m)

	// Setting providerID the first time is allowed, and so is keeping it.
	m.Spec.ProviderID = ptr.To("sim://x")
	if err := env.Client.Update(ctx, m); err != nil {
		t.Fatalf("set providerID: %v", err)
	}
	m.Spec.FailureDomain = "fd-b"
	m.Spec.Bootstrap.DataSecretName = ptr.To("copied")
	if err := env.Client.Update(ctx, m); err != nil {
		t.Fatalf("update mutable fields: %v", err)
	}

	// Status is a subresource and accepts the engine's fields.
	m.Status.Phase = clusterv1.MachinePhaseProvisioning
	m.Status.State = "WaitingForInfrastructure"
	m.Status.LastTransition = &kit.LastTransition{
		Table: "normal", Row: "N1", From: "Pending", To: "WaitingForInfrastructure",
		Action: "getInfra", Outcome: "done", Time: metav1.Now(),
	}
	m.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.1"}}
	if err := env.Client.Status().Update(ctx, m); err != nil {
		t.Fatalf("status update: %v", err)
	}
	got := &clusterv1.Machine{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.LastTransition == nil || got.Status.LastTransition.Row != "N1" || got.Status.State != "WaitingForInfrastructure" {
		t.Fatalf("status not persisted: %+v", got.Status)
	}

	// Bad phase enum is rejected.
	got.Status.Phase = "Bogus"
	wantErr(t, env.Client.Status().Update(ctx, got), "status.phase", "Unsupported value")
}
