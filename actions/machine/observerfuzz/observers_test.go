// Package observerfuzz fuzzes the Machine fact observers. It lives apart from
// actions/machine so the fuzzing workers do not each start the control plane
// that package's TestMain needs.
package observerfuzz_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	machineactions "github.com/krtt-dev/krtt/actions/machine"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/observertest"
)

// object decodes a fuzzed provider object. Anything that is JSON goes in as
// is, so the contract fields may hold the wrong types (a string where a bool
// belongs, a list where a map belongs) as a broken provider would write them.
func object(b []byte) *unstructured.Unstructured {
	if len(b) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}

// FuzzMachineObservers builds a Scope from fuzzed Machine, Cluster, provider
// and Node fields and observes every fact of the shipped set through the
// registry: no observer may panic, and each must return one of its fact's
// declared values (Observe refuses anything else).
func FuzzMachineObservers(f *testing.F) {
	_, runner, set := observertest.Shipped(f, machineactions.RegistryName, machineactions.Registry())
	// found, deleting, finalizer, flags (bit per annotation/label), cluster (0 none, 1 found, 2 deleting, 3 paused),
	// dataSecretName, providerID, nodeRef, nodes, timeouts, start offsets, bootstrap, infrastructure, control plane, annotation key, apiError.
	f.Add(true, false, true, uint16(0), uint8(1), "", "", "", uint8(0), int32(0), int32(0), int32(10), int64(0),
		[]byte(`{"status":{"initialization":{"dataSecretCreated":true},"dataSecretName":"b"}}`),
		[]byte(`{"spec":{"providerID":"sim://a"},"status":{"initialization":{"provisioned":true}}}`), []byte(nil), "", false)
	f.Add(true, true, true, uint16(0xffff), uint8(1), "s", "sim://a", "n1", uint8(1), int32(1), int32(1), int32(1), int64(-3600),
		[]byte(`{"status":{"ready":"yes","dataSecretName":7}}`),
		[]byte(`{"spec":{"providerID":["x"]},"status":{"ready":true,"addresses":"nope"}}`),
		[]byte(`{"metadata":{"deletionTimestamp":"2020-01-01T00:00:00Z"}}`), clusterv1.PreDrainDeleteHookAnnotationPrefix+"x", false)
	f.Add(false, false, false, uint16(0), uint8(0), "", "", "", uint8(3), int32(-1), int32(2147483647), int32(-2147483648), int64(1<<62),
		[]byte(`{"status":null}`), []byte(`{"spec":"x","status":{"initialization":[]}}`), []byte(`{}`), "", true)
	f.Add(true, true, true, uint16(0x5555), uint8(2), "\x00", "\u00e9\u00e9", "\xff", uint8(2), int32(2147483647), int32(0), int32(5), int64(-1<<62),
		[]byte(`[]`), []byte(`{"status":{"initialization":{"provisioned":"true"}}}`), []byte(`{"metadata":{"deletionTimestamp":42}}`),
		clusterv1.PreTerminateDeleteHookAnnotationPrefix, false)

	f.Fuzz(func(t *testing.T, found, deleting, finalizer bool, flags uint16, cluster uint8,
		dataSecretName, providerID, nodeRef string, nodes uint8, drainTimeout, volumeTimeout, nodeDeletionTimeout int32, startOffset int64,
		bootstrap, infra, controlPlane []byte, annotation string, apiError bool) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		start := metav1.NewTime(now.Add(time.Duration(startOffset)))
		s := &machineactions.Scope{Now: now, MachineFound: found, Key: types.NamespacedName{Namespace: "ns", Name: "m"}}
		if apiError {
			s.Err = errors.New("injected")
		}
		bit := func(i int) bool { return flags&(1<<i) != 0 }
		if found {
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", Annotations: map[string]string{}, Labels: map[string]string{}}}
			m.Spec.ClusterName = "c1"
			if deleting {
				m.DeletionTimestamp = ptr.To(start)
			}
			if finalizer {
				m.Finalizers = []string{clusterv1.MachineFinalizer}
			}
			if annotation != "" {
				m.Annotations[annotation] = ""
			}
			for i, k := range []string{clusterv1.PausedAnnotation, clusterv1.ExcludeNodeDrainingAnnotation,
				clusterv1.ExcludeWaitForNodeVolumeDetachAnnotation, clusterv1.PreDrainDeleteHookAnnotationPrefix + "h",
				clusterv1.PreTerminateDeleteHookAnnotationPrefix + "h"} {
				if bit(i) {
					m.Annotations[k] = ""
				}
			}
			if bit(5) {
				m.Labels[clusterv1.ClusterNameLabel] = "c1"
			}
			if bit(6) {
				m.Labels[clusterv1.ControlPlaneLabel] = ""
			}
			if bit(7) {
				m.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1"}}
			}
			if bit(8) {
				m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{Kind: "MachineSet", Name: "ms", Controller: ptr.To(true)})
			}
			if bit(9) {
				m.Spec.Bootstrap.ConfigRef = &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfig", Name: "b"}
			}
			if bit(10) {
				m.Spec.Bootstrap.DataSecretName = ptr.To(dataSecretName)
			}
			if bit(11) {
				m.Spec.ProviderID = ptr.To(providerID)
			}
			if bit(12) {
				m.Status.NodeRef = &clusterv1.MachineNodeReference{Name: nodeRef}
			}
			if bit(13) {
				m.Status.Initialization.InfrastructureProvisioned = ptr.To(bit(14))
			}
			m.Spec.Deletion = clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: &drainTimeout,
				NodeVolumeDetachTimeoutSeconds: &volumeTimeout, NodeDeletionTimeoutSeconds: &nodeDeletionTimeout}
			if bit(15) {
				m.Status.Deletion = clusterv1.MachineDeletionStatus{NodeDrainStartTime: &start,
					WaitForNodeVolumeDetachStartTime: &start, NodeDeletionStartTime: &start,
					WaitForPreDrainHookStartTime: &start, WaitForPreTerminateHookStartTime: &start}
			}
			s.Machine = m
		}
		switch cluster % 4 {
		case 1:
			s.Cluster = &clusterv1.Cluster{}
		case 2:
			s.Cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr.To(start)}}
		case 3:
			s.Cluster = &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: true}}
		}
		s.Bootstrap, s.Infrastructure, s.ControlPlane = object(bootstrap), object(infra), object(controlPlane)
		s.ControlPlaneMachines = int(cluster / 4)
		for i := range int(nodes % 4) {
			s.Nodes = append(s.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeRef + string(rune('a'+i))},
				Spec: corev1.NodeSpec{ProviderID: providerID}})
		}

		observertest.Observe(t, runner, set, s)
	})
}
