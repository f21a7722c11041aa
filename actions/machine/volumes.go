package machine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// csiUniqueVolumePrefix starts the names of CSI volumes in
// node.status.volumesAttached: kubernetes.io/csi/<driver>^<volumeHandle>.
const csiUniqueVolumePrefix = "kubernetes.io/csi/"

// csiVolume identifies a CSI volume the way node.status.volumesAttached does.
type csiVolume struct{ driver, handle string }

// parseCSIUniqueName splits kubernetes.io/csi/<driver>^<volumeHandle>.
func parseCSIUniqueName(name string) (csiVolume, bool) {
	rest, ok := strings.CutPrefix(name, csiUniqueVolumePrefix)
	if !ok {
		return csiVolume{}, false
	}
	driver, handle, ok := strings.Cut(rest, "^")
	if !ok || handle == "" {
		return csiVolume{}, false
	}
	return csiVolume{driver: driver, handle: handle}, true
}

// pvCache reads PersistentVolumes at most once per pass.
type pvCache struct {
	c  client.Client
	pv map[string]*corev1.PersistentVolume
}

// get returns the PV, or nil when it does not exist.
func (p *pvCache) get(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	if pv, ok := p.pv[name]; ok {
		return pv, nil
	}
	pv := &corev1.PersistentVolume{}
	err := p.c.Get(ctx, client.ObjectKey{Name: name}, pv)
	switch {
	case apierrors.IsNotFound(err):
		pv = nil
	case err != nil:
		return nil, fmt.Errorf("get PersistentVolume %s: %w", name, err)
	}
	p.pv[name] = pv
	return pv, nil
}

func csiOf(pv *corev1.PersistentVolume) (csiVolume, bool) {
	if pv == nil || pv.Spec.CSI == nil || pv.Spec.CSI.VolumeHandle == "" {
		return csiVolume{}, false
	}
	return csiVolume{driver: pv.Spec.CSI.Driver, handle: pv.Spec.CSI.VolumeHandle}, true
}

// ignoredVolumes are the volumes of the Pods the drain skipped: they stay
// attached while those Pods run, so the wait does not wait for them.
type ignoredVolumes struct {
	pvNames map[string]bool
	// volumes are matched by driver and handle: two drivers may use the
	// same handle for different volumes.
	volumes map[csiVolume]bool
}

func (iv ignoredVolumes) pv(name string) bool { return iv.pvNames[name] }

func (iv ignoredVolumes) csi(v csiVolume) bool { return iv.volumes[v] }

// volumesOfSkippedPods maps the skipped Pods' PersistentVolumeClaims (and
// generic ephemeral volumes) to PV names and CSI volume handles.
func volumesOfSkippedPods(ctx context.Context, s *Scope, pvs *pvCache, node *corev1.Node) (ignoredVolumes, error) {
	pods, err := skippedPods(ctx, s, node)
	if err != nil {
		return ignoredVolumes{}, err
	}
	return volumesOfPods(ctx, s.NodeClient, pvs, pods)
}

// claimNames lists the PersistentVolumeClaims a Pod mounts, generic
// ephemeral volumes included (their claim is named <pod>-<volume>).
func claimNames(pod *corev1.Pod) []string {
	var out []string
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			out = append(out, vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			out = append(out, pod.Name+"-"+vol.Name)
		}
	}
	return out
}

// volumesOfPods maps the Pods' PersistentVolumeClaims to PV names and CSI
// volume handles.
func volumesOfPods(ctx context.Context, c client.Client, pvs *pvCache, pods []*corev1.Pod) (ignoredVolumes, error) {
	iv := ignoredVolumes{pvNames: map[string]bool{}, volumes: map[csiVolume]bool{}}
	for _, pod := range pods {
		for _, claim := range claimNames(pod) {
			pvc := &corev1.PersistentVolumeClaim{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: claim}, pvc); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return iv, fmt.Errorf("get PersistentVolumeClaim %s/%s: %w", pod.Namespace, claim, err)
			}
			if pvc.Spec.VolumeName == "" {
				continue
			}
			iv.pvNames[pvc.Spec.VolumeName] = true
			pv, err := pvs.get(ctx, pvc.Spec.VolumeName)
			if err != nil {
				return iv, err
			}
			if v, ok := csiOf(pv); ok {
				iv.volumes[v] = true
			}
		}
	}
	return iv, nil
}

// waitForVolumeDetach waits until the Node reports no attached volumes,
// in node.status.volumesAttached or as attached VolumeAttachments, ignoring
// the volumes of the Pods the drain skipped.
func waitForVolumeDetach(ctx context.Context, s *Scope) engine.Outcome {
	node := s.Node()
	if node == nil {
		return engine.OK()
	}
	pvs := &pvCache{c: s.NodeClient, pv: map[string]*corev1.PersistentVolume{}}
	ignored, err := volumesOfSkippedPods(ctx, s, pvs, node)
	if err != nil {
		return engine.Fail(fmt.Errorf("volumes of the Pods the drain skipped on Node %s: %w", node.Name, err))
	}

	names, err := attachedVolumes(ctx, s.NodeClient, pvs, node, ignored)
	if err != nil {
		return engine.Fail(err)
	}
	if len(names) == 0 {
		return engine.OK()
	}
	// Cluster API's first line (attachedVolumeInformation.conditionMessage),
	// then the volumes as the Node and its VolumeAttachments name them.
	first := "Waiting for Node volumes to be detached"
	if t := s.Machine.Status.Deletion.WaitForNodeVolumeDetachStartTime; !t.IsZero() {
		first += " (started at " + t.UTC().Format(time.RFC3339) + ")"
	}
	return engine.Wait("%s\n* %s attached to Node %s: %s", first, plural(len(names), "volume"), node.Name, fewNames(names, maxNamesPerClass))
}

// attachedVolumes names the volumes attached to the Node, as attached
// VolumeAttachments (by PV name, or the attachment's name for an inline
// volume) and in node.status.volumesAttached, a volume listed in both places
// once, leaving out the ignored ones.
func attachedVolumes(ctx context.Context, c client.Client, pvs *pvCache, node *corev1.Node, ignored ignoredVolumes) ([]string, error) {
	var names []string
	// seen holds the CSI volumes already named through a VolumeAttachment,
	// so a volume listed in both places counts once.
	seen := map[csiVolume]bool{}
	vas := &storagev1.VolumeAttachmentList{}
	if err := c.List(ctx, vas); err != nil && !isNoMatch(err) {
		return nil, fmt.Errorf("list VolumeAttachments: %w", err)
	}
	for i := range vas.Items {
		va := &vas.Items[i]
		if va.Spec.NodeName != node.Name || !va.Status.Attached {
			continue
		}
		pvName := ""
		if va.Spec.Source.PersistentVolumeName != nil {
			pvName = *va.Spec.Source.PersistentVolumeName
		}
		if pvName == "" {
			// An inline volume: no PV, named by its VolumeAttachment.
			names = append(names, va.Name)
			continue
		}
		pv, err := pvs.get(ctx, pvName)
		if err != nil {
			return nil, err
		}
		v, isCSI := csiOf(pv)
		if ignored.pv(pvName) || (isCSI && ignored.csi(v)) {
			if isCSI {
				seen[v] = true
			}
			continue
		}
		if isCSI {
			if seen[v] {
				continue
			}
			seen[v] = true
		}
		names = append(names, pvName)
	}
	for _, av := range node.Status.VolumesAttached {
		name := string(av.Name)
		if v, ok := parseCSIUniqueName(name); ok {
			if seen[v] || ignored.csi(v) {
				continue
			}
			seen[v] = true
		}
		names = append(names, name)
	}

	sort.Strings(names)
	return names, nil
}
