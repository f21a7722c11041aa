package features

import (
	"context"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// registerGoneBadSteps: disks the drain does not own and the claims that
// make a disk a Pod's (features/machines_gone_bad.feature).
func registerGoneBadSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a PersistentVolume "([^"]*)" that no claim binds is attached to the Node of "([^"]*)" through VolumeAttachment "([^"]*)"$`, w.unclaimedDiskAttached)
	sc.Step(`^the PersistentVolume of volume "([^"]*)" is bound to its claim and attached to the Node of "([^"]*)" through VolumeAttachment "([^"]*)"$`, w.claimedVolumeAttached)
	sc.Step(`^the VolumeAttachment "([^"]*)" is detached$`, w.volumeAttachmentDetached)
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

// claimedVolumeAttached sets the claimRef the PV controller would set when
// it binds the claim (envtest runs no PV controller), and attaches the PV
// through a VolumeAttachment as the CSI attacher would.
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
