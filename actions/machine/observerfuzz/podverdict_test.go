package observerfuzz_test

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	machineactions "github.com/krtt-dev/krtt/actions/machine"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/observertest"
)

// The Pod facts the drain computes over the Node (or through the API) and
// hands the table as they are: the values their producers in actions/machine
// can return (daemonSetOf, turns, evictionRefusals), and the behaviors the
// MachineDrainRule CRD admits. The fuzzer picks among them; everything read
// from the Pod itself is fuzzed freely.
var (
	daemonSets = []string{"No", "Live", "Orphaned"}
	orderGroup = []string{"Current", "Later"}
	volumeTurn = []string{"Now", "Waiting"}
	refusals   = []string{"Below", "Exhausted", "BudgetNeverAllows"}
	behaviors  = []clusterv1.MachineDrainRuleDrainBehavior{clusterv1.DrainBehaviorDrain, clusterv1.DrainBehaviorSkip, clusterv1.DrainBehaviorWaitCompleted}
)

// FuzzPodVerdictObservers builds a Pod from fuzzed JSON and fields and asks
// the shipped Pod verdict table about it: no observer may panic, each fact
// must get one of its declared values, and the table must give one of its
// declared verdicts (no combination is left without a row).
func FuzzPodVerdictObservers(f *testing.F) {
	lib, _, _ := observertest.Shipped(f, machineactions.RegistryName, machineactions.Registry())
	decider, err := machineactions.PodVerdicts(lib.TableSet(machineactions.RegistryName))
	if err != nil {
		f.Fatal(err)
	}
	table := decider.Table()

	// pod JSON, phase, drain label value, deletion offset, flags (bit per: deleting, nodeUnreachable, force,
	// hasPVC, mirror, rule, rule order), pick (the passed-through facts and the rule's behavior).
	f.Add([]byte(`{"metadata":{"name":"p","namespace":"ns"}}`), "Running", "", int64(0), uint8(0), uint16(0))
	f.Add([]byte(`{"metadata":{"name":"p","ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"ds","controller":true}]}}`),
		"Succeeded", clusterv1.PodDrainLabelValueSkip, int64(-2*time.Second), uint8(0xff), uint16(0xffff))
	f.Add([]byte(`{"metadata":{"labels":{"cluster.krtt.dev/drain":7}}}`), "", clusterv1.PodDrainLabelValueWaitCompleted,
		int64(1<<62), uint8(0x55), uint16(0x1234))
	f.Add([]byte(`{"spec":{"volumes":[{"name":"v","persistentVolumeClaim":{"claimName":"c"}}]},"status":{"phase":"Failed"}}`),
		"\xff\x00", "wait-completed ", int64(-1<<62), uint8(0xaa), uint16(0xfedc))
	f.Add([]byte(`[]`), "Unknown", "\u00e9", int64(-time.Second), uint8(0x01), uint16(7))

	f.Fuzz(func(t *testing.T, podJSON []byte, phase, drainLabel string, deletedAgo int64, flags uint8, pick uint16) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		bit := func(i int) bool { return flags&(1<<i) != 0 }
		pod := &corev1.Pod{}
		if err := json.Unmarshal(podJSON, pod); err != nil {
			pod = &corev1.Pod{}
		}
		if phase != "" {
			pod.Status.Phase = corev1.PodPhase(phase)
		}
		if drainLabel != "" {
			if pod.Labels == nil {
				pod.Labels = map[string]string{}
			}
			pod.Labels[clusterv1.PodDrainLabel] = drainLabel
		}
		if bit(0) {
			pod.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Duration(deletedAgo))))
		}
		if bit(4) {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[corev1.MirrorPodAnnotationKey] = ""
		}
		item := &machineactions.PodItem{Pod: pod, Now: now, NodeUnreachable: bit(1), Force: bit(2), HasPVC: bit(3),
			DaemonSet: daemonSets[int(pick)%len(daemonSets)], OrderGroup: orderGroup[int(pick>>2)%len(orderGroup)],
			VolumeTurn: volumeTurn[int(pick>>3)%len(volumeTurn)], EvictionRefusals: refusals[int(pick>>4)%len(refusals)]}
		if bit(5) {
			rule := &clusterv1.MachineDrainRule{}
			rule.Spec.Drain.Behavior = behaviors[int(pick>>6)%len(behaviors)]
			if bit(6) && rule.Spec.Drain.Behavior == clusterv1.DrainBehaviorDrain {
				rule.Spec.Drain.Order = ptr.To(int32(pick >> 8))
			}
			item.Rule = rule
		}

		dec, err := decider.Decide(item)
		if err != nil {
			t.Fatalf("no verdict: %v", err)
		}
		observertest.Declared(t, table.Facts, dec.Facts)
		if !observertest.IsDeclared(table.Verdicts, dec.Verdict()) {
			t.Fatalf("row %s gives verdict %q, not a declared verdict", dec.Row.ID, dec.Verdict())
		}
	})
}
