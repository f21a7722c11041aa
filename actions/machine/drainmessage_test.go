package machine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The drain's message is Cluster API's EvictionResult.ConditionMessage:
// its header, Pods with a deletionTimestamp, failures sorted by the API
// server's answer (five, then a count), the Pods waited for, the ones
// evicted later last; lists of more than three names end in "... (N more)".
func TestDrainMessageAsClusterAPI(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC))
	l := &drainLeft{}
	for _, n := range []string{"ns/a", "ns/b", "ns/c", "ns/d"} {
		l.keep(&l.terminating, n)
	}
	pdb := "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget db needs 1 healthy pods and has 1 currently"
	l.fail("ns/db-0", pdb, failedEviction(pdb))
	l.fail("ns/db-1", pdb, failedEviction(pdb))
	l.fail("ns/gone-ns", namespaceTerminatingRefusal, failedEviction(namespaceTerminatingRefusal))
	l.keep(&l.waitCompleted, "ns/job")
	l.keep(&l.later, "ns/late")
	l.keep(&l.waitCompletedLater, "ns/batch")
	want := "Drain not completed yet (started at 2026-11-29T06:00:00Z):" +
		"\n* Pods ns/a, ns/b, ns/c, ... (1 more): deletionTimestamp set, but still not removed from the Node" +
		"\n* Pods ns/db-0, ns/db-1: cannot evict pod as it would violate the pod's disruption budget. The disruption budget db needs 1 healthy pods and has 1 currently" +
		"\n* Pod ns/gone-ns: failed to evict Pod, Cannot evict pod from terminating namespace: unable to create eviction (kube-controller-manager should set deletionTimestamp)" +
		"\n* Pod ns/job: waiting for completion" +
		"\nAfter above Pods have been removed from the Node, the following Pods will be evicted: ns/late" +
		"\nAfter above Pods have been removed from the Node, waiting for the following Pods to complete without eviction: ns/batch"
	if got := l.message(&started); got != want {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}
}

func TestDrainMessageCountsFailuresPastFive(t *testing.T) {
	l := &drainLeft{}
	for i, answer := range []string{"g", "f", "e", "d", "c", "b", "a"} {
		l.fail("ns/p"+answer, answer, failedEviction(answer))
		if i == 0 {
			l.fail("ns/q", answer, failedEviction(answer))
		}
	}
	want := "Drain not completed yet:" +
		"\n* Pod ns/pa: failed to evict Pod, a" +
		"\n* Pod ns/pb: failed to evict Pod, b" +
		"\n* Pod ns/pc: failed to evict Pod, c" +
		"\n* Pod ns/pd: failed to evict Pod, d" +
		"\n* Pod ns/pe: failed to evict Pod, e" +
		"\n* 3 Pods with other issues"
	if got := l.message(nil); got != want {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}
	one := &drainLeft{}
	for _, answer := range []string{"a", "b", "c", "d", "e", "f"} {
		one.fail("ns/p"+answer, answer, failedEviction(answer))
	}
	if got, tail := one.message(nil), "\n* 1 Pod with other issues"; len(got) < len(tail) || got[len(got)-len(tail):] != tail {
		t.Errorf("message %q does not end in %q", got, tail)
	}
}
