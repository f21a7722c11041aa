// Package observerfuzz fuzzes the MachineDeployment fact observers, apart
// from actions/machinedeployment like the other controllers' fuzz targets.
package observerfuzz_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	mdactions "github.com/krtt-dev/krtt/actions/machinedeployment"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/observertest"
)

// FuzzMachineDeploymentObservers builds a Scope from fuzzed deployment
// fields (surge and unavailable as any string, negative and absurd replicas)
// and MachineSets (replicas, Machine counts, annotations) and observes every
// fact of the shipped MachineDeployment set: no observer may panic, and each
// must return one of its fact's declared values.
func FuzzMachineDeploymentObservers(f *testing.F) {
	_, runner, set := observertest.Shipped(f, mdactions.RegistryName, mdactions.Registry())

	// found, flags (deleting, finalizer, paused, spec.paused, apiError, cluster, rollout.after ahead),
	// strategy, replicas, maxSurge, maxUnavailable, history, sets (replicas, total, available each; up to 3), desired annotation.
	f.Add(true, uint8(0x22), uint8(0), int32(3), "1", "0", int32(1), int32(3), int32(3), int32(3), int32(1), int32(1), int32(0), int32(0), int32(0), int32(0), "3")
	f.Add(true, uint8(0x7f), uint8(1), int32(0), "25%", "25%", int32(0), int32(0), int32(2), int32(0), int32(5), int32(0), int32(0), int32(-1), int32(4), int32(9), "x")
	f.Add(true, uint8(0x20), uint8(2), int32(-5), "abc", "150%", int32(-1), int32(-3), int32(-2), int32(1<<30), int32(2147483647), int32(-2147483648), int32(7), int32(0), int32(0), int32(0), "")
	f.Add(false, uint8(0), uint8(3), int32(1), "0", "0", int32(1), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), "1")

	f.Fuzz(func(t *testing.T, found bool, flags, strategy uint8, replicas int32, surge, unavailable string, history int32,
		r1, t1, a1, r2, t2, a2, r3, t3, a3 int32, desired string) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		bit := func(i int) bool { return flags&(1<<i) != 0 }
		s := &mdactions.Scope{Now: now, Found: found}
		if bit(4) {
			s.Err = errors.New("injected")
		}
		if bit(5) {
			s.Cluster = &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: bit(2)}}
		}
		if found {
			md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "md", Annotations: map[string]string{}}}
			if bit(0) {
				md.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			}
			if bit(1) {
				md.Finalizers = []string{clusterv1.MachineDeploymentFinalizer}
			}
			if bit(2) {
				md.Annotations[clusterv1.PausedAnnotation] = ""
			}
			md.Spec.Paused = bit(3)
			if bit(6) {
				md.Spec.Rollout.After = &metav1.Time{Time: now.Add(time.Minute)}
			}
			md.Spec.Strategy.Type = []clusterv1.MachineDeploymentStrategyType{"", clusterv1.RollingUpdateStrategy, clusterv1.RecreateStrategy, clusterv1.OnDeleteStrategy}[strategy%4]
			md.Spec.Replicas = ptr.To(replicas)
			md.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.Parse(surge))
			md.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.Parse(unavailable))
			md.Spec.RevisionHistoryLimit = ptr.To(history)
			s.MD = md
			for i, c := range [][3]int32{{r1, t1, a1}, {r2, t2, a2}, {r3, t3, a3}} {
				if c == [3]int32{} && i > 0 {
					continue
				}
				ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms" + strconv.Itoa(i),
					Annotations: map[string]string{clusterv1.DesiredReplicasAnnotation: desired, clusterv1.RevisionAnnotation: strconv.Itoa(i + 1)}},
					Spec: clusterv1.MachineSetSpec{Replicas: ptr.To(c[0])}}
				st := &mdactions.Set{MS: ms, Total: int(c[1]), Live: int(c[1]), Ready: int(c[2]), Available: int(c[2]), Revision: int64(i + 1)}
				s.Sets = append(s.Sets, st)
				if i == 0 && strategy&4 != 0 {
					s.New = st
				} else {
					s.Old = append(s.Old, st)
				}
			}
		}
		observertest.Observe(t, runner, set, s)
	})
}
