package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments/status,verbs=get;update;patch

// csiUniqueNamePrefix starts the names of CSI volumes in node.status.volumesAttached.
const csiUniqueNamePrefix = "kubernetes.io/csi/"

// csiReconciler plays a CSI driver, its external attacher and (minimally)
// the PersistentVolume binder, per sim Node: every PersistentVolumeClaim
// a Pod on the Node mounts gets a PersistentVolume and an attached
// VolumeAttachment, listed in node.status.volumesAttached; a volume no Pod
// on the Node uses any more is detached.
type csiReconciler struct {
	client client.Client
}

func indexVolumeAttachments(ctx context.Context, idx client.FieldIndexer) error {
	if err := idx.IndexField(ctx, &storagev1.VolumeAttachment{}, vaNodeIndex, func(o client.Object) []string {
		if va, ok := o.(*storagev1.VolumeAttachment); ok && va.Spec.NodeName != "" {
			return []string{va.Spec.NodeName}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("sim: index VolumeAttachments by node: %w", err)
	}
	return nil
}

func setupCSI(mgr ctrl.Manager, _ Options) error {
	r := &csiReconciler{client: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("sim-csi").
		Watches(&corev1.Node{}, &handler.EnqueueRequestForObject{}, ctrlWithPredicates(simNodePredicate())).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: p.Spec.NodeName}}}
			}
			return nil
		})).
		Watches(&storagev1.VolumeAttachment{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if va, ok := o.(*storagev1.VolumeAttachment); ok && va.Spec.Attacher == CSIDriver && va.Spec.NodeName != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: va.Spec.NodeName}}}
			}
			return nil
		})).
		Complete(r)
}

// VolumeAttachmentName is the name of the sim VolumeAttachment of a PV on a Node.
func VolumeAttachmentName(pv, node string) string {
	return dnsName("sim-" + pv + "-" + node)
}

// CSIUniqueName is how node.status.volumesAttached names a sim CSI volume.
func CSIUniqueName(handle string) string {
	return csiUniqueNamePrefix + CSIDriver + "^" + handle
}

type attachment struct {
	pv, handle string
}

// Reconcile retries conflicts quietly.
func (r *csiReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return quiet(r.reconcile(ctx, req))
}

func (r *csiReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nodeName := req.Name
	node := &corev1.Node{}
	err := r.client.Get(ctx, client.ObjectKey{Name: nodeName}, node)
	switch {
	case apierrors.IsNotFound(err):
		node = nil
	case err != nil:
		return reconcile.Result{}, err
	case !isSimNode(node):
		return reconcile.Result{}, nil
	}

	// Volumes in use: every PVC mounted by a Pod on the Node that has not
	// finished (a terminating Pod still holds its volumes).
	want := map[string]attachment{} // by VolumeAttachment name
	if node != nil {
		pods := &corev1.PodList{}
		if err := r.client.List(ctx, pods, client.MatchingFields{podNodeIndex: nodeName}); err != nil {
			return reconcile.Result{}, err
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, vol := range pod.Spec.Volumes {
				if vol.PersistentVolumeClaim == nil {
					continue
				}
				a, ok, err := r.ensureVolume(ctx, pod.Namespace, vol.PersistentVolumeClaim.ClaimName)
				if err != nil {
					return reconcile.Result{}, err
				}
				if ok {
					want[VolumeAttachmentName(a.pv, nodeName)] = a
				}
			}
		}
	}

	// VolumeAttachments: attach what is wanted, detach the rest.
	vas := &storagev1.VolumeAttachmentList{}
	if err := r.client.List(ctx, vas, client.MatchingFields{vaNodeIndex: nodeName}); err != nil {
		return reconcile.Result{}, err
	}
	have := map[string]*storagev1.VolumeAttachment{}
	for i := range vas.Items {
		va := &vas.Items[i]
		if va.Spec.Attacher != CSIDriver {
			continue
		}
		if _, ok := want[va.Name]; !ok {
			if err := r.client.Delete(ctx, va); err != nil && !apierrors.IsNotFound(err) {
				return reconcile.Result{}, fmt.Errorf("detach: delete VolumeAttachment %s: %w", va.Name, err)
			}
			continue
		}
		have[va.Name] = va
	}
	attached := map[string]bool{} // volume handles
	for name, a := range want {
		va := have[name]
		if va == nil {
			va = &storagev1.VolumeAttachment{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{NodeLabel: "true"}},
				Spec: storagev1.VolumeAttachmentSpec{Attacher: CSIDriver, NodeName: nodeName,
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &a.pv}},
			}
			if err := r.client.Create(ctx, va); err != nil {
				if apierrors.IsAlreadyExists(err) {
					continue // the cache catches up and brings us back
				}
				return reconcile.Result{}, fmt.Errorf("attach: create VolumeAttachment %s: %w", name, err)
			}
		}
		if !va.Status.Attached {
			before := va.DeepCopy()
			va.Status.Attached = true
			va.Status.AttachmentMetadata = map[string]string{"devicePath": "/dev/sim/" + a.handle}
			if err := r.client.Status().Patch(ctx, va, client.MergeFrom(before)); err != nil {
				return reconcile.Result{}, fmt.Errorf("attach: VolumeAttachment %s status: %w", name, err)
			}
		}
		attached[a.handle] = true
	}

	if node == nil || !node.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	// node.status.volumesAttached in step: ours as attached, others kept.
	var volumes []corev1.AttachedVolume
	for _, av := range node.Status.VolumesAttached {
		if !strings.HasPrefix(string(av.Name), csiUniqueNamePrefix+CSIDriver+"^") {
			volumes = append(volumes, av)
		}
	}
	handles := make([]string, 0, len(attached))
	for h := range attached {
		handles = append(handles, h)
	}
	sort.Strings(handles)
	for _, h := range handles {
		volumes = append(volumes, corev1.AttachedVolume{Name: corev1.UniqueVolumeName(CSIUniqueName(h)), DevicePath: "/dev/sim/" + h})
	}
	if statusEqual(volumes, node.Status.VolumesAttached) || (len(volumes) == 0 && len(node.Status.VolumesAttached) == 0) {
		return reconcile.Result{}, nil
	}
	before := node.DeepCopy()
	node.Status.VolumesAttached = volumes
	if err := r.client.Status().Patch(ctx, node, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// ensureVolume plays the binder for one claim: the PVC gets a sim CSI
// PersistentVolume. It reports the volume to attach, or false when the
// claim does not exist or its volume is not a sim CSI volume.
func (r *csiReconciler) ensureVolume(ctx context.Context, ns, claim string) (attachment, bool, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, pvc); err != nil {
		if apierrors.IsNotFound(err) {
			return attachment{}, false, nil
		}
		return attachment{}, false, err
	}
	pvName := pvc.Spec.VolumeName
	if pvName == "" {
		pvName = dnsName("pv-" + ns + "-" + claim)
	}
	pv := &corev1.PersistentVolume{}
	err := r.client.Get(ctx, client.ObjectKey{Name: pvName}, pv)
	switch {
	case apierrors.IsNotFound(err):
		pv = newPV(pvName, pvc)
		if err := r.client.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
			return attachment{}, false, fmt.Errorf("provision PersistentVolume %s for %s/%s: %w", pvName, ns, claim, err)
		} else if err == nil {
			before := pv.DeepCopy()
			pv.Status.Phase = corev1.VolumeBound
			if err := r.client.Status().Patch(ctx, pv, client.MergeFrom(before)); err != nil {
				return attachment{}, false, err
			}
		}
	case err != nil:
		return attachment{}, false, err
	}
	if pvc.Spec.VolumeName == "" {
		before := pvc.DeepCopy()
		pvc.Spec.VolumeName = pvName
		if err := r.client.Patch(ctx, pvc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return attachment{}, false, fmt.Errorf("bind %s/%s to %s: %w", ns, claim, pvName, err)
		}
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		before := pvc.DeepCopy()
		pvc.Status.Phase = corev1.ClaimBound
		pvc.Status.AccessModes = pvc.Spec.AccessModes
		pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: claimSize(pvc)}
		if err := r.client.Status().Patch(ctx, pvc, client.MergeFrom(before)); err != nil {
			return attachment{}, false, fmt.Errorf("bind %s/%s: status: %w", ns, claim, err)
		}
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != CSIDriver {
		// Someone else's volume: not ours to attach.
		return attachment{}, false, nil
	}
	return attachment{pv: pvName, handle: pv.Spec.CSI.VolumeHandle}, true, nil
}

func claimSize(pvc *corev1.PersistentVolumeClaim) resource.Quantity {
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok && !q.IsZero() {
		return q
	}
	return resource.MustParse("1Gi")
}

func newPV(name string, pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	modes := pvc.Spec.AccessModes
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{NodeLabel: "true"},
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": CSIDriver}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: claimSize(pvc)},
			AccessModes: modes,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: CSIDriver, VolumeHandle: pvc.Namespace + "-" + pvc.Name}},
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			VolumeMode:                    pvc.Spec.VolumeMode,
		},
	}
	if pvc.Spec.StorageClassName != nil {
		pv.Spec.StorageClassName = *pvc.Spec.StorageClassName
	}
	return pv
}
