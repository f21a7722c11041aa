package actions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestWatchFilter(t *testing.T) {
	var none ctrl.Options
	if err := WatchFilter(&none, ""); err != nil || none.Cache.ByObject != nil || none.LeaderElectionID != "" {
		t.Errorf("an empty filter changed the options: %v %+v %q", err, none.Cache.ByObject, none.LeaderElectionID)
	}

	var o ctrl.Options
	if err := WatchFilter(&o, "Team_A"); err != nil {
		t.Fatal(err)
	}
	// Every controller's objects, and nothing else.
	filtered := map[string]bool{}
	for _, c := range Controllers {
		if !c.Unfiltered {
			filtered[fmt.Sprintf("%T", c.Object)] = true
		}
	}
	if len(o.Cache.ByObject) != len(filtered) {
		t.Fatalf("cache restricted for %d kinds, want the %d kinds of the controllers", len(o.Cache.ByObject), len(filtered))
	}
	for obj, by := range o.Cache.ByObject {
		if !filtered[fmt.Sprintf("%T", obj)] {
			t.Errorf("cache restricted for %T, which no controller reconciles", obj)
		}
		if got, want := by.Label.String(), clusterv1.WatchFilterLabel+"=Team_A"; got != want {
			t.Errorf("selector %q, want %q", got, want)
		}
	}
	if got, want := o.LeaderElectionID, "team-a."+LeaderElectionID; got != want {
		t.Errorf("LeaderElectionID %q, want %q", got, want)
	}

	kept := ctrl.Options{LeaderElectionID: "mine"}
	if err := WatchFilter(&kept, "a"); err != nil || kept.LeaderElectionID != "mine" {
		t.Errorf("a given LeaderElectionID was replaced: %v %q", err, kept.LeaderElectionID)
	}

	err := WatchFilter(&ctrl.Options{}, "not a label value!")
	if err == nil || !strings.Contains(err.Error(), "--watch-filter") {
		t.Errorf("a bad value gave %v, want an error naming --watch-filter", err)
	}
}

func TestSlimCacheTrimsPods(t *testing.T) {
	var o ctrl.Options
	if err := WatchFilter(&o, "a"); err != nil {
		t.Fatal(err)
	}
	SlimCache(&o)
	if o.Cache.DefaultTransform == nil {
		t.Error("no default transform: managedFields stay in the cache")
	}
	var transform, nodeTransform func(any) (any, error)
	for obj, by := range o.Cache.ByObject {
		switch obj.(type) {
		case *corev1.Pod:
			transform = by.Transform
		case *corev1.Node:
			nodeTransform = by.Transform
		}
	}
	filtered := 0
	for _, c := range Controllers {
		if !c.Unfiltered {
			filtered++
		}
	}
	if transform == nil || nodeTransform == nil || len(o.Cache.ByObject) != filtered+2 {
		t.Fatalf("Pod transform %v, Node transform %v among %d cache entries, want both beside the filters of the %d filtered controllers",
			transform != nil, nodeTransform != nil, len(o.Cache.ByObject), filtered)
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"role": "worker"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec:       corev1.NodeSpec{ProviderID: "sim://n1", Unschedulable: true},
		Status: corev1.NodeStatus{
			Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.37.0"},
			VolumesAttached: []corev1.AttachedVolume{{Name: "kubernetes.io/csi/d^v1"}},
			Images:          []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 1}},
			Capacity:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		},
	}
	nout, err := nodeTransform(n)
	if err != nil {
		t.Fatal(err)
	}
	gn := nout.(*corev1.Node)
	if gn.ManagedFields != nil || gn.Status.Images != nil || gn.Status.Capacity != nil {
		t.Errorf("Node not trimmed: managedFields %v, images %v, capacity %v", gn.ManagedFields, gn.Status.Images, gn.Status.Capacity)
	}
	if gn.Labels["role"] != "worker" || gn.Spec.ProviderID != "sim://n1" || !gn.Spec.Unschedulable || len(gn.Status.Conditions) != 1 ||
		len(gn.Status.Addresses) != 1 || gn.Status.NodeInfo.KubeletVersion != "v1.37.0" || len(gn.Status.VolumesAttached) != 1 {
		t.Errorf("Node lost a field the Machine controller reads: %+v", gn)
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"},
			Annotations:     map[string]string{corev1.LastAppliedConfigAnnotation: "{...}", corev1.MirrorPodAnnotationKey: "x"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds"}}},
		Spec: corev1.PodSpec{NodeName: "n1", Priority: ptr.To[int32](7),
			Containers:     []corev1.Container{{Name: "app", Image: "nginx", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
			},
			Tolerations:     []corev1.Toleration{{Key: "node.kubernetes.io/not-ready"}},
			SecurityContext: &corev1.PodSecurityContext{}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app"}}, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Message: "ready"},
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}}},
	}
	out, err := transform(p)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil || got.Status.ContainerStatuses != nil || got.Annotations[corev1.LastAppliedConfigAnnotation] != "" {
		t.Errorf("not trimmed: managedFields %v, container statuses %v, annotations %v", got.ManagedFields, got.Status.ContainerStatuses, got.Annotations)
	}
	if got.Spec.Containers != nil || got.Spec.InitContainers != nil {
		t.Errorf("containers %+v / %+v, want none (nothing reads them)", got.Spec.Containers, got.Spec.InitContainers)
	}
	if c := got.Status.Conditions; len(c) != 1 || c[0].Type != corev1.DisruptionTarget || c[0].Reason != "EvictionByEvictionAPI" {
		t.Errorf("conditions %+v, want only DisruptionTarget, which marks an eviction", c)
	}
	if got.Spec.Tolerations != nil || got.Spec.SecurityContext != nil || got.Status.PodIP != "" {
		t.Errorf("not trimmed: tolerations %v, security context %v, Pod IP %q", got.Spec.Tolerations, got.Spec.SecurityContext, got.Status.PodIP)
	}
	// What the drain reads stays: the claim-backed volumes (the generic
	// ephemeral one without its template), not the token volume.
	if v := got.Spec.Volumes; len(v) != 2 || v[0].PersistentVolumeClaim.ClaimName != "data" || v[1].Name != "scratch" ||
		v[1].Ephemeral == nil || v[1].Ephemeral.VolumeClaimTemplate != nil {
		t.Errorf("volumes %+v, want data (claim) and scratch (ephemeral, no template)", v)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != corev1.DisruptionTarget {
		t.Errorf("conditions %+v, want the DisruptionTarget condition kept", got.Status.Conditions)
	}
	if got.Spec.NodeName != "n1" || *got.Spec.Priority != 7 || got.Status.Phase != corev1.PodRunning ||
		got.Labels["app"] != "web" || got.Annotations[corev1.MirrorPodAnnotationKey] != "x" || len(got.OwnerReferences) != 1 {
		t.Errorf("lost a field the drain reads: %+v", got)
	}
}

func TestRequestKind(t *testing.T) {
	for _, tc := range []struct{ method, path, watch, verb, resource, sub string }{
		{"GET", "/apis/cluster.krtt.dev/v1alpha1/machines", "", "list", "machines.cluster.krtt.dev", ""},
		{"GET", "/apis/cluster.krtt.dev/v1alpha1/namespaces/ns/machines", "true", "watch", "machines.cluster.krtt.dev", ""},
		{"PATCH", "/apis/cluster.krtt.dev/v1alpha1/namespaces/ns/machines/m/status", "", "patch", "machines.cluster.krtt.dev", "status"},
		{"POST", "/api/v1/namespaces/ns/pods/p/eviction", "", "create", "pods", "eviction"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/ns/events", "", "create", "events.events.k8s.io", ""},
		{"GET", "/api/v1/nodes/n", "", "get", "nodes", ""},
		{"DELETE", "/api/v1/nodes/n", "", "delete", "nodes", ""},
		{"GET", "/api/v1/namespaces/ns", "", "get", "namespaces", ""},
		{"PUT", "/api/v1/namespaces/ns/finalize", "", "update", "namespaces", "finalize"},
		{"GET", "/apis", "", "get", "/apis", ""},
		{"GET", "/apis/cluster.krtt.dev/v1alpha1", "", "get", "discovery", ""},
		{"GET", "/version", "", "get", "/version", ""},
	} {
		v, r, s := RequestKind(tc.method, tc.path, tc.watch)
		if v != tc.verb || r != tc.resource || s != tc.sub {
			t.Errorf("RequestKind(%s %s watch=%q) = %s %s %s, want %s %s %s", tc.method, tc.path, tc.watch, v, r, s, tc.verb, tc.resource, tc.sub)
		}
	}
}

// The mode is one structured line with the key selfHostedClusters, saying
// what it means.
func TestLogMode(t *testing.T) {
	for _, on := range []bool{true, false} {
		var lines []string
		logMode(funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}), on)
		if len(lines) != 1 {
			t.Fatalf("selfHosted %v: %d lines, want one: %q", on, len(lines), lines)
		}
		want := fmt.Sprintf(`"selfHostedClusters"=%v`, on)
		if !strings.Contains(lines[0], want) {
			t.Errorf("selfHosted %v: %s lacks %s", on, lines[0], want)
		}
		if on != strings.Contains(lines[0], "config/rbac-self-hosted") {
			t.Errorf("selfHosted %v: %s", on, lines[0])
		}
	}
}
