package machinedeployment

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/krtt-dev/krtt/actions/machineset"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// The MachineSets a deployment makes and what it keeps in sync on them.

// desiredSet is set.MS with what the deployment gives it in place: every
// set, old ones included (Cluster API's computeDesiredMS serves both), its
// deletion order, remediation and machine naming, the template's metadata (with the set's
// own hash label), readiness gates, minReadySeconds, taints, deletion and
// health settings, the template's labels and the deployment's annotations
// on the set itself; the current one also the highest revision. Replicas are the
// rows' business, never changed here.
func desiredSet(s *Scope, set *Set) *clusterv1.MachineSet {
	md, ms := s.MD, set.MS.DeepCopy()
	ms.Spec.Deletion = *md.Spec.Strategy.RollingUpdate.Deletion.DeepCopy()
	ms.Spec.Remediation = *md.Spec.Remediation.DeepCopy()
	ms.Spec.MachineNaming = md.Spec.MachineNaming
	// A set keeps the hash it was made with (its selector has it), the
	// current one too: it may be current by its template alone.
	hash := set.MS.Spec.Selector.MatchLabels[clusterv1.MachineTemplateHashLabel]
	if hash != "" {
		ms.Spec.Template.ObjectMeta = templateMetadata(md, hash)
	}
	ms.Spec.Template.Spec.Deletion = *md.Spec.Template.Spec.Deletion.DeepCopy()
	ms.Spec.Template.Spec.Health = *md.Spec.Template.Spec.Health.DeepCopy()
	ms.Spec.Template.Spec.ReadinessGates = slices.Clone(md.Spec.Template.Spec.ReadinessGates)
	ms.Spec.Template.Spec.MinReadySeconds = md.Spec.Template.Spec.MinReadySeconds
	ms.Spec.Template.Spec.Taints = slices.Clone(md.Spec.Template.Spec.Taints)
	copied := copiedAnnotations(md)
	ms.Annotations = reconciler.FollowManaged(ms.Annotations, reconciler.ManagedKeys(ms.Annotations, clusterv1.DeploymentAnnotationsAnnotation), copied)
	reconciler.Record(ms.Annotations, clusterv1.DeploymentAnnotationsAnnotation, copied)
	ms.Annotations[clusterv1.DisableMachineCreateAnnotation] = disableMachineCreate(s, set)
	tl := md.Spec.Template.ObjectMeta.Labels
	ms.Labels = reconciler.FollowManaged(ms.Labels, reconciler.ManagedKeys(ms.Annotations, clusterv1.DeploymentLabelsAnnotation), tl)
	reconciler.Record(ms.Annotations, clusterv1.DeploymentLabelsAnnotation, tl)
	maps.Copy(ms.Labels, setLabels(md, hash))
	if set == s.New {
		if top := maxRevision(s.Old); set.Revision <= top {
			// A rollback (the template's old MachineSet becomes the
			// newest revision again), or an adopted set without a
			// revision (Cluster API ComputeRevisionAnnotations).
			ms.Annotations[clusterv1.RevisionAnnotation] = strconv.FormatInt(top+1, 10)
		}
	}
	return ms
}

// notCopied are the deployment's annotations its MachineSets do not get
// (Cluster API mdutil annotationsToSkip): its own bookkeeping, which the
// sets carry with their own values, and kubectl's record.
var notCopied = []string{
	corev1.LastAppliedConfigAnnotation,
	clusterv1.RevisionAnnotation,
	clusterv1.DesiredReplicasAnnotation,
	clusterv1.MaxReplicasAnnotation,
	clusterv1.DisableMachineCreateAnnotation,
	clusterv1.DeploymentLabelsAnnotation,
	clusterv1.DeploymentAnnotationsAnnotation,
}

// copiedAnnotations are the deployment's annotations every MachineSet of it
// carries, in place, as Cluster API's MachineSetAnnotationsFromMachineDeployment
// (the skip-preflight-checks annotation among them).
func copiedAnnotations(md *clusterv1.MachineDeployment) map[string]string {
	out := maps.Clone(md.Annotations)
	for _, k := range notCopied {
		delete(out, k)
	}
	return out
}

// setLabels are the labels a MachineSet gets besides its deployment's
// template labels, which they override (Cluster API computeDesiredMS).
func setLabels(md *clusterv1.MachineDeployment, hash string) map[string]string {
	labels := map[string]string{
		clusterv1.DeploymentNameLabel: machineset.LabelValue(md.Name),
		clusterv1.ClusterNameLabel:    md.Spec.ClusterName,
	}
	if hash != "" {
		labels[clusterv1.MachineTemplateHashLabel] = hash
	}
	if v, ok := md.Labels[clusterv1.WatchFilterLabel]; ok {
		// The operator instance that sees the deployment must see its
		// MachineSets (and, through them, their Machines).
		labels[clusterv1.WatchFilterLabel] = v
	}
	return labels
}

// disableMachineCreate is the disable-machine-create annotation a set gets
// (Cluster API computeDesiredOldMS): "true" on the old sets of an OnDelete
// deployment, so a Machine deleted by a user is replaced by the current set
// only and never recreated by its own; "false" otherwise.
func disableMachineCreate(s *Scope, set *Set) string {
	if set != s.New && s.Strategy() == clusterv1.OnDeleteStrategy {
		return "true"
	}
	return "false"
}

// outOfSync are the sets whose in-place fields differ from the deployment's.
func outOfSync(s *Scope) []*Set {
	var out []*Set
	for _, set := range s.Sets {
		want := desiredSet(s, set)
		if !equality.Semantic.DeepEqual(want.Spec, set.MS.Spec) || !equality.Semantic.DeepEqual(want.Annotations, set.MS.Annotations) ||
			!equality.Semantic.DeepEqual(want.Labels, set.MS.Labels) {
			out = append(out, set)
		}
	}
	return out
}

func maxRevision(sets []*Set) int64 {
	var top int64
	for _, set := range sets {
		top = max(top, set.Revision)
	}
	return top
}

// templateMetadata is the MachineSet's template metadata: the deployment's
// with the hash label, so each revision's Machines are its own, and the
// cluster-name label the MachineSet puts there itself (S13; Cluster API's
// MachineDeployment webhook defaults the template with it), so the two
// controllers do not take it from each other.
func templateMetadata(md *clusterv1.MachineDeployment, hash string) clusterv1.TemplateMetadata {
	tm := *md.Spec.Template.ObjectMeta.DeepCopy()
	tm.Labels = maps.Clone(tm.Labels)
	if tm.Labels == nil {
		tm.Labels = map[string]string{}
	}
	tm.Labels[clusterv1.MachineTemplateHashLabel] = hash
	tm.Labels[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	return tm
}

// newMachineSet is the MachineSet of the current template, named after its
// hash, controlled by the deployment.
func newMachineSet(s *Scope, replicas int) *clusterv1.MachineSet {
	md := s.MD
	selector := maps.Clone(md.Spec.Selector.MatchLabels)
	selector[clusterv1.MachineTemplateHashLabel] = s.Hash
	selector[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: md.Namespace, Name: md.Name + "-" + s.Hash,
			Annotations: map[string]string{
				clusterv1.RevisionAnnotation:             strconv.FormatInt(maxRevision(s.Sets)+1, 10),
				clusterv1.DisableMachineCreateAnnotation: "false",
				clusterv1.DesiredReplicasAnnotation:      strconv.Itoa(s.Replicas()),
				clusterv1.MaxReplicasAnnotation:          strconv.Itoa(s.MaxReplicas()),
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment",
				Name: md.Name, UID: md.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: md.Spec.ClusterName,
			Replicas:    ptr.To(int32(replicas)),
			Selector:    clusterv1.MachineSetSelector{MatchLabels: selector},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: templateMetadata(md, s.Hash),
				Spec:       *md.Spec.Template.Spec.DeepCopy(),
			},
		},
	}
	set := &Set{MS: ms}
	return desiredSet(&Scope{MD: md, Hash: s.Hash, New: set}, set)
}

// historySurplus are the old sets with no replicas and no Machine beyond
// revisionHistoryLimit, oldest first.
func historySurplus(s *Scope) []*Set {
	var idle []*Set
	for _, set := range s.Old {
		if set.Spec() == 0 && set.Total == 0 {
			idle = append(idle, set)
		}
	}
	limit := 0
	if l := s.MD.Spec.RevisionHistoryLimit; l != nil {
		limit = max(0, int(*l))
	}
	if len(idle) <= limit {
		return nil
	}
	return idle[:len(idle)-limit]
}

func active(s *Scope) []*Set {
	var out []*Set
	for _, set := range s.Sets {
		if set.Spec() > 0 {
			out = append(out, set)
		}
	}
	return out
}

// replicasAnnotations are the desired-replicas and max-replicas
// annotations every set of the deployment carries (Cluster API's
// MachineSetAnnotationsFromMachineDeployment).
func replicasAnnotations(s *Scope) map[string]string {
	return map[string]string{
		clusterv1.DesiredReplicasAnnotation: strconv.Itoa(s.Replicas()),
		clusterv1.MaxReplicasAnnotation:     strconv.Itoa(s.MaxReplicas()),
	}
}

// staleReplicasAnnotations are the sets, old ones included, whose
// replicas annotations say another size.
func staleReplicasAnnotations(s *Scope) []*Set {
	want := replicasAnnotations(s)
	var out []*Set
	for _, set := range s.Sets {
		for k, v := range want {
			if set.MS.Annotations[k] != v {
				out = append(out, set)
				break
			}
		}
	}
	return out
}

// scalingEvent: a set with replicas was sized for another spec.replicas
// (Cluster API isScalingEvent).
func scalingEvent(s *Scope) bool {
	want := strconv.Itoa(s.Replicas())
	for _, set := range active(s) {
		if set.MS.Annotations[clusterv1.DesiredReplicasAnnotation] != want {
			return true
		}
	}
	return false
}

// proportions sizes the active sets for spec.replicas: a single one gets
// spec.replicas; several share spec.replicas (+ maxSurge for RollingUpdate)
// by their size against the size they were made for (their max-replicas
// annotation), the rounding left over going to the largest (Cluster API
// scale, GetProportion).
func proportions(s *Scope) map[*Set]int {
	sets := active(s)
	out := map[*Set]int{}
	r := s.Replicas()
	if len(sets) == 1 || r == 0 {
		// Scaling to 0 leaves no room for a surge: every set goes to 0.
		for _, set := range sets {
			out[set] = r
		}
		return out
	}
	allowed := r
	if s.Strategy() == clusterv1.RollingUpdateStrategy {
		surge, _ := s.Fenceposts()
		allowed += surge
	}
	current := 0
	for _, set := range sets {
		current += set.Spec()
	}
	toAdd := allowed - current
	sort.SliceStable(sets, func(i, j int) bool {
		if sets[i].Spec() != sets[j].Spec() {
			return sets[i].Spec() > sets[j].Spec()
		}
		return sets[i].Revision > sets[j].Revision
	})
	added := 0
	for _, set := range sets {
		made, err := strconv.Atoi(set.MS.Annotations[clusterv1.MaxReplicasAnnotation])
		if err != nil || made <= 0 {
			made = current
		}
		share := int(math.Round(float64(set.Spec()*allowed)/float64(made))) - set.Spec()
		if toAdd > 0 {
			share = min(share, toAdd-added)
		} else {
			share = max(share, toAdd-added)
		}
		out[set] = set.Spec() + share
		added += share
	}
	if len(sets) > 0 {
		out[sets[0]] = max(0, out[sets[0]]+toAdd-added)
	}
	return out
}

// oldScaleDowns is how far each old set with replicas may shrink now under
// RollingUpdate, oldest first: by its replicas that are not available
// (its deletion order takes Machines that are not Ready first), and by what
// the available Machines exceed spec.replicas - maxUnavailable. A set's
// Machines beyond its replicas are about to go, so only up to its replicas
// count as available. All of it is capped, as Cluster API's
// reconcileOldMachineSetsRollingUpdate caps it, by what the sets' replicas
// exceed that minimum once the Machines already leaving and the current
// set's replicas that are not available yet are taken off: a scale up
// just spread over the sets (O01) leaves no room, so the old sets keep
// their new share instead of giving back the replicas not created yet.
func oldScaleDowns(s *Scope) map[*Set]int {
	out := map[*Set]int{}
	if s.Strategy() != clusterv1.RollingUpdateStrategy {
		return out
	}
	_, unavailable := s.Fenceposts()
	minAvailable := max(0, s.Replicas()-unavailable)
	available, specs, leaving := 0, 0, 0
	for _, set := range s.Sets {
		available += min(set.Available, set.Spec())
		specs += set.Spec()
		leaving += max(0, set.Total-set.Spec())
	}
	newUnavailable := 0
	if s.New != nil {
		newUnavailable = max(0, s.New.Spec()-s.New.Available)
	}
	room := max(0, specs-leaving-minAvailable-newUnavailable)
	budget := max(0, available-minAvailable)
	for _, set := range s.Old {
		spec := set.Spec()
		if spec == 0 || room == 0 {
			continue
		}
		free := spec - min(set.Available, spec)
		n := min(spec, free+budget, room)
		budget -= max(0, n-free)
		room -= n
		if n > 0 {
			out[set] = n
		}
	}
	return out
}

// oldExcess is how far each old set with replicas shrinks, oldest first,
// when they and the current set ask for more than spec.replicas under
// OnDelete (a scale down during the rollout): Cluster API's
// reconcileOldMachineSetsOnDelete takes the excess off the old sets, never
// off the current one.
func oldExcess(s *Scope) map[*Set]int {
	out := map[*Set]int{}
	if s.MD == nil || s.Strategy() != clusterv1.OnDeleteStrategy {
		return out
	}
	excess := s.Totals().OldSpec - s.Replicas()
	if s.New != nil {
		excess += s.New.Spec()
	}
	for _, set := range s.Old {
		if excess <= 0 {
			break
		}
		if n := min(set.Spec(), excess); n > 0 {
			out[set] = n
			excess -= n
		}
	}
	return out
}

func oldScaleDown(s *Scope) int {
	n := 0
	for _, d := range oldScaleDowns(s) {
		n += d
	}
	return n
}
