package machineset

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

var env *localcp.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error { env = cp; return nil }))
}

// observed creates a MachineSet of 1 with its templates in a fresh
// namespace and observes it, as a reconcile would.
func observed(t *testing.T) (*Scope, string) {
	t.Helper()
	ctx := context.Background()
	ns := localcp.UniqueName("create")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}},
		&simv1.SimBootstrapConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}},
		&simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"pool": "a"}
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ms"},
		Spec: clusterv1.MachineSetSpec{ClusterName: "c1", Replicas: ptr.To[int32](1),
			Selector: clusterv1.MachineSetSelector{MatchLabels: labels},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.TemplateMetadata{Labels: labels},
				Spec: clusterv1.MachineSpec{ClusterName: "c1",
					Bootstrap:         clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfigTemplate", Name: "t"}},
					InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachineTemplate", Name: "t"}}}}}
	if err := env.Client.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	s := (&Observer{Client: env.Client}).Observe(ctx, client.ObjectKeyFromObject(ms), time.Now())
	if s.Err != nil || s.BootstrapTemplate == nil || s.InfrastructureTemplate == nil {
		t.Fatalf("observe: %v, templates %v %v", s.Err, s.BootstrapTemplate != nil, s.InfrastructureTemplate != nil)
	}
	return s, ns
}

// objects counts the objects of list's kind in ns.
func objects(t *testing.T, ns string, list client.ObjectList) int {
	t.Helper()
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return meta.LenList(list)
}

// TestCreateMachineClonesTemplates: a Machine and its two clones, named
// alike, controlled by the set, the Machine referencing the clones.
func TestCreateMachineClonesTemplates(t *testing.T) {
	s, ns := observed(t)
	m, err := createMachine(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Name, "ms-") || len(m.Name) != len("ms-")+5 {
		t.Errorf("name %q, want ms-<5 random characters>", m.Name)
	}
	if m.Spec.InfrastructureRef.Kind != "SimMachine" || m.Spec.InfrastructureRef.Name != m.Name ||
		m.Spec.Bootstrap.ConfigRef.Kind != "SimBootstrapConfig" || m.Spec.Bootstrap.ConfigRef.Name != m.Name {
		t.Errorf("references %+v %+v", m.Spec.Bootstrap.ConfigRef, m.Spec.InfrastructureRef)
	}
	if ref := metav1.GetControllerOf(m); ref == nil || ref.Kind != "MachineSet" || ref.Name != "ms" {
		t.Errorf("controller %+v", ref)
	}
	sm := &simv1.SimMachine{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: m.Name}, sm); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(sm); ref == nil || ref.Kind != "MachineSet" || sm.Labels[clusterv1.SetNameLabel] != "ms" {
		t.Errorf("clone controller %+v labels %v", ref, sm.Labels)
	}
}

// TestCreateMachineLeavesNothingHalfWay: when the infrastructure clone is
// refused, the bootstrap clone already created is deleted again and no
// Machine is created.
func TestCreateMachineLeavesNothingHalfWay(t *testing.T) {
	s, ns := observed(t)
	// A template the clone's CRD refuses (provisionDelaySeconds must be 0
	// or more): any provider's template can be wrong in ways only its
	// objects' validation finds.
	if err := unstructured.SetNestedField(s.InfrastructureTemplate.Object, int64(-1), "spec", "template", "spec", "sim", "provisionDelaySeconds"); err != nil {
		t.Fatal(err)
	}
	_, err := createMachine(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "create SimMachine") {
		t.Fatalf("error %v, want the refused SimMachine", err)
	}
	if n := objects(t, ns, &simv1.SimBootstrapConfigList{}); n != 0 {
		t.Errorf("%d SimBootstrapConfigs left behind", n)
	}
	if n := objects(t, ns, &clusterv1.MachineList{}); n != 0 {
		t.Errorf("%d Machines created", n)
	}
	if n := objects(t, ns, &simv1.SimMachineList{}); n != 0 {
		t.Errorf("%d SimMachines created", n)
	}
}
