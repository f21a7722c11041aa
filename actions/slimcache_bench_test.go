package actions

import (
	"runtime"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// servedPod is a Pod as the API server returns the bench's Pods: defaulted
// container fields, the default tolerations, a token volume, the
// managedFields of its creator and of the kubelet, a Running status.
func servedPod(i int) *corev1.Pod {
	fields := func(n int) *metav1.FieldsV1 {
		raw := []byte(`{"f:metadata":{"f:labels":{}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:nodeName":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`)
		for len(raw) < n {
			raw = append(raw, ' ')
		}
		return &metav1.FieldsV1{Raw: raw}
	}
	now := metav1.Now()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "pod-" + strconv.Itoa(i), UID: types.UID("0f6c3a52-8d1e-4a8e-9c61-" + strconv.Itoa(100000000000+i)),
			ResourceVersion: strconv.Itoa(1000 + i), CreationTimestamp: now, Labels: map[string]string{"app": "bench"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "krtt-bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: fields(700)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: fields(900), Subresource: "status"},
			}},
		Spec: corev1.PodSpec{NodeName: "node-" + strconv.Itoa(i/30), TerminationGracePeriodSeconds: ptr.To[int64](1),
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			ServiceAccountName: "default", EnableServiceLinks: ptr.To(true), PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority), Priority: ptr.To[int32](0),
			SecurityContext: &corev1.PodSecurityContext{},
			Volumes: []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](420), Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
				VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, PodIP: "10.0.0.1", HostIP: "192.168.0.1", StartTime: &now,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Ready: true, Image: "registry.k8s.io/pause:3.10", ImageID: "sha256:873ed75102791e5b0b8a7fcd41606c92fcec98d56d05ead4ac5131650004c136",
				ContainerID: "containerd://4e0c4b1d6f3b0d2f0b4c5e6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c", Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}},
	}
}

// retained is the heap that stays allocated while n Pods, each passed
// through keep, are held, in bytes per Pod.
func retained(n int, keep func(any) (any, error)) float64 {
	held := make([]any, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range held {
		// A decoded object owns fresh memory, as one from a watch does.
		p, _ := keep(servedPod(i))
		held[i] = p
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkCachedPodBytes reports the heap a cached Pod costs with and
// without SlimCache's transform (30,000 Pods: 1,000 Nodes with 30 each).
// Run: go test -run '^$' -bench CachedPodBytes ./actions
func BenchmarkCachedPodBytes(b *testing.B) {
	const pods = 30000
	asIs := func(o any) (any, error) { return o, nil }
	for _, c := range []struct {
		name string
		keep func(any) (any, error)
	}{{"as-served", asIs}, {"slim", slimPod}} {
		b.Run(c.name, func(b *testing.B) {
			var perPod float64
			for range b.N {
				perPod = retained(pods, c.keep)
			}
			b.ReportMetric(perPod, "B/pod")
			b.ReportMetric(perPod*pods/(1<<20), "MiB/30k-pods")
		})
	}
}
