package v1alpha1_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// kubectl get kma prints what the API server's Table for Machines holds:
// VERSION from spec.version, AVAILABLE, UP-TO-DATE and PAUSED from those
// conditions (a Machine of no MachineDeployment has no UpToDate), DELETING
// only for a Machine being deleted, and the row only with -o wide.
func TestMachineColumns(t *testing.T) {
	freshNamespace(t)
	ctx := context.Background()
	running, deleting := validMachine(), validMachine()
	running.Spec.Version = "v1.37.0"
	create(t, running)
	create(t, deleting)
	set := func(m *clusterv1.Machine, state, step string, paused metav1.ConditionStatus) {
		m.Status.State, m.Status.Deletion.Step = state, step
		if step == "" {
			m.Status.NodeInfo = &corev1.NodeSystemInfo{OSImage: "Debian GNU/Linux 13 (trixie)"}
		}
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.PausedCondition, Status: paused, Reason: "R", LastTransitionTime: metav1.Now()},
			{Type: clusterv1.AvailableCondition, Status: paused, Reason: "R", LastTransitionTime: metav1.Now()}}
		if step == "" {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.UpToDateCondition, Status: metav1.ConditionFalse, Reason: "NotUpToDate", LastTransitionTime: metav1.Now()})
		}
		if err := env.Client.Status().Update(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	set(running, "Running", "", metav1.ConditionTrue)
	set(deleting, "DrainingNode", "DrainingNode", metav1.ConditionFalse)

	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/apis", clusterv1.GroupVersion.Group, clusterv1.GroupVersion.Version, "namespaces", running.Namespace, "machines").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var names, wide []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		} else {
			wide = append(wide, c.Name)
		}
	}
	if want := []string{"Name", "Cluster", "Node", "Phase", "Ready", "Available", "Up-to-date", "Paused", "Deleting", "Version", "Age"}; !slices.Equal(names, want) {
		t.Errorf("columns %v, want %v", names, want)
	}
	if want := []string{"ProviderID", "OS-Image", "Row"}; !slices.Equal(wide, want) {
		t.Errorf("-o wide columns %v, want %v", wide, want)
	}
	cell := func(row metav1.TableRow, column string) any {
		i := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Name == column })
		return row.Cells[i]
	}
	want := map[string]map[string]any{
		running.Name:  {"Version": "v1.37.0", "Available": "True", "Up-to-date": "False", "Paused": "True", "Deleting": nil, "OS-Image": "Debian GNU/Linux 13 (trixie)"},
		deleting.Name: {"Version": nil, "Available": "False", "Up-to-date": nil, "Paused": "False", "Deleting": "DrainingNode", "OS-Image": nil},
	}
	if len(table.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(table.Rows))
	}
	for _, row := range table.Rows {
		name, _ := cell(row, "Name").(string)
		for col, v := range want[name] {
			if got := cell(row, col); got != v {
				t.Errorf("%s: %s = %#v, want %#v", name, col, got, v)
			}
		}
	}
}
