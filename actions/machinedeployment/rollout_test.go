package machinedeployment

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func rolloutWorld(t *testing.T) (client.Client, client.ObjectKey) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "md", UID: "md-uid", Generation: 2},
		Spec: clusterv1.MachineDeploymentSpec{Replicas: ptr.To(int32(2))}}
	md.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{Kind: "SimMachineTemplate", Name: "v2"}
	md.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": "md"}
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: "md", UID: "md-uid", Controller: ptr.To(true)}
	revision := func(name, infra, rev string, replicas int32) *clusterv1.MachineSet {
		ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{owner},
			Annotations: map[string]string{clusterv1.RevisionAnnotation: rev}},
			Spec: clusterv1.MachineSetSpec{Replicas: ptr.To(replicas)}}
		ms.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{Kind: "SimMachineTemplate", Name: infra}
		ms.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": "md", clusterv1.MachineTemplateHashLabel: name, "tier": infra}
		return ms
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(md,
		revision("md-b", "v2", "2", 1), revision("md-a", "v1", "1", 1)).Build()
	return c, client.ObjectKey{Namespace: "ns", Name: "md"}
}

func TestRolloutStatus(t *testing.T) {
	c, key := rolloutWorld(t)
	ctx := context.Background()
	md := &clusterv1.MachineDeployment{}
	for _, step := range []struct {
		status      clusterv1.MachineDeploymentStatus
		want        string
		done, stuck bool
	}{
		{clusterv1.MachineDeploymentStatus{ObservedGeneration: 1}, "spec to be observed", false, false},
		{clusterv1.MachineDeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1}, "1 of 2 new Machines", false, false},
		{clusterv1.MachineDeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2}, "1 old Machines to be deleted", false, false},
		{clusterv1.MachineDeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1}, "1 of 2 new Machines available", false, false},
		{clusterv1.MachineDeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}, "successfully rolled out", true, false},
		{clusterv1.MachineDeploymentStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{{Type: clusterv1.ProgressingCondition,
			Status: metav1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}}, "exceeded its progress deadline", false, true},
	} {
		if err := c.Get(ctx, key, md); err != nil {
			t.Fatal(err)
		}
		md.Status = step.status
		if err := c.Update(ctx, md); err != nil {
			t.Fatal(err)
		}
		msg, done, stuck, err := RolloutStatus(ctx, c, key)
		if err != nil || !strings.Contains(msg, step.want) || done != step.done || stuck != step.stuck {
			t.Errorf("status %+v: %q done %v stuck %v (%v), want ...%s... done %v stuck %v", step.status, msg, done, stuck, err, step.want, step.done, step.stuck)
		}
	}
}

func TestRolloutHistoryUndoRestart(t *testing.T) {
	c, key := rolloutWorld(t)
	ctx := context.Background()
	h, err := History(ctx, c, key)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(h), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "1\tmd-a\t1\tSimMachineTemplate/v1") ||
		!strings.HasPrefix(lines[2], "2\tmd-b") {
		t.Fatalf("history:\n%s", h)
	}
	rev, err := Undo(ctx, c, key, 0)
	if err != nil || rev != 1 {
		t.Fatalf("undo: revision %d, %v", rev, err)
	}
	md := &clusterv1.MachineDeployment{}
	if err := c.Get(ctx, key, md); err != nil {
		t.Fatal(err)
	}
	if md.Spec.Template.Spec.InfrastructureRef.Name != "v1" || md.Spec.Template.ObjectMeta.Labels["tier"] != "v1" {
		t.Errorf("template after undo %+v", md.Spec.Template)
	}
	if _, ok := md.Spec.Template.ObjectMeta.Labels[clusterv1.MachineTemplateHashLabel]; ok {
		t.Errorf("undo copied the hash label: %v", md.Spec.Template.ObjectMeta.Labels)
	}
	if _, err := Undo(ctx, c, key, 7); err == nil {
		t.Errorf("undo to a revision that does not exist succeeded")
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := Restart(ctx, c, key, now); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, md); err != nil {
		t.Fatal(err)
	}
	if md.Spec.Rollout.After == nil || !md.Spec.Rollout.After.Time.Equal(now) {
		t.Errorf("rollout.after %v, want %v", md.Spec.Rollout.After, now)
	}
}

// RollingOut lists why Machines roll out, each reason once, a version
// change first (Cluster API's setRollingOutCondition).
func TestRolloutReasons(t *testing.T) {
	m := func(status metav1.ConditionStatus, msg string) *clusterv1.Machine {
		return &clusterv1.Machine{Status: clusterv1.MachineStatus{Conditions: []metav1.Condition{{Type: clusterv1.UpToDateCondition, Status: status, Message: msg}}}}
	}
	n, got := rolloutReasons([]*clusterv1.Machine{
		m(metav1.ConditionFalse, "* SimMachine is not up-to-date"),
		m(metav1.ConditionFalse, "* SimMachine is not up-to-date\n* Version v1.30.0, v1.31.0 required"),
		m(metav1.ConditionTrue, "* ignored"),
		m(metav1.ConditionFalse, ""),
		{},
	})
	if n != 3 {
		t.Errorf("%d Machines rolling out, want the 3 whose UpToDate is False", n)
	}
	want := []string{"* Version v1.30.0, v1.31.0 required", "* SimMachine is not up-to-date"}
	if !slices.Equal(got, want) {
		t.Errorf("reasons %q, want %q", got, want)
	}
}
