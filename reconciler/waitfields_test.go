package reconciler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// waitPaths are the paths the tables' waits name (since, timeout), and
// some that exist but are not set, cross maps or do not exist.
var waitPaths = []string{
	"metadata.creationTimestamp", "metadata.deletionTimestamp", "metadata.generation", "metadata.labels.tier",
	"metadata.labels.none", "metadata.name",
	"status.deletion.nodeDrainStartTime", "status.deletion.waitForNodeVolumeDetachStartTime",
	"status.deletion.waitForPreDrainHookStartTime", "status.deletion.waitForPreTerminateHookStartTime",
	"status.deletion.nodeDeletionStartTime", "status.health.unhealthySince", "status.progressTime",
	"status.workloadClusterReconnectTime",
	"spec.deletion.nodeDeletionTimeoutSeconds", "spec.deletion.nodeDrainTimeoutSeconds",
	"spec.deletion.nodeVolumeDetachTimeoutSeconds", "spec.health.creationTimeoutSeconds",
	"spec.health.healthTimeoutSeconds", "spec.progressDeadlineSeconds", "spec.minReadySeconds", "spec.replicas",
	"spec.nothing.here", "status.observedGeneration",
}

// converted reads a path the way ObjectFields did before it walked typed
// objects: from the whole object converted to a map.
func converted(t *testing.T, obj client.Object) *objectFields {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &objectFields{obj: &unstructured.Unstructured{Object: m}}
}

// Reading a typed object in place gives what its converted map gives, for
// set, unset, zero and missing fields alike.
func TestObjectFieldsReadsTypedObjectsAsTheirJSON(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	full := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", Generation: 4,
		CreationTimestamp: at, DeletionTimestamp: &at, Labels: map[string]string{"tier": "3"}}}
	full.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](0)
	full.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](30)
	full.Spec.Health.CreationTimeoutSeconds = ptr.To[int32](1200)
	md0 := &clusterv1.MachineSet{}
	full.Status.Deletion = clusterv1.MachineDeletionStatus{NodeDrainStartTime: &at}
	full.Status.Health = clusterv1.MachineHealthStatus{UnhealthySince: &at}
	full.Status.ObservedGeneration = 3
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", CreationTimestamp: at}}
	md.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	md.Status.ProgressTime = &at
	for name, obj := range map[string]client.Object{
		"empty Machine": &clusterv1.Machine{}, "Machine": full,
		"empty MachineDeployment": &clusterv1.MachineDeployment{}, "MachineDeployment": md,
		"empty Cluster": &clusterv1.Cluster{}, "empty MachineSet": md0, "MachineSet": &clusterv1.MachineSet{Spec: clusterv1.MachineSetSpec{Replicas: ptr.To[int32](0)}},
	} {
		want := converted(t, obj)
		got := ObjectFields(obj, time.Time{}).(*objectFields)
		for _, p := range waitPaths {
			gt, gok := got.Time(p)
			wt, wok := want.Time(p)
			if gok != wok || !gt.Equal(wt) {
				t.Errorf("%s %s: Time = %v %v, converted %v %v", name, p, gt, gok, wt, wok)
			}
			gi, giok := got.Int(p)
			wi, wiok := want.Int(p)
			if giok != wiok || gi != wi {
				t.Errorf("%s %s: Int = %v %v, converted %v %v", name, p, gi, giok, wi, wiok)
			}
		}
	}
	// The Machine tables' paths are read in place.
	f := ObjectFields(full, time.Time{}).(*objectFields)
	for _, p := range []string{"metadata.creationTimestamp", "metadata.deletionTimestamp", "status.deletion.nodeDrainStartTime",
		"status.deletion.nodeDeletionStartTime", "status.health.unhealthySince", "spec.deletion.nodeDrainTimeoutSeconds",
		"spec.health.creationTimeoutSeconds", "spec.health.healthTimeoutSeconds"} {
		f.Time(p)
		f.Int(p)
	}
	if f.done {
		t.Error("the Machine was converted whole to read its tables' paths")
	}
}

// Reading a wait's fields of a Machine does not copy the Machine.
func TestObjectFieldsOfATypedObjectAllocatesLittle(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", CreationTimestamp: at,
		Labels: map[string]string{"a": "b", "c": "d"}, Annotations: map[string]string{"e": "f"}}}
	m.Status.Deletion = clusterv1.MachineDeletionStatus{NodeDrainStartTime: &at}
	m.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](60)
	allocs := testing.AllocsPerRun(100, func() {
		f := ObjectFields(m, time.Time{})
		f.Time("status.deletion.nodeDrainStartTime")
		f.Int("spec.deletion.nodeDrainTimeoutSeconds")
		f.Time("metadata.creationTimestamp")
	})
	// strings.Split per path and the reflect boxing of the leaves; the
	// whole-object conversion was over a hundred.
	if allocs > 20 {
		t.Errorf("%v allocations to read three fields", allocs)
	}
}
