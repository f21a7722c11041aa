package machine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
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
	// What is attached first: with nothing, the Pods the drain skipped
	// need no verdicts, and the PersistentVolumes read serve both.
	obs, err := observeAttached(ctx, s.NodeClient, node)
	if err != nil {
		return engine.Fail(err)
	}
	if obs.none() {
		return volumesDetached(s, node)
	}
	ignored, err := volumesOfSkippedPods(ctx, s, obs.cache(s.NodeClient), node)
	if err != nil {
		return engine.Fail(fmt.Errorf("volumes of the Pods the drain skipped on Node %s: %w", node.Name, err))
	}
	attached := obs.waitSet(ignored)
	if attached.empty() {
		return volumesDetached(s, node)
	}
	return engine.Wait("%s", attached.message(s.Machine.Status.Deletion.WaitForNodeVolumeDetachStartTime))
}

// volumesDetached ends the volume wait. Cluster API tells
// NodeVolumesDetached for every Machine; krtt tells it only after a wait
// (the wait started in an earlier reconcile), so a Machine deleted without
// trouble keeps to the two Events of docs/performance.md.
func volumesDetached(s *Scope, node *corev1.Node) engine.Outcome {
	if !s.volumeWaitStarted {
		s.Told.Tell(reconciler.Tell{Reason: "NodeVolumesDetached", Related: node,
			Note: fmt.Sprintf("success waiting for node volumes detaching Machine's node %q", node.Name)})
	}
	return engine.OK()
}

// attachedVolumeSet is what still holds the volume wait, sorted as Cluster
// API's attachedVolumeInformation tells it: the claims of the attached
// PersistentVolumes, PersistentVolumes bound to no claim, and the names the
// Node or a VolumeAttachment gives that match no PersistentVolume; and
// VolumeAttachments of inline volumes, which Cluster API refuses outright
// (an error every reconcile) and krtt waits for by name.
type attachedVolumeSet struct {
	claims, unclaimedPVs, nodeNamesWithoutPV, attachmentPVNamesWithoutPV, inlineAttachments []string
}

func (a attachedVolumeSet) empty() bool {
	return len(a.claims)+len(a.unclaimedPVs)+len(a.nodeNamesWithoutPV)+len(a.attachmentPVNamesWithoutPV)+len(a.inlineAttachments) == 0
}

// maxVolumeNames is how many names a line of the volume wait lists
// (Cluster API's StringListToString).
const maxVolumeNames = 5

// message is Cluster API's attachedVolumeInformation.conditionMessage, with
// krtt's line for inline VolumeAttachments last.
func (a attachedVolumeSet) message(started *metav1.Time) string {
	msg := "Waiting for Node volumes to be detached"
	if !started.IsZero() {
		msg += " (started at " + started.UTC().Format(time.RFC3339) + ")"
	}
	for _, l := range []struct {
		what  string
		names []string
	}{
		{"PersistentVolumeClaims", a.claims},
		{"PersistentVolumes without a .spec.claimRef to a PersistentVolumeClaim", a.unclaimedPVs},
		{"Node with .status.volumesAttached entries not matching a PersistentVolume", a.nodeNamesWithoutPV},
		{"VolumeAttachment with .spec.source.persistentVolumeName not matching a PersistentVolume", a.attachmentPVNamesWithoutPV},
		{"VolumeAttachments of inline volumes (no .spec.source.persistentVolumeName)", a.inlineAttachments},
	} {
		if len(l.names) > 0 {
			msg += "\n* " + l.what + ": " + fewNames(l.names, maxVolumeNames)
		}
	}
	return msg
}

// attachedObservation is what the Node side says is attached to a Node:
// attached VolumeAttachments (by PersistentVolume name, or by their own name
// for an inline volume), node.status.volumesAttached, and the
// PersistentVolumes, by name and by CSI unique name
// (kubernetes.io/csi/<driver>^<handle>, as the Node names them), read only
// when something is attached.
type attachedObservation struct {
	attachmentPVs []string
	inline        []string
	nodeNames     []string
	pvByName      map[string]*corev1.PersistentVolume
	pvByCSIName   map[string]*corev1.PersistentVolume
}

func observeAttached(ctx context.Context, c client.Client, node *corev1.Node) (attachedObservation, error) {
	var o attachedObservation
	vas := &storagev1.VolumeAttachmentList{}
	if err := c.List(ctx, vas); err != nil && !isNoMatch(err) {
		return o, fmt.Errorf("list VolumeAttachments: %w", err)
	}
	for i := range vas.Items {
		va := &vas.Items[i]
		switch {
		case va.Spec.NodeName != node.Name || !va.Status.Attached:
		case va.Spec.Source.PersistentVolumeName == nil || *va.Spec.Source.PersistentVolumeName == "":
			o.inline = append(o.inline, va.Name)
		default:
			o.attachmentPVs = append(o.attachmentPVs, *va.Spec.Source.PersistentVolumeName)
		}
	}
	for _, av := range node.Status.VolumesAttached {
		o.nodeNames = append(o.nodeNames, string(av.Name))
	}
	if len(o.attachmentPVs)+len(o.nodeNames) == 0 {
		return o, nil
	}
	// Read only: the cache's objects are not copied (a cluster may have
	// many PersistentVolumes; a client without a cache ignores the option).
	list := &corev1.PersistentVolumeList{}
	if err := c.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return o, fmt.Errorf("list PersistentVolumes: %w", err)
	}
	o.pvByName = make(map[string]*corev1.PersistentVolume, len(list.Items))
	o.pvByCSIName = map[string]*corev1.PersistentVolume{}
	for i := range list.Items {
		pv := &list.Items[i]
		o.pvByName[pv.Name] = pv
		if v, ok := csiOf(pv); ok {
			o.pvByCSIName[v.uniqueName()] = pv
		}
	}
	return o, nil
}

// none: nothing is attached to the Node.
func (o attachedObservation) none() bool {
	return len(o.attachmentPVs)+len(o.inline)+len(o.nodeNames) == 0
}

// cache is a pvCache that already holds the PersistentVolumes o read.
func (o attachedObservation) cache(c client.Client) *pvCache {
	pvs := &pvCache{c: c, pv: map[string]*corev1.PersistentVolume{}}
	maps.Copy(pvs.pv, o.pvByName)
	return pvs
}

func (v csiVolume) uniqueName() string { return csiUniqueVolumePrefix + v.driver + "^" + v.handle }

// ignores says whether the volume of pv belongs to an ignored Pod.
func (iv ignoredVolumes) ignores(pv *corev1.PersistentVolume) bool {
	v, isCSI := csiOf(pv)
	return iv.pv(pv.Name) || (isCSI && iv.csi(v))
}

// waitSet sorts what is attached into the lines of the wait's message, a
// volume listed in both places once, leaving out the ignored ones.
func (o attachedObservation) waitSet(ignored ignoredVolumes) attachedVolumeSet {
	out := attachedVolumeSet{inlineAttachments: slices.Clone(o.inline)}
	claims, unclaimed := map[string]bool{}, map[string]bool{}
	add := func(pv *corev1.PersistentVolume) {
		switch ref := pv.Spec.ClaimRef; {
		case ignored.ignores(pv):
		case ref == nil || ref.Kind != "PersistentVolumeClaim":
			unclaimed[pv.Name] = true
		default:
			claims[ref.Namespace+"/"+ref.Name] = true
		}
	}
	for _, name := range o.attachmentPVs {
		pv := o.pvByName[name]
		switch {
		case pv != nil:
			add(pv)
		case !ignored.pv(name):
			out.attachmentPVNamesWithoutPV = append(out.attachmentPVNamesWithoutPV, name)
		}
	}
	for _, name := range o.nodeNames {
		if pv := o.pvByCSIName[name]; pv != nil {
			add(pv)
			continue
		}
		if v, ok := parseCSIUniqueName(name); !ok || !ignored.csi(v) {
			out.nodeNamesWithoutPV = append(out.nodeNamesWithoutPV, name)
		}
	}
	out.claims = slices.Collect(maps.Keys(claims))
	out.unclaimedPVs = slices.Collect(maps.Keys(unclaimed))
	for _, l := range [][]string{out.claims, out.unclaimedPVs, out.nodeNamesWithoutPV, out.attachmentPVNamesWithoutPV, out.inlineAttachments} {
		sort.Strings(l)
	}
	return out
}

// released names the attached volumes that a Pod no longer on the Node
// mounted: a PersistentVolume bound to a claim (spec.claimRef), attached
// through a VolumeAttachment or listed by the Node, that no present Pod (nor
// an ignored one) mounts; a CSI volume listed in both places once, by the
// VolumeAttachment's PersistentVolume name. A PersistentVolume bound to no
// claim (a disk attached by hand) and a name the Node lists that matches no
// PersistentVolume were never a Pod's to release: they do not hold the next
// Pod's turn (the volume wait after the drain still waits for them), so a
// leftover the drain cannot trace to a Pod never stops it.
func (o attachedObservation) released(ignored ignoredVolumes) []string {
	var names []string
	seen := map[string]bool{} // CSI unique names already named
	releasedBy := func(pv *corev1.PersistentVolume) bool {
		if v, ok := csiOf(pv); ok {
			if seen[v.uniqueName()] {
				return false
			}
			seen[v.uniqueName()] = true
		}
		return pv.Spec.ClaimRef != nil && !ignored.ignores(pv)
	}
	for _, name := range o.attachmentPVs {
		if pv := o.pvByName[name]; pv != nil && releasedBy(pv) {
			names = append(names, name)
		}
	}
	for _, name := range o.nodeNames {
		if pv := o.pvByCSIName[name]; pv != nil && releasedBy(pv) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
