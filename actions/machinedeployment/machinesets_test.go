package machinedeployment

import (
	corev1 "k8s.io/api/core/v1"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/krtt-dev/krtt/actions/uptodate"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func deployment(replicas int, surge, unavailable string) *clusterv1.MachineDeployment {
	md := &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Replicas: ptr.To(int32(replicas))}}
	md.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.Parse(surge))
	md.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.Parse(unavailable))
	return md
}

// set is a MachineSet of spec replicas with total Machines, available of
// them available, sized for a deployment of max replicas.
func set(name string, spec, total, available, max int) *Set {
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{clusterv1.MaxReplicasAnnotation: strconv.Itoa(max)}},
		Spec: clusterv1.MachineSetSpec{Replicas: ptr.To(int32(spec))}}
	return &Set{MS: ms, Total: total, Live: total, Ready: available, Available: available}
}

func scope(md *clusterv1.MachineDeployment, old []*Set, cur *Set) *Scope {
	s := &Scope{MD: md, Old: old, New: cur}
	s.Sets = append(append(s.Sets, old...), cur)
	return s
}

func TestFenceposts(t *testing.T) {
	for _, c := range []struct {
		replicas                  int
		surge, unavailable        string
		wantSurge, wantUnavailabe int
	}{
		{3, "1", "0", 1, 0},
		{10, "25%", "25%", 3, 2}, // surge rounds up, unavailable down
		{3, "0", "0", 0, 1},      // both 0: one may be unavailable, or nothing moves
		{3, "0%", "0%", 0, 1},
	} {
		s := &Scope{MD: deployment(c.replicas, c.surge, c.unavailable)}
		if su, un := s.Fenceposts(); su != c.wantSurge || un != c.wantUnavailabe {
			t.Errorf("%d replicas, maxSurge %s, maxUnavailable %s: got %d/%d, want %d/%d", c.replicas, c.surge, c.unavailable, su, un, c.wantSurge, c.wantUnavailabe)
		}
	}
}

// The max-replicas annotation adds maxSurge only under RollingUpdate, as
// Cluster API's MaxSurge (0 for the other strategies).
func TestMaxReplicas(t *testing.T) {
	for _, c := range []struct {
		strategy clusterv1.MachineDeploymentStrategyType
		want     int
	}{
		{"", 4},
		{clusterv1.RollingUpdateStrategy, 4},
		{clusterv1.OnDeleteStrategy, 3},
		{clusterv1.RecreateStrategy, 3},
	} {
		md := deployment(3, "1", "0")
		md.Spec.Strategy.Type = c.strategy
		if got := (&Scope{MD: md}).MaxReplicas(); got != c.want {
			t.Errorf("strategy %q: max-replicas %d, want %d", c.strategy, got, c.want)
		}
	}
}

// TestRollingLimits walks a rolling update of 3 (maxSurge 1, maxUnavailable
// 0) the way the rows take it, checking what each step allows.
func TestRollingLimits(t *testing.T) {
	md := deployment(3, "1", "0")
	old, cur := set("old", 3, 3, 3, 4), set("new", 0, 0, 0, 4)
	s := scope(md, []*Set{old}, cur)
	if got := s.NewTarget(); got != 1 {
		t.Fatalf("new set may grow to %d, want 1 (4 Machines at most)", got)
	}
	if got := oldScaleDown(s); got != 0 {
		t.Fatalf("old sets may shrink by %d with nothing new available, want 0", got)
	}
	cur.MS.Spec.Replicas, cur.Total, cur.Live = ptr.To(int32(1)), 1, 1
	if got := s.NewTarget(); got != 1 {
		t.Fatalf("new set may grow to %d with 4 Machines, want 1", got)
	}
	if got := oldScaleDown(s); got != 0 {
		t.Fatalf("old sets may shrink by %d while the new Machine is not available, want 0", got)
	}
	cur.Ready, cur.Available = 1, 1
	if got := oldScaleDowns(s)[old]; got != 1 {
		t.Fatalf("old set may shrink by %d with one new Machine available, want 1", got)
	}
	// The old set asks for 2; its third Machine is still there (being
	// deleted or not yet): it counts, so nothing new may be created and
	// nothing more deleted.
	old.MS.Spec.Replicas = ptr.To(int32(2))
	if got := s.NewTarget(); got != 1 {
		t.Fatalf("new set may grow to %d while the old Machine is not gone, want 1", got)
	}
	if got := oldScaleDown(s); got != 0 {
		t.Fatalf("old set may shrink by %d again before its Machine went, want 0", got)
	}
	old.Total, old.Live, old.Ready, old.Available = 2, 2, 2, 2
	if got := s.NewTarget(); got != 2 {
		t.Fatalf("new set may grow to %d once the old Machine is gone, want 2", got)
	}
}

func TestOldScaleDownTakesUnavailableFirst(t *testing.T) {
	md := deployment(3, "1", "0")
	// The old set has a Machine that is not Ready: it may go at once
	// without taking anything available.
	old, cur := set("old", 3, 3, 2, 4), set("new", 1, 1, 1, 4)
	s := scope(md, []*Set{old}, cur)
	if got := oldScaleDowns(s)[old]; got != 1 {
		t.Fatalf("got %d, want 1 (the unavailable one; 3 available = the minimum)", got)
	}
	md.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	if got := oldScaleDowns(s)[old]; got != 2 {
		t.Fatalf("got %d, want 2 with maxUnavailable 1", got)
	}
}

// TestOldScaleDownAfterScaleUp: a scale from 3 to 6 during a rollout gave
// the old set 5 replicas it has no Machines for yet; they are not
// "unavailable Machines" to take back while the current set's own replicas
// are not available either.
func TestOldScaleDownAfterScaleUp(t *testing.T) {
	md := deployment(6, "1", "0")
	old, cur := set("old", 5, 3, 3, 7), set("new", 2, 1, 0, 7)
	s := scope(md, []*Set{old}, cur)
	if got := oldScaleDown(s); got != 0 {
		t.Fatalf("old set may shrink by %d right after the scale, want 0", got)
	}
	cur.Total, cur.Live, cur.Ready, cur.Available = 2, 2, 2, 2
	if got := oldScaleDowns(s)[old]; got != 1 {
		t.Fatalf("got %d, want 1 (7 replicas, 6 must stay available)", got)
	}
}

func TestRecreateAndOnDeleteTargets(t *testing.T) {
	md := deployment(3, "1", "0")
	md.Spec.Strategy.Type = clusterv1.RecreateStrategy
	old, cur := set("old", 0, 1, 0, 4), set("new", 0, 0, 0, 4)
	s := scope(md, []*Set{old}, cur)
	if got := s.NewTarget(); got != 0 {
		t.Fatalf("Recreate: new set may grow to %d while an old Machine exists, want 0", got)
	}
	old.Total, old.Live = 0, 0
	if got := s.NewTarget(); got != 3 {
		t.Fatalf("Recreate: new set may grow to %d once old Machines are gone, want 3", got)
	}
	md.Spec.Strategy.Type = clusterv1.OnDeleteStrategy
	old.MS.Spec.Replicas = ptr.To(int32(2))
	if got := s.NewTarget(); got != 1 {
		t.Fatalf("OnDelete: new set may grow to %d, want what the old leaves: 1", got)
	}
}

func TestProportions(t *testing.T) {
	// A rollout of 3 (surge 1) under way, scaled to 6 (surge still 1):
	// 7 Machines at most, spread 3:1 → 5:2.
	md := deployment(6, "1", "0")
	old, cur := set("old", 3, 3, 3, 4), set("new", 1, 1, 0, 4)
	s := scope(md, []*Set{old}, cur)
	got := proportions(s)
	if got[old] != 5 || got[cur] != 2 {
		t.Fatalf("got old %d new %d, want 5 and 2", got[old], got[cur])
	}
	// Scaled down to 1 (surge 1): 2 at most, 3:1 → 2:0 after rounding,
	// the rest going to the largest.
	md.Spec.Replicas = ptr.To(int32(1))
	got = proportions(s)
	if got[old]+got[cur] != 2 || got[old] < got[cur] {
		t.Fatalf("got old %d new %d, want 2 in all, the larger to old", got[old], got[cur])
	}
	// To 0: every set to 0.
	md.Spec.Replicas = ptr.To(int32(0))
	got = proportions(s)
	if got[old] != 0 || got[cur] != 0 {
		t.Fatalf("got old %d new %d, want 0 and 0", got[old], got[cur])
	}
	// A single set with replicas gets spec.replicas.
	md.Spec.Replicas = ptr.To(int32(4))
	old.MS.Spec.Replicas = ptr.To(int32(0))
	got = proportions(s)
	if len(got) != 1 || got[cur] != 4 {
		t.Fatalf("got %v, want only the new set at 4", got)
	}
}

func TestTemplateHash(t *testing.T) {
	md := deployment(3, "1", "0")
	md.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{Kind: "SimMachineTemplate", Name: "a"}
	now := time.Now()
	h := uptodate.Hash(md, now)
	// Fields that do not roll leave the hash alone.
	md.Spec.Template.ObjectMeta.Labels = map[string]string{"tier": "web"}
	md.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To(int32(60))
	md.Spec.Replicas = ptr.To(int32(5))
	md.Spec.Template.Spec.MinReadySeconds = 30
	md.Spec.Template.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "example.com/Installed"}}
	if got := uptodate.Hash(md, now); got != h {
		t.Fatalf("hash changed to %s on fields that do not roll (was %s)", got, h)
	}
	md.Spec.Rollout.After = &metav1.Time{Time: now.Add(time.Minute)}
	if got := uptodate.Hash(md, now); got != h {
		t.Fatalf("hash changed before rollout.after")
	}
	if got := uptodate.Hash(md, now.Add(2*time.Minute)); got == h {
		t.Fatalf("hash did not change once rollout.after passed")
	}
	md.Spec.Rollout.After = nil
	// A template without a version hashes as it did before the version
	// was hashed: upgrading the operator rolls nothing.
	if h != "74b66d49b9" {
		t.Fatalf("hash of a template without a version is %s, was 74b66d49b9", h)
	}
	md.Spec.Template.Spec.Version = "v1.37.0"
	v1 := uptodate.Hash(md, now)
	if v1 == h {
		t.Fatalf("hash did not change with the version")
	}
	md.Spec.Template.Spec.Version = "v1.37.1"
	if got := uptodate.Hash(md, now); got == v1 {
		t.Fatalf("hash did not change with a version upgrade")
	}
	md.Spec.Template.Spec.InfrastructureRef.Name = "b"
	if got := uptodate.Hash(md, now); got == h {
		t.Fatalf("hash did not change with the infrastructure template")
	}
}

func TestHistorySurplus(t *testing.T) {
	md := deployment(3, "1", "0")
	a, b, c := set("a", 0, 0, 0, 4), set("b", 0, 0, 0, 4), set("c", 0, 1, 0, 4)
	cur := set("new", 3, 3, 3, 4)
	s := scope(md, []*Set{a, b, c}, cur)
	// By default none is kept, as in Cluster API; c still has a Machine.
	if got := historySurplus(s); len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("got %v, want both idle sets, oldest first (default limit 0)", got)
	}
	md.Spec.RevisionHistoryLimit = ptr.To(int32(1))
	if got := historySurplus(s); len(got) != 1 || got[0] != a {
		t.Fatalf("got %v, want only the oldest idle set with limit 1", got)
	}
}

// OnDelete scaled down during a rollout: the old sets give up the excess,
// oldest first, and the current one keeps its replicas (Cluster API
// reconcileOldMachineSetsOnDelete, golden "ondelete ... scale down").
func TestOldExcessOnDelete(t *testing.T) {
	md := deployment(3, "1", "0")
	md.Spec.Strategy.Type = clusterv1.OnDeleteStrategy
	a, b := set("a", 2, 2, 2, 6), set("b", 2, 2, 2, 6)
	cur := set("new", 2, 2, 2, 6)
	s := scope(md, []*Set{a, b}, cur)
	got := oldExcess(s)
	if len(got) != 2 || got[a] != 2 || got[b] != 1 {
		t.Fatalf("got a %d, b %d (%d sets), want a 2 and b 1 off: 6 asked, 3 wanted", got[a], got[b], len(got))
	}
	md.Spec.Replicas = ptr.To(int32(6))
	if got := oldExcess(s); len(got) != 0 {
		t.Fatalf("got %v, want nothing off at spec.replicas", got)
	}
	// Other strategies shrink old sets by their own rows.
	md.Spec.Replicas = ptr.To(int32(3))
	md.Spec.Strategy.Type = clusterv1.RollingUpdateStrategy
	if got := oldExcess(s); len(got) != 0 {
		t.Fatalf("got %v under RollingUpdate, want nothing", got)
	}
}

// TestInPlaceFieldsReachEverySet: readiness gates and minReadySeconds, like
// the deletion and health settings, reach old MachineSets as well as the
// current one, without a new revision (Cluster API syncs
// spec.readinessGates and spec.minReadySeconds in place).
func TestInPlaceFieldsReachEverySet(t *testing.T) {
	md := deployment(3, "1", "0")
	old, cur := set("old", 1, 1, 1, 4), set("new", 2, 2, 2, 4)
	s := scope(md, []*Set{old}, cur)
	for _, st := range s.Sets {
		st.MS = desiredSet(s, st)
	}
	if got := outOfSync(s); len(got) != 0 {
		t.Fatalf("sets out of sync before any change: %d", len(got))
	}
	md.Spec.Template.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "example.com/Installed", Polarity: clusterv1.PositivePolarity}}
	md.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To(int32(60))
	md.Spec.Template.Spec.MinReadySeconds = 30
	md.Spec.Template.Spec.Taints = []clusterv1.MachineTaint{{Key: "example.com/dedicated", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.TaintPropagationAlways}}
	md.Spec.MachineNaming.Template = "{{ .cluster.name }}-{{ .random }}"
	if got := outOfSync(s); len(got) != 2 {
		t.Fatalf("%d sets out of sync after a gate was added, want both", len(got))
	}
	for _, st := range []*Set{old, cur} {
		want := desiredSet(s, st)
		if g := want.Spec.Template.Spec.ReadinessGates; len(g) != 1 || g[0].ConditionType != "example.com/Installed" {
			t.Errorf("%s: readinessGates %+v", st.MS.Name, g)
		}
		if want.Spec.Template.Spec.MinReadySeconds != 30 {
			t.Errorf("%s: minReadySeconds %d", st.MS.Name, want.Spec.Template.Spec.MinReadySeconds)
		}
		if ts := want.Spec.Template.Spec.Taints; len(ts) != 1 || ts[0].Key != "example.com/dedicated" {
			t.Errorf("%s: taints %+v", st.MS.Name, ts)
		}
		if ptr.Deref(want.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds, 0) != 60 {
			t.Errorf("%s: deletion %+v", st.MS.Name, want.Spec.Template.Spec.Deletion)
		}
		if want.Spec.MachineNaming.Template != md.Spec.MachineNaming.Template {
			t.Errorf("%s: machineNaming %+v", st.MS.Name, want.Spec.MachineNaming)
		}
	}
}

// TestSkipPreflightChecksReachEverySet: the deployment's value wins on every
// set; without one, a set keeps the value it was given.
func TestSkipPreflightChecksReachEverySet(t *testing.T) {
	md := deployment(3, "1", "0")
	old, cur := set("old", 1, 1, 1, 4), set("new", 2, 2, 2, 4)
	cur.MS.Annotations[clusterv1.SkipPreflightChecksAnnotation] = "ControlPlaneIsStable"
	s := scope(md, []*Set{old}, cur)
	if got := desiredSet(s, old).Annotations[clusterv1.SkipPreflightChecksAnnotation]; got != "" {
		t.Errorf("old set without the annotation anywhere: got %q", got)
	}
	if got := desiredSet(s, cur).Annotations[clusterv1.SkipPreflightChecksAnnotation]; got != "ControlPlaneIsStable" {
		t.Errorf("a set's own value without one on the deployment: got %q, want it kept", got)
	}
	md.Annotations = map[string]string{clusterv1.SkipPreflightChecksAnnotation: "All"}
	if got := outOfSync(s); len(got) != 2 {
		t.Fatalf("%d sets out of sync after the deployment got the annotation, want both", len(got))
	}
	for _, st := range []*Set{old, cur} {
		if got := desiredSet(s, st).Annotations[clusterv1.SkipPreflightChecksAnnotation]; got != "All" {
			t.Errorf("%s: got %q, want the deployment's All", st.MS.Name, got)
		}
	}
	cur.MS = desiredSet(s, cur)
	md.Annotations = nil
	if got, ok := desiredSet(s, cur).Annotations[clusterv1.SkipPreflightChecksAnnotation]; ok {
		t.Errorf("the deployment dropped the annotation it gave: the set keeps %q", got)
	}
}

// TestSetsFollowTheDeploymentsMetadata: as Cluster API's computeDesiredMS,
// every set carries the deployment's annotations (not its bookkeeping) and
// its template's labels, in place; a key the deployment drops goes, keys
// others put on the set stay, and the set's own labels always win.
func TestSetsFollowTheDeploymentsMetadata(t *testing.T) {
	md := deployment(3, "1", "0")
	md.Annotations = map[string]string{"team": "blue", clusterv1.RevisionAnnotation: "7", clusterv1.DesiredReplicasAnnotation: "9"}
	md.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": "a", clusterv1.ClusterNameLabel: "wrong"}
	old := set("old", 1, 1, 1, 4)
	old.MS.Labels = map[string]string{"by-hand": "x"}
	old.MS.Annotations["by-hand"] = "y"
	s := scope(md, []*Set{old}, set("new", 2, 2, 2, 4))
	ms := desiredSet(s, old)
	if ms.Annotations["team"] != "blue" || ms.Annotations[clusterv1.RevisionAnnotation] == "7" || ms.Annotations[clusterv1.DesiredReplicasAnnotation] == "9" {
		t.Errorf("annotations %v: want team copied, revision and desired replicas the set's own", ms.Annotations)
	}
	if ms.Labels["pool"] != "a" || ms.Labels[clusterv1.ClusterNameLabel] != md.Spec.ClusterName || ms.Labels[clusterv1.DeploymentNameLabel] != md.Name {
		t.Errorf("labels %v: want pool copied, cluster and deployment name the set's own", ms.Labels)
	}
	old.MS = ms
	md.Annotations = nil
	md.Spec.Template.ObjectMeta.Labels = nil
	ms = desiredSet(s, old)
	if _, ok := ms.Annotations["team"]; ok {
		t.Errorf("annotations %v: team stays after the deployment dropped it", ms.Annotations)
	}
	if _, ok := ms.Labels["pool"]; ok {
		t.Errorf("labels %v: pool stays after the template dropped it", ms.Labels)
	}
	if ms.Labels["by-hand"] != "x" || ms.Annotations["by-hand"] != "y" {
		t.Errorf("labels %v, annotations %v: keys put on the set by hand must stay", ms.Labels, ms.Annotations)
	}
}

// TestCurrentSet: which MachineSet is the current template's, as Cluster
// API's FindNewAndOldMachineSets picks it around spec.rollout.after.
func TestCurrentSet(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	md := deployment(2, "1", "0")
	base := uptodate.Hash(md, time.Time{})
	made := func(name, label string, created time.Time, replicas int) *Set {
		ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{clusterv1.MachineTemplateHashLabel: label}, Annotations: map[string]string{}},
			Spec: clusterv1.MachineSetSpec{Replicas: ptr.To(int32(replicas))}}
		return &Set{MS: ms}
	}
	at := func(after *time.Time) *Scope {
		md := md.DeepCopy()
		if after != nil {
			md.Spec.Rollout.After = ptr.To(metav1.NewTime(*after))
		}
		return &Scope{MD: md, Now: now, Hash: uptodate.Hash(md, now)}
	}
	hour := func(h int) *time.Time { return ptr.To(now.Add(time.Duration(h) * time.Hour)) }
	// currentOf names the current set among sets, "" for none.
	currentOf := func(after *time.Time, sets ...*Set) string {
		s := at(after)
		s.Sets = sets
		if set := current(s); set != nil {
			return set.MS.Name
		}
		return ""
	}
	v1 := made("v1", base, now.Add(-10*time.Hour), 2)

	for _, c := range []struct {
		name  string
		after *time.Time
		sets  []*Set
		want  string
	}{
		{"no rollout.after: the set of the template", nil, []*Set{v1}, "v1"},
		{"rollout.after still to come", hour(1), []*Set{v1}, "v1"},
		{"rollout.after passed before the set was made: nothing to roll out", hour(-20), []*Set{v1}, "v1"},
		{"rollout.after passed since the set was made: a new set is needed", hour(-1), []*Set{v1}, ""},
	} {
		if got := currentOf(c.after, c.sets...); got != c.want {
			t.Errorf("%s: current %q, want %q", c.name, got, c.want)
		}
	}

	// The restart made v2, named after the hash with rollout.after; v1
	// was scaled to 0 and kept.
	after := hour(-1)
	v1.MS.Spec.Replicas = ptr.To(int32(0))
	v2 := made("v2", at(after).Hash, now.Add(-30*time.Minute), 2)
	if got := currentOf(after, v1, v2); got != "v2" {
		t.Errorf("after the restart: current %q, want v2", got)
	}
	// Clearing rollout.after (a re-applied manifest) keeps v2: it was made
	// from the same template and holds the replicas.
	if got := currentOf(nil, v1, v2); got != "v2" {
		t.Errorf("rollout.after cleared: current %q, want v2 to stay", got)
	}
	// Moved back before v2 was made: still v2.
	if got := currentOf(hour(-5), v1, v2); got != "v2" {
		t.Errorf("rollout.after moved back: current %q, want v2 to stay", got)
	}
}
