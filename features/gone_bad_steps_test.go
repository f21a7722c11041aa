package features

import (
	"context"
	"fmt"
	"time"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerGoneBadSteps: disks the drain does not own and the claims that
// make a disk a Pod's (features/machines_gone_bad.feature).
func registerGoneBadSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a PersistentVolume "([^"]*)" that no claim binds is attached to the Node of "([^"]*)" through VolumeAttachment "([^"]*)"$`, w.unclaimedDiskAttached)
	sc.Step(`^the PersistentVolume of volume "([^"]*)" is bound to its claim and attached to the Node of "([^"]*)" through VolumeAttachment "([^"]*)"$`, w.claimedVolumeAttached)
	sc.Step(`^the VolumeAttachment "([^"]*)" is detached$`, w.volumeAttachmentDetached)
	sc.Step(`^the Machine "([^"]*)" deletes a Pod after (\d+) refused evictions?$`, w.maxEvictRetries)
	sc.Step(`^a PodDisruptionBudget that waits for an unhealthy Pod blocks Pod "([^"]*)"$`, w.pdbWaitsForUnhealthyPod)
	sc.Step(`^the drain of "([^"]*)" runs again$`, w.drainRunsAgain)
}

func (w *world) maxEvictRetries(ctx context.Context, name string, n int) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) { m.Spec.Deletion.MaxEvictRetries = ptr.To(int32(n)) })
}

// pdbWaitsForUnhealthyPod: a budget that allows no disruption because one
// of the two Pods it expects is not healthy — a budget that will allow one
// again, unlike a misconfigured one.
func (w *world) pdbWaitsForUnhealthyPod(ctx context.Context, pod string) error {
	if err := w.pdbBlocks(ctx, pod); err != nil {
		return err
	}
	return w.eventually(ctx, "set PDB status", func(ctx context.Context) error {
		p := &policyv1.PodDisruptionBudget{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p); err != nil {
			return err
		}
		p.Status.ObservedGeneration = p.Generation
		p.Status.DisruptionsAllowed, p.Status.CurrentHealthy, p.Status.DesiredHealthy, p.Status.ExpectedPods = 0, 1, 2, 2
		return w.nodes.Status().Update(ctx, p)
	})
}

// drainRunsAgain wakes the Machine (an annotation changes), so the drain
// makes its next pass now rather than after its 20s requeue.
func (w *world) drainRunsAgain(ctx context.Context, name string) error {
	// A merge patch without a resourceVersion: the operator writes the
	// Machine while it drains, so an update from a read would conflict.
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{"specs.krtt.dev/drain-again":%q}}}`,
		time.Now().UTC().Format(time.RFC3339Nano)))
	return w.h.Client.Patch(ctx, m, patch)
}

// unclaimedDiskAttached: a disk attached by hand (a PersistentVolume with no
// claimRef) through a VolumeAttachment naming the PersistentVolume.
func (w *world) unclaimedDiskAttached(ctx context.Context, disk, machine, va string) error {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-" + disk},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "sim", VolumeHandle: disk}}}}
	if err := w.h.Client.Create(ctx, pv); err != nil {
		return err
	}
	return w.volumeAttachment(ctx, va, disk, machine)
}

// claimedVolumeAttached makes sure the PV carries the claimRef the PV
// controller would set when it binds the claim (envtest runs none; a PV of
// podWithVolume has it already), and attaches the PV through a
// VolumeAttachment as the CSI attacher would.
func (w *world) claimedVolumeAttached(ctx context.Context, volume, machine, va string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pv := &corev1.PersistentVolume{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Name: w.ns + "-" + volume}, pv); err != nil {
			return err
		}
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: w.ns, Name: volume}
		return w.h.Client.Update(ctx, pv)
	})
	if err != nil {
		return err
	}
	return w.volumeAttachment(ctx, va, volume, machine)
}

// volumeAttachmentDetached plays the CSI attacher once the volume is
// detached: the VolumeAttachment goes.
func (w *world) volumeAttachmentDetached(ctx context.Context, va string) error {
	obj := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-" + va}}
	if err := w.h.Client.Delete(ctx, obj); err != nil {
		return err
	}
	return w.volumeAttachmentGone(ctx, va)
}
