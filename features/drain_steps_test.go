package features

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// registerDrainSteps: the Pods a drain meets, and what it does with each
// (the pod-verdict decision table), drain rules and force deletion.
func registerDrainSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^mirror Pod "([^"]*)" runs on the Node of "([^"]*)"$`, w.mirrorPodRuns)
	sc.Step(`^Pod "([^"]*)" with label "([^"=]*)=([^"]*)" runs on the Node of "([^"]*)"$`, w.labelledPodRuns)
	sc.Step(`^DaemonSet Pod "([^"]*)" runs on the Node of "([^"]*)"$`, w.daemonSetPodRuns)
	sc.Step(`^Pod "([^"]*)" has finished on the Node of "([^"]*)"$`, w.finishedPod)
	sc.Step(`^Pod "([^"]*)" has finished on the Node of "([^"]*)" and is held by a finalizer while it is deleted$`, w.finishedPodHeld)
	sc.Step(`^Pod "([^"]*)" is gone$`, w.podGone)
}

func (w *world) mirrorPodRuns(ctx context.Context, pod, machine string) error {
	_, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod}, func(p *corev1.Pod) {
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static"}
	})
	return err
}

func (w *world) labelledPodRuns(ctx context.Context, pod, key, value, machine string) error {
	_, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod, key: value})
	return err
}

// daemonSetPodRuns creates a DaemonSet (no controller runs it here) and a
// Pod it controls.
func (w *world) daemonSetPodRuns(ctx context.Context, pod, machine string) error {
	labels := map[string]string{"app": pod}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}}}
	if err := w.h.Client.Create(ctx, ds); err != nil {
		return err
	}
	_, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), labels, func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}
	})
	return err
}

// finishedPod plays the kubelet of a Pod that ran to completion.
func (w *world) finishedPod(ctx context.Context, pod, machine string) error {
	p, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod})
	if err != nil {
		return err
	}
	p.Status.Phase = corev1.PodSucceeded
	p.Status.Conditions = nil
	return w.h.Client.Status().Update(ctx, p)
}

// finishedPodHeld leaves a finished Pod with a deletionTimestamp that a
// finalizer keeps from going.
func (w *world) finishedPodHeld(ctx context.Context, pod, machine string) error {
	if err := w.finishedPod(ctx, pod, machine); err != nil {
		return err
	}
	return w.deleteHeld(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod}})
}

// releasePod removes the hold finalizer of a Pod, if it has one.
func (w *world) releasePod(ctx context.Context, pod string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p); err != nil {
			return client.IgnoreNotFound(err)
		}
		var keep []string
		for _, f := range p.Finalizers {
			if f != holdFinalizer {
				keep = append(keep, f)
			}
		}
		p.Finalizers = keep
		return w.h.Client.Update(ctx, p)
	})
}

func (w *world) podGone(ctx context.Context, pod string) error {
	return w.eventually(ctx, "Pod "+pod+" gone", func(ctx context.Context) error {
		p := &corev1.Pod{}
		err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("Pod %s still exists (phase %s, deleting %v)", pod, p.Status.Phase, p.DeletionTimestamp != nil)
	})
}

// keep strings imported for the steps added below.
var _ = strings.TrimSpace
