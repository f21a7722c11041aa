package features

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cucumber/godog"
)

// Steps for Pods that stay terminating until the scenario lets them go: a
// drain that reaches them sees them being deleted whatever the timing, so
// the row for it (P04) fires in every run, not only when the drain happens
// to look before a kubelet finishes the Pod.
func registerTerminatingSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^Pod "([^"]*)" runs on the Node of "([^"]*)" and is held by a finalizer while it is deleted$`, w.podRunsHeld)
	sc.Step(`^the hold on Pod "([^"]*)" is released$`, w.releasePod)
}

// podRunsHeld starts a Pod, holds it with a finalizer and deletes it: it
// stays with a deletionTimestamp until released, even once a kubelet
// finished it.
func (w *world) podRunsHeld(ctx context.Context, pod, machine string) error {
	if err := w.podRuns(ctx, pod, machine); err != nil {
		return err
	}
	return w.deleteHeld(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod}})
}
