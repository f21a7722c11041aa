package harness

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// SimTemplates creates a SimBootstrapConfigTemplate and a SimMachineTemplate
// named name; the SimMachines cloned from them behave as sim says.
func SimTemplates(ctx context.Context, c client.Client, ns, name string, sim simv1.SimBehavior) error {
	// The clones carry the templates' metadata labels, Filter among them,
	// so a sim of this package (NewSimManager) sees them.
	cloned := clusterv1.TemplateMetadata{Labels: map[string]string{clusterv1.WatchFilterLabel: Filter}}
	if err := c.Create(ctx, Label(&simv1.SimBootstrapConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: simv1.SimBootstrapConfigTemplateSpec{Template: simv1.SimBootstrapConfigTemplateResource{ObjectMeta: cloned}}})); err != nil {
		return err
	}
	return c.Create(ctx, Label(&simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: simv1.SimMachineTemplateSpec{Template: simv1.SimMachineTemplateResource{ObjectMeta: cloned, Spec: simv1.SimMachineSpec{Sim: sim}}}}))
}

// machineTemplate is a Machine template cloned from the sim templates
// named tpl, labelled pool=<pool>.
func machineTemplate(cluster, pool, tpl string) clusterv1.MachineTemplateSpec {
	return clusterv1.MachineTemplateSpec{
		ObjectMeta: clusterv1.TemplateMetadata{Labels: map[string]string{"pool": pool}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster,
			Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
				APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfigTemplate", Name: tpl}},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachineTemplate", Name: tpl},
		},
	}
}

// MachineDeploymentObjects creates sim templates named name and a
// RollingUpdate MachineDeployment of replicas Machines cloned from them,
// within maxSurge and maxUnavailable, selecting the label pool=<name>.
func MachineDeploymentObjects(ctx context.Context, c client.Client, ns, cluster, name string, replicas, maxSurge, maxUnavailable int, sim simv1.SimBehavior) (*clusterv1.MachineDeployment, error) {
	if err := SimTemplates(ctx, c, ns, name, sim); err != nil {
		return nil, err
	}
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: cluster,
			Replicas:    ptr.To(int32(replicas)),
			Selector:    clusterv1.MachineSetSelector{MatchLabels: map[string]string{"pool": name}},
			Template:    machineTemplate(cluster, name, name),
			Strategy: clusterv1.MachineDeploymentStrategy{Type: clusterv1.RollingUpdateStrategy,
				RollingUpdate: clusterv1.MachineDeploymentRollingUpdate{
					MaxSurge:       ptr.To(intstr.FromInt(maxSurge)),
					MaxUnavailable: ptr.To(intstr.FromInt(maxUnavailable)),
				}},
		},
	}
	return md, c.Create(ctx, Label(md))
}

// PointAtTemplates points the deployment's template at the sim templates
// named tpl (both bootstrap and infrastructure): a new revision to roll out.
func PointAtTemplates(ctx context.Context, c client.Client, md *clusterv1.MachineDeployment, tpl string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &clusterv1.MachineDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(md), cur); err != nil {
			return err
		}
		cur.Spec.Template.Spec.InfrastructureRef.Name = tpl
		cur.Spec.Template.Spec.Bootstrap.ConfigRef.Name = tpl
		return c.Update(ctx, cur)
	})
}

// DeploymentSets lists the MachineSets a deployment controls, oldest
// revision first.
func DeploymentSets(ctx context.Context, c client.Client, md *clusterv1.MachineDeployment) ([]clusterv1.MachineSet, error) {
	list := &clusterv1.MachineSetList{}
	if err := c.List(ctx, list, client.InNamespace(md.Namespace)); err != nil {
		return nil, err
	}
	var out []clusterv1.MachineSet
	for _, ms := range list.Items {
		if ref := metav1.GetControllerOf(&ms); ref != nil && ref.UID == md.UID {
			out = append(out, ms)
		}
	}
	sort.Slice(out, func(i, j int) bool { return Revision(&out[i]) < Revision(&out[j]) })
	return out, nil
}

// Revision is a deployment's MachineSet's revision (0: none yet).
func Revision(ms *clusterv1.MachineSet) int {
	n, _ := strconv.Atoi(ms.Annotations[clusterv1.RevisionAnnotation])
	return n
}

// RolledOut says whether the deployment has rolled out the templates tpl:
// every one of its n Machines is of the newest MachineSet of tpl and
// available (so every old one is gone), and the deployment, having seen
// its latest spec, reports n replicas, n updated and n available. Either
// way it says where the rollout is.
func RolledOut(md *clusterv1.MachineDeployment, sets []clusterv1.MachineSet, machines []clusterv1.Machine, tpl string, n int) (bool, string) {
	var cur *clusterv1.MachineSet
	for i := range sets {
		if sets[i].Spec.Template.Spec.InfrastructureRef.Name == tpl {
			cur = &sets[i]
		}
	}
	ofCur, available := 0, 0
	for i := range machines {
		if ref := metav1.GetControllerOf(&machines[i]); cur != nil && ref != nil && ref.UID == cur.UID {
			ofCur++
		}
		if MachineAvailable(&machines[i]) {
			available++
		}
	}
	st := md.Status
	where := fmt.Sprintf("%d Machines (%s), %d available; the deployment reports %d replicas, %d updated, %d available (generation %d observed %d)",
		len(machines), MachinesPerRevision(sets, machines), available, st.Replicas, st.UpdatedReplicas, st.AvailableReplicas, md.Generation, st.ObservedGeneration)
	if cur == nil {
		return false, "no MachineSet of " + tpl + " yet; " + where
	}
	done := len(machines) == n && ofCur == n && available == n &&
		st.ObservedGeneration == md.Generation && int(st.Replicas) == n && int(st.UpdatedReplicas) == n && int(st.AvailableReplicas) == n
	return done, where
}

// MachinesPerRevision counts Machines by the revision of the MachineSet
// that controls them, those being deleted in brackets: "revision 1: 2 (1
// deleting), revision 2: 2" (revision 0: no MachineSet of sets).
func MachinesPerRevision(sets []clusterv1.MachineSet, machines []clusterv1.Machine) string {
	revision := map[types.UID]int{}
	for i := range sets {
		revision[sets[i].UID] = Revision(&sets[i])
	}
	count, deleting := map[int]int{}, map[int]int{}
	for i := range machines {
		r := 0
		if ref := metav1.GetControllerOf(&machines[i]); ref != nil {
			r = revision[ref.UID]
		}
		count[r]++
		if !machines[i].DeletionTimestamp.IsZero() {
			deleting[r]++
		}
	}
	revs := make([]int, 0, len(count))
	for r := range count {
		revs = append(revs, r)
	}
	sort.Ints(revs)
	parts := make([]string, 0, len(revs))
	for _, r := range revs {
		part := fmt.Sprintf("revision %d: %d", r, count[r])
		if deleting[r] > 0 {
			part += fmt.Sprintf(" (%d deleting)", deleting[r])
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// SetReplicas lists the replicas each MachineSet asks for, by revision:
// "revision 1 → 2, revision 2 → 2".
func SetReplicas(sets []clusterv1.MachineSet) string {
	parts := make([]string, 0, len(sets))
	for i := range sets {
		parts = append(parts, fmt.Sprintf("revision %d → %d", Revision(&sets[i]), ptr.Deref(sets[i].Spec.Replicas, 1)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// MachineAvailable is what a MachineSet counts as available: not being
// deleted, and Available (Ready for its minReadySeconds).
func MachineAvailable(m *clusterv1.Machine) bool {
	return m.DeletionTimestamp.IsZero() && meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.AvailableCondition)
}

// RolloutTracker holds the Machines of a deployment as a list and the watch
// events after it left them, and the extremes a rollout must keep within:
// the most Machines that existed at once (being deleted included, until
// their Deleted event) and the fewest available, both measured after every
// event once armed. Not safe for concurrent use.
type RolloutTracker struct {
	machines map[string]*clusterv1.Machine
	armed    bool
	// Events counts the watch events applied since Arm.
	Events int
	// PeakMachines and MinAvailable are the extremes since Arm; PeakAt and
	// MinAt describe the Machines at those moments (for a failure message).
	PeakMachines, MinAvailable int
	PeakAt, MinAt              string
}

// NewRolloutTracker returns an empty, unarmed tracker.
func NewRolloutTracker() *RolloutTracker {
	return &RolloutTracker{machines: map[string]*clusterv1.Machine{}}
}

// Replace takes a full list as the Machines now: one state, measured once.
func (t *RolloutTracker) Replace(list []clusterv1.Machine) {
	t.machines = make(map[string]*clusterv1.Machine, len(list))
	for i := range list {
		t.machines[list[i].Name] = &list[i]
	}
	t.measure()
}

// Apply takes one watch event.
func (t *RolloutTracker) Apply(ev watch.EventType, m *clusterv1.Machine) {
	switch ev {
	case watch.Deleted:
		delete(t.machines, m.Name)
	case watch.Added, watch.Modified:
		t.machines[m.Name] = m
	default:
		return
	}
	if t.armed {
		t.Events++
	}
	t.measure()
}

// Arm starts measuring the extremes from the Machines as they are now:
// before a rollout the deployment was free to be below its limits.
func (t *RolloutTracker) Arm() {
	t.armed, t.Events = true, 0
	total, avail := t.Counts()
	t.PeakMachines, t.MinAvailable = total, avail
	t.PeakAt, t.MinAt = t.describe(), t.describe()
}

func (t *RolloutTracker) measure() {
	if !t.armed {
		return
	}
	total, avail := t.Counts()
	if total > t.PeakMachines {
		t.PeakMachines, t.PeakAt = total, t.describe()
	}
	if avail < t.MinAvailable {
		t.MinAvailable, t.MinAt = avail, t.describe()
	}
}

// Counts are the Machines now (being deleted included) and how many of
// them are available.
func (t *RolloutTracker) Counts() (total, available int) {
	for _, m := range t.machines {
		if MachineAvailable(m) {
			available++
		}
	}
	return len(t.machines), available
}

// BySet counts the Machines now by the MachineSet that controls them
// ("" for none).
func (t *RolloutTracker) BySet() map[string]int {
	out := map[string]int{}
	for _, m := range t.machines {
		owner := ""
		if ref := metav1.GetControllerOf(m); ref != nil {
			owner = ref.Name
		}
		out[owner]++
	}
	return out
}

// Machines are the Machines now, by name.
func (t *RolloutTracker) Machines() []clusterv1.Machine {
	out := make([]clusterv1.Machine, 0, len(t.machines))
	for _, m := range t.machines {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (t *RolloutTracker) describe() string {
	parts := make([]string, 0, len(t.machines))
	for _, m := range t.Machines() {
		parts = append(parts, fmt.Sprintf("%s(available=%v deleting=%v)", m.Name, MachineAvailable(&m), !m.DeletionTimestamp.IsZero()))
	}
	return strings.Join(parts, ", ")
}

// DeploymentWatch follows the Machines of a deployment (label pool=<name>)
// with a list and a watch, listing again when the watch cannot go on, into
// a RolloutTracker.
type DeploymentWatch struct {
	mu      sync.Mutex
	t       *RolloutTracker
	relists int
	// armedAt is relists when the tracker was armed.
	armedAt int
	cancel  context.CancelFunc
	done    chan struct{}
}

// WatchDeployment lists the Machines of the deployment name, then follows
// them until Stop.
func WatchDeployment(ctx context.Context, c client.WithWatch, ns, name string) (*DeploymentWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &DeploymentWatch{t: NewRolloutTracker(), cancel: cancel, done: make(chan struct{})}
	rv, err := w.list(ctx, c, ns, name)
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			if rv == "" {
				if rv, err = w.list(ctx, c, ns, name); err != nil {
					// An API server too busy to list now: try again.
					select {
					case <-ctx.Done():
					case <-time.After(250 * time.Millisecond):
					}
					continue
				}
				w.mu.Lock()
				w.relists++
				w.mu.Unlock()
			}
			rv = w.follow(ctx, c, ns, name, rv)
		}
	}()
	return w, nil
}

func (w *DeploymentWatch) list(ctx context.Context, c client.WithWatch, ns, name string) (string, error) {
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"pool": name}); err != nil {
		return "", err
	}
	w.Read(func(t *RolloutTracker) { t.Replace(list.Items) })
	return list.ResourceVersion, nil
}

// follow applies the watch events from rv until the watch ends; it returns
// the resourceVersion to go on from, "" when the Machines must be listed
// again.
func (w *DeploymentWatch) follow(ctx context.Context, c client.WithWatch, ns, name, rv string) string {
	wi, err := c.Watch(ctx, &clusterv1.MachineList{}, client.InNamespace(ns), client.MatchingLabels{"pool": name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
	if err != nil {
		// Not at once: a list and a watch each moment would only add to
		// the load of an API server that refuses watches.
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
		return ""
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Error {
			// Mostly "too old resource version".
			return ""
		}
		acc, err := meta.Accessor(ev.Object)
		if err != nil {
			return ""
		}
		rv = acc.GetResourceVersion()
		if m, ok := ev.Object.(*clusterv1.Machine); ok {
			w.Read(func(t *RolloutTracker) { t.Apply(ev.Type, m) })
		}
	}
	return rv
}

// Read runs fn on the tracker while no event is applied.
func (w *DeploymentWatch) Read(fn func(*RolloutTracker)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(w.t)
}

// Arm starts measuring the extremes from the Machines as they are now.
func (w *DeploymentWatch) Arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Arm()
	w.armedAt = w.relists
}

// RelistsSinceArm counts the lists that replaced the view since Arm: each
// may hide states between the watch's end and the list.
func (w *DeploymentWatch) RelistsSinceArm() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.relists - w.armedAt
}

// Stop ends the watch.
func (w *DeploymentWatch) Stop() {
	w.cancel()
	<-w.done
}
