package machine

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Only a claimed PersistentVolume no present Pod mounts holds the next
// Pod's turn: a disk bound to no claim, or a name the Node lists that
// matches no PersistentVolume, was never a Pod's, and must not stop the
// drain for good.
func TestReleasedVolumesAreClaimedOnes(t *testing.T) {
	pv := func(name, handle string, claimed bool) *corev1.PersistentVolume {
		p := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: handle}}}}
		if claimed {
			p.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: name}
		}
		return p
	}
	left, hand, mounted := pv("left", "h-left", true), pv("hand", "h-hand", false), pv("mounted", "h-mounted", true)
	byCSI := map[string]*corev1.PersistentVolume{}
	byName := map[string]*corev1.PersistentVolume{}
	for _, p := range []*corev1.PersistentVolume{left, hand, mounted} {
		v, _ := csiOf(p)
		byCSI[v.uniqueName()], byName[p.Name] = p, p
	}
	o := attachedObservation{
		attachmentPVs: []string{"left", "hand", "gone"},
		nodeNames:     []string{"kubernetes.io/csi/d^h-left", "kubernetes.io/csi/d^h-mounted", "kubernetes.io/csi/d^stray", "kubernetes.io/in-tree/x"},
		pvByName:      byName,
		pvByCSIName:   byCSI,
	}
	inUse := ignoredVolumes{pvNames: map[string]bool{"mounted": true}, volumes: map[csiVolume]bool{{driver: "d", handle: "h-mounted"}: true}}
	if got, want := o.released(inUse), []string{"left"}; !slices.Equal(got, want) {
		t.Errorf("released = %v, want %v (the VolumeAttachment's name for a volume listed twice)", got, want)
	}
	o.attachmentPVs = nil
	if got, want := o.released(inUse), []string{"kubernetes.io/csi/d^h-left"}; !slices.Equal(got, want) {
		t.Errorf("released by the Node alone = %v, want %v", got, want)
	}
}
