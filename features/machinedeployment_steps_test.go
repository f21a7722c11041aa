package features

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// registerMachineDeploymentSteps: MachineDeployments, their MachineSets
// (one per template revision) and the Machines they roll out. A background
// provider brings every new Machine of a deployment to Running, as the
// infrastructure would, so a rollout runs on its own.
func registerMachineDeploymentSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a MachineDeployment "([^"]*)" of (\d+) Machines?$`, w.aDeployment)
	sc.Step(`^a MachineDeployment "([^"]*)" of (\d+) Machines? with (strategy|maxSurge|maxUnavailable|revisionHistoryLimit|progressDeadlineSeconds) (\S+)$`, w.aDeploymentWith)
	sc.Step(`^a MachineDeployment "([^"]*)" of (\d+) Machines? whose infrastructure template kind is not served$`, w.aDeploymentUnserved)
	sc.Step(`^a MachineDeployment "([^"]*)" of (\d+) Machines? named by the template "([^"]*)"$`, w.aDeploymentNamedBy)
	sc.Step(`^the infrastructure template of the MachineDeployment "([^"]*)" is pointed at a kind the API server does not serve$`, w.deploymentTemplateUnserved)
	sc.Step(`^a MachineDeployment "([^"]*)" of (\d+) Machines? whose infrastructure template does not exist$`, w.aDeploymentMissingTemplate)
	sc.Step(`^a MachineDeployment "([^"]*)" of (\d+) Machines? of the missing Cluster "([^"]*)"$`, w.aDeploymentOfMissingCluster)
	sc.Step(`^the missing infrastructure template of the MachineDeployment "([^"]*)" is created$`, w.createMissingTemplate)
	sc.Step(`^the infrastructure template of the MachineDeployment "([^"]*)" is deleted$`, w.deleteDeploymentTemplate)
	sc.Step(`^a paused MachineDeployment "([^"]*)" of (\d+) Machines?$`, w.aPausedDeployment)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? of the template of the MachineDeployment "([^"]*)", without a controller$`, w.anOrphanSetOf)
	sc.Step(`^the MachineSet called "([^"]*)" is controlled by the MachineDeployment "([^"]*)"$`, w.calledSetControlledBy)
	sc.Step(`^a MachineDeployment "([^"]*)" of (\d+) Machines? to be rolled out (\d+) minutes? from now on the operator's clock$`, w.aDeploymentRolledOutLater)

	sc.Step(`^the providers bring every Machine of the deployment "([^"]*)" to Running as it comes$`, w.provideDeployment)
	sc.Step(`^the providers stop bringing Machines of the deployment "([^"]*)" to Running$`, w.stopProviding)
	sc.Step(`^every Machine event of the deployment "([^"]*)" is watched$`, w.watchDeployment)

	sc.Step(`^the template of the MachineDeployment "([^"]*)" is pointed at new templates "([^"]*)"$`, w.deploymentNewTemplates)
	sc.Step(`^the template of the MachineDeployment "([^"]*)" is pointed back at the templates "([^"]*)"$`, w.deploymentTemplatesBack)
	sc.Step(`^the template of the MachineDeployment "([^"]*)" gets the label "([^"]*)" = "([^"]*)"$`, w.deploymentTemplateLabel)
	sc.Step(`^the template of the MachineDeployment "([^"]*)" is upgraded to version "([^"]*)"$`, w.deploymentTemplateVersion)
	sc.Step(`^every Machine of the deployment "([^"]*)" has version "([^"]*)"$`, w.allMachinesOfVersion)
	sc.Step(`^the MachineDeployment "([^"]*)" is scaled to (\d+)$`, w.scaleDeployment)
	sc.Step(`^the maxSurge of the MachineDeployment "([^"]*)" is set to (\S+)$`, func(ctx context.Context, name, value string) error {
		return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) {
			md.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.Parse(value))
		})
	})
	sc.Step(`^every Machine of the deployment "([^"]*)" (gets|loses) the pre-terminate hook "([^"]*)"$`, w.deploymentMachinesHook)
	sc.Step(`^the MachineDeployment "([^"]*)" is (paused|resumed)$`, w.pauseDeployment)
	sc.Step(`^I delete the MachineDeployment "([^"]*)"$`, w.deleteDeployment)
	sc.Step(`^a user deletes an old Machine of the deployment "([^"]*)"$`, w.deleteOldMachine)
	sc.Step(`^an old Machine of the deployment "([^"]*)" is called "([^"]*)"$`, w.callOldMachine)

	sc.Step(`^the MachineDeployment "([^"]*)" reports (\d+) replicas?, (\d+) updated and (\d+) available$`, w.deploymentReports)
	sc.Step(`^the MachineDeployment "([^"]*)" reaches (phase|the state) "([^"]*)"$`, w.deploymentReaches)
	sc.Step(`^the MachineDeployment "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)"$`, w.deploymentCondition)
	sc.Step(`^the MachineDeployment "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)" and message containing "([^"]*)"$`, w.deploymentConditionSaying)
	sc.Step(`^the MachineDeployment "([^"]*)" has (\d+) MachineSets?$`, w.deploymentHasSets)
	sc.Step(`^the MachineDeployment "([^"]*)" has (\d+) MachineSets? with replicas$`, w.deploymentHasActiveSets)
	sc.Step(`^the MachineSets of "([^"]*)" ask for (\d+) replicas in all$`, w.deploymentSetsSum)
	sc.Step(`^the current MachineSet of "([^"]*)" is called "([^"]*)"$`, w.callCurrentSet)
	sc.Step(`^the rollout\.after of the MachineDeployment "([^"]*)" is set to (\d+) hours ago on the operator's clock$`, w.setRolloutAfterAgo)
	sc.Step(`^the rollout\.after of the MachineDeployment "([^"]*)" is cleared$`, w.clearRolloutAfter)
	sc.Step(`^once the MachineDeployment "([^"]*)" has decided again, it has one MachineSet, the one called "([^"]*)"$`, w.decidedKeepsSet)
	sc.Step(`^the current MachineSet of "([^"]*)" is "([^"]*)" with revision (\d+)$`, w.currentSetIs)
	sc.Step(`^the MachineSet called "([^"]*)" is gone$`, w.calledSetGone)
	sc.Step(`^the MachineSet called "([^"]*)" asks for (\d+) replicas?$`, w.calledSetReplicas)
	sc.Step(`^every Machine of the deployment "([^"]*)" is of the current MachineSet$`, w.allMachinesCurrent)
	sc.Step(`^every Machine of the deployment "([^"]*)" has the label "([^"]*)" = "([^"]*)"$`, w.allMachinesLabelled)
	sc.Step(`^the deployment "([^"]*)" never had more than (\d+) Machines nor fewer than (\d+) available at any watch event$`, w.deploymentInvariants)
	sc.Step(`^an? (Warning )?Event of the MachineDeployment "([^"]*)" tells row "([^"]*)" moving it to "([^"]*)"$`, w.deploymentEventTellsRow)
	sc.Step(`^the MachineDeployment "([^"]*)" is gone$`, w.deploymentGone)
	sc.Step(`^the MachineDeployment "([^"]*)" is at revision "([^"]*)"$`, w.deploymentAtRevision)
	sc.Step(`^the MachineSet called "([^"]*)" has the (annotation|label) "([^"]*)" = "([^"]*)"$`, w.calledSetHas)
	sc.Step(`^the MachineSet called "([^"]*)" has no (annotation|label) "([^"]*)"$`, w.calledSetLacks)
	sc.Step(`^the annotation "([^"]*)" is set to "([^"]*)" on the MachineDeployment "([^"]*)"$`, func(ctx context.Context, key, value, name string) error {
		return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) { metav1.SetMetaDataAnnotation(&md.ObjectMeta, key, value) })
	})
	sc.Step(`^the annotation "([^"]*)" is removed from the MachineDeployment "([^"]*)"$`, func(ctx context.Context, key, name string) error {
		return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) { delete(md.Annotations, key) })
	})
	sc.Step(`^the template of the MachineDeployment "([^"]*)" loses the label "([^"]*)"$`, func(ctx context.Context, name, key string) error {
		return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) { delete(md.Spec.Template.ObjectMeta.Labels, key) })
	})
}

// setNames maps, per scenario namespace, the names a scenario gives
// MachineSets to their real names (<deployment>-<hash>).
var setNames sync.Map // ns → map[string]string

func (w *world) createTemplates(ctx context.Context, name string) error {
	cloned := clusterv1.TemplateMetadata{Labels: map[string]string{clusterv1.WatchFilterLabel: harness.Filter}}
	if err := w.h.Client.Create(ctx, harness.Label(&simv1.SimBootstrapConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: simv1.SimBootstrapConfigTemplateSpec{Template: simv1.SimBootstrapConfigTemplateResource{ObjectMeta: cloned}}})); err != nil {
		return err
	}
	return w.h.Client.Create(ctx, harness.Label(&simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: simv1.SimMachineTemplateSpec{Template: simv1.SimMachineTemplateResource{ObjectMeta: cloned}}}))
}

// newDeployment creates templates named name and a MachineDeployment of
// replicas Machines cloned from them, selecting pool=<name>.
func (w *world) aDeploymentNamedBy(ctx context.Context, name string, replicas int, template string) error {
	return w.newDeployment(ctx, name, replicas, func(md *clusterv1.MachineDeployment) { md.Spec.MachineNaming.Template = template })
}

func (w *world) newDeployment(ctx context.Context, name string, replicas int, mutate ...func(*clusterv1.MachineDeployment)) error {
	if err := w.createTemplates(ctx, name); err != nil {
		return err
	}
	sel := map[string]string{"pool": name}
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: w.cluster,
			Replicas:    ptr.To(int32(replicas)),
			Selector:    clusterv1.MachineSetSelector{MatchLabels: sel},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.TemplateMetadata{Labels: map[string]string{"pool": name}},
				Spec: clusterv1.MachineSpec{
					ClusterName: w.cluster,
					Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
						APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfigTemplate", Name: name}},
					InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachineTemplate", Name: name},
				},
			},
		},
	}
	for _, fn := range mutate {
		fn(md)
	}
	return w.h.Client.Create(ctx, harness.Label(md))
}

func (w *world) aDeployment(ctx context.Context, name string, replicas int) error {
	return w.newDeployment(ctx, name, replicas)
}

func (w *world) aDeploymentWith(ctx context.Context, name string, replicas int, field, value string) error {
	return w.newDeployment(ctx, name, replicas, func(md *clusterv1.MachineDeployment) {
		n, _ := strconv.Atoi(value)
		switch field {
		case "strategy":
			md.Spec.Strategy.Type = clusterv1.MachineDeploymentStrategyType(value)
		case "maxSurge":
			md.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.Parse(value))
		case "maxUnavailable":
			md.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.Parse(value))
		case "revisionHistoryLimit":
			md.Spec.RevisionHistoryLimit = ptr.To(int32(n))
		case "progressDeadlineSeconds":
			md.Spec.ProgressDeadlineSeconds = ptr.To(int32(n))
		}
	})
}

func (w *world) aDeploymentUnserved(ctx context.Context, name string, replicas int) error {
	return w.newDeployment(ctx, name, replicas, unservedDeploymentInfrastructure)
}

func (w *world) deploymentTemplateUnserved(ctx context.Context, name string) error {
	return w.updateDeployment(ctx, name, unservedDeploymentInfrastructure)
}

func unservedDeploymentInfrastructure(md *clusterv1.MachineDeployment) {
	unservedKind(&md.Spec.Template.Spec)
}

func (w *world) aDeploymentMissingTemplate(ctx context.Context, name string, replicas int) error {
	return w.newDeployment(ctx, name, replicas, func(md *clusterv1.MachineDeployment) {
		md.Spec.Template.Spec.InfrastructureRef.Name = name + "-missing"
	})
}

// createMissingTemplate creates the infrastructure template
// aDeploymentMissingTemplate named but did not create.
func (w *world) createMissingTemplate(ctx context.Context, name string) error {
	cloned := clusterv1.TemplateMetadata{Labels: map[string]string{clusterv1.WatchFilterLabel: harness.Filter}}
	return w.h.Client.Create(ctx, harness.Label(&simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name + "-missing"},
		Spec: simv1.SimMachineTemplateSpec{Template: simv1.SimMachineTemplateResource{ObjectMeta: cloned}}}))
}

func (w *world) deleteDeploymentTemplate(ctx context.Context, name string) error {
	md, err := w.deployment(ctx, name)
	if err != nil {
		return err
	}
	ref := md.Spec.Template.Spec.InfrastructureRef
	return w.h.Client.Delete(ctx, &simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: ref.Name}})
}

func (w *world) aDeploymentOfMissingCluster(ctx context.Context, name string, replicas int, cluster string) error {
	return w.newDeployment(ctx, name, replicas, func(md *clusterv1.MachineDeployment) {
		md.Spec.ClusterName, md.Spec.Template.Spec.ClusterName = cluster, cluster
	})
}

func (w *world) aPausedDeployment(ctx context.Context, name string, replicas int) error {
	return w.newDeployment(ctx, name, replicas, func(md *clusterv1.MachineDeployment) {
		md.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	})
}

// anOrphanSetOf creates a MachineSet that nobody controls, with the
// deployment's selector labels and template, as a person would who made
// the set by hand before the deployment.
func (w *world) anOrphanSetOf(ctx context.Context, name string, replicas int, deployment string) error {
	md, err := w.deployment(ctx, deployment)
	if err != nil {
		return err
	}
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: maps.Clone(md.Spec.Selector.MatchLabels)},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: md.Spec.ClusterName,
			Replicas:    ptr.To(int32(replicas)),
			Selector:    clusterv1.MachineSetSelector{MatchLabels: maps.Clone(md.Spec.Selector.MatchLabels)},
			Template:    *md.Spec.Template.DeepCopy(),
		},
	}
	return w.h.Client.Create(ctx, harness.Label(ms))
}

func (w *world) calledSetControlledBy(ctx context.Context, alias, deployment string) error {
	return w.eventually(ctx, "MachineSet "+alias+" controlled by "+deployment, func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, w.setAlias(alias))
		if err != nil {
			return err
		}
		ref := metav1.GetControllerOf(ms)
		if ref == nil || ref.Kind != "MachineDeployment" || ref.Name != deployment {
			return fmt.Errorf("controller %v", ref)
		}
		return nil
	})
}

func (w *world) aDeploymentRolledOutLater(ctx context.Context, name string, replicas, minutes int) error {
	return w.newDeployment(ctx, name, replicas, func(md *clusterv1.MachineDeployment) {
		md.Spec.Rollout.After = &metav1.Time{Time: w.h.Clock.Now().Add(time.Duration(minutes) * time.Minute)}
	})
}

// setRolloutAfterAgo and clearRolloutAfter remember how many rows had fired
// for the deployment before the change, so decidedKeepsSet looks at a
// decision made after it.
func (w *world) setRolloutAfterAgo(ctx context.Context, name string, hours int) error {
	return w.changeRolloutAfter(ctx, name, &metav1.Time{Time: w.h.Clock.Now().Add(-time.Duration(hours) * time.Hour)})
}

func (w *world) clearRolloutAfter(ctx context.Context, name string) error {
	return w.changeRolloutAfter(ctx, name, nil)
}

func (w *world) changeRolloutAfter(ctx context.Context, name string, after *metav1.Time) error {
	if w.decided == nil {
		w.decided = map[string]int{}
	}
	w.decided[name] = len(w.h.Traces(w.key(name)))
	return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) { md.Spec.Rollout.After = after })
}

// decidedKeepsSet waits for a row fired for the deployment after its last
// rollout.after change, then checks that it still has the one MachineSet.
func (w *world) decidedKeepsSet(ctx context.Context, name, alias string) error {
	return w.eventually(ctx, name+" decided, keeping "+alias, func(ctx context.Context) error {
		if n := len(w.h.Traces(w.key(name))); n <= w.decided[name] {
			return fmt.Errorf("no row fired for %s since its rollout.after changed", name)
		}
		_, sets, err := w.deploymentSets(ctx, name)
		if err != nil {
			return err
		}
		if len(sets) != 1 || sets[0].Name != w.setAlias(alias) {
			return fmt.Errorf("MachineSets: %s, want only %s", setsLine(sets), w.setAlias(alias))
		}
		return nil
	})
}

func (w *world) deployment(ctx context.Context, name string) (*clusterv1.MachineDeployment, error) {
	md := &clusterv1.MachineDeployment{}
	return md, w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, md)
}

func (w *world) updateDeployment(ctx context.Context, name string, fn func(*clusterv1.MachineDeployment)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		md, err := w.deployment(ctx, name)
		if err != nil {
			return err
		}
		fn(md)
		return w.h.Client.Update(ctx, md)
	})
}

// deploymentSets are the MachineSets the deployment controls, oldest
// revision first.
func (w *world) deploymentSets(ctx context.Context, name string) (*clusterv1.MachineDeployment, []clusterv1.MachineSet, error) {
	md, err := w.deployment(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	list := &clusterv1.MachineSetList{}
	if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
		return nil, nil, err
	}
	var out []clusterv1.MachineSet
	for _, ms := range list.Items {
		if ref := metav1.GetControllerOf(&ms); ref != nil && ref.UID == md.UID {
			out = append(out, ms)
		}
	}
	revision := func(ms *clusterv1.MachineSet) int {
		n, _ := strconv.Atoi(ms.Annotations[clusterv1.RevisionAnnotation])
		return n
	}
	sort.Slice(out, func(i, j int) bool { return revision(&out[i]) < revision(&out[j]) })
	return md, out, nil
}

// deploymentMachines lists the Machines of the deployment (its selector).
func (w *world) deploymentMachines(ctx context.Context, name string) ([]clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	err := w.h.Client.List(ctx, list, client.InNamespace(w.ns), client.MatchingLabels{"pool": name})
	return list.Items, err
}

// provideDeployment plays the providers for every Machine of the
// deployment until the scenario ends (or the providers stop): each Machine
// the Machine controller holds (Pending) gets its bootstrap data, its
// infrastructure and a Ready Node.
func (w *world) provideDeployment(_ context.Context, name string) error {
	pctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	provided := map[string]bool{}
	go func() {
		defer close(done)
		for pctx.Err() == nil {
			machines, err := w.deploymentMachines(pctx, name)
			if err == nil {
				for _, m := range machines {
					if provided[m.Name] || !m.DeletionTimestamp.IsZero() || m.Status.Phase != clusterv1.MachinePhasePending {
						continue
					}
					if err := w.provide(pctx, m.Name); err != nil {
						continue
					}
					provided[m.Name] = true
					_ = w.nodeJoins(pctx, m.Name)
				}
			}
			select {
			case <-pctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	stop := func(context.Context) error { cancel(); <-done; return nil }
	providers.Store(w.ns+"/"+name, stop)
	w.undo = append(w.undo, stop)
	return nil
}

var providers sync.Map // ns/deployment → func(context.Context) error

func (w *world) stopProviding(ctx context.Context, name string) error {
	v, ok := providers.Load(w.ns + "/" + name)
	if !ok {
		return fmt.Errorf("no provider runs for %s", name)
	}
	return v.(func(context.Context) error)(ctx)
}

// deploymentMonitor replays every Machine watch event of a deployment and
// checks the RollingUpdate limits on each: every Machine (being deleted
// included, until its Deleted event) against the most there may be, and
// the Ready Machines not being deleted against the fewest there may be.
type deploymentMonitor struct {
	mu                    sync.Mutex
	machines              map[string]*clusterv1.Machine
	events                int
	maxTotal, minAvail    int
	worstTotal, worstAvai string
	earlyDeletion         string
	err                   error
}

func machineReady(m *clusterv1.Machine) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.ReadyCondition)
	return c != nil && c.Status == metav1.ConditionTrue
}

func (d *deploymentMonitor) apply(t watch.EventType, m *clusterv1.Machine) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events++
	if t == watch.Deleted {
		delete(d.machines, m.Name)
	} else {
		d.machines[m.Name] = m
	}
	d.check()
}

// check measures the Machines as the last event left them.
func (d *deploymentMonitor) check() {
	total, avail := len(d.machines), 0
	var names []string
	for _, x := range d.machines {
		if x.DeletionTimestamp.IsZero() && machineReady(x) {
			avail++
		}
		names = append(names, fmt.Sprintf("%s(ready=%v deleting=%v)", x.Name, machineReady(x), !x.DeletionTimestamp.IsZero()))
	}
	sort.Strings(names)
	if total > d.maxTotal {
		d.maxTotal, d.worstTotal = total, strings.Join(names, ", ")
	}
	if avail < d.minAvail {
		d.minAvail, d.worstAvai = avail, strings.Join(names, ", ")
	}
}

func (w *world) watchDeployment(ctx context.Context, name string) error {
	mon := &deploymentMonitor{machines: map[string]*clusterv1.Machine{}, minAvail: 1 << 30}
	err := w.watchMachines(ctx, labels.SelectorFromSet(labels.Set{"pool": name}),
		func(list []clusterv1.Machine) {
			// The list is one state: measured once, whole.
			for i := range list {
				mon.machines[list[i].Name] = &list[i]
			}
			mon.check()
		},
		mon.apply,
		func(err error) { mon.mu.Lock(); mon.err = err; mon.mu.Unlock() })
	if err != nil {
		return err
	}
	deploymentMonitors.Store(w.ns+"/"+name, mon)
	return nil
}

var deploymentMonitors sync.Map

func (w *world) deploymentInvariants(_ context.Context, name string, most, fewest int) error {
	v, ok := deploymentMonitors.Load(w.ns + "/" + name)
	if !ok {
		return fmt.Errorf("the Machines of %s are not watched", name)
	}
	mon := v.(*deploymentMonitor)
	mon.mu.Lock()
	defer mon.mu.Unlock()
	switch {
	case mon.err != nil:
		return fmt.Errorf("the watch failed: %w", mon.err)
	case mon.events == 0:
		return errors.New("the watch saw no event")
	case mon.maxTotal > most:
		return fmt.Errorf("%d Machines at once: %s", mon.maxTotal, mon.worstTotal)
	case mon.minAvail < fewest:
		return fmt.Errorf("only %d available at once: %s", mon.minAvail, mon.worstAvai)
	}
	return nil
}

func (w *world) deploymentNewTemplates(ctx context.Context, name, tpl string) error {
	if err := w.createTemplates(ctx, tpl); err != nil {
		return err
	}
	return w.deploymentTemplatesBack(ctx, name, tpl)
}

func (w *world) deploymentTemplatesBack(ctx context.Context, name, tpl string) error {
	return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) {
		md.Spec.Template.Spec.InfrastructureRef.Name = tpl
		md.Spec.Template.Spec.Bootstrap.ConfigRef.Name = tpl
	})
}

func (w *world) deploymentTemplateLabel(ctx context.Context, name, key, value string) error {
	return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) {
		md.Spec.Template.ObjectMeta.Labels[key] = value
	})
}

func (w *world) deploymentTemplateVersion(ctx context.Context, name, version string) error {
	return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) {
		md.Spec.Template.Spec.Version = version
	})
}

func (w *world) allMachinesOfVersion(ctx context.Context, name, version string) error {
	return w.eventually(ctx, "every Machine of "+name+" at "+version, func(ctx context.Context) error {
		machines, err := w.deploymentMachines(ctx, name)
		if err != nil {
			return err
		}
		if len(machines) == 0 {
			return fmt.Errorf("no Machine")
		}
		for _, m := range machines {
			if m.Spec.Version != version {
				return fmt.Errorf("Machine %s has version %q", m.Name, m.Spec.Version)
			}
		}
		return nil
	})
}

// deploymentMachinesHook adds or removes a pre-terminate hook on every
// Machine of the deployment, as a user holding their deletion would.
func (w *world) deploymentMachinesHook(ctx context.Context, name, how, hook string) error {
	machines, err := w.deploymentMachines(ctx, name)
	if err != nil {
		return err
	}
	if len(machines) == 0 {
		return errors.New("no Machine")
	}
	key := clusterv1.PreTerminateDeleteHookAnnotationPrefix + hook
	for i := range machines {
		m := &machines[i]
		before := m.DeepCopy()
		if how == "gets" {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[key] = ""
		} else {
			delete(m.Annotations, key)
		}
		if err := w.h.Client.Patch(ctx, m, client.MergeFrom(before)); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) scaleDeployment(ctx context.Context, name string, replicas int) error {
	return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) { md.Spec.Replicas = ptr.To(int32(replicas)) })
}

func (w *world) pauseDeployment(ctx context.Context, name, how string) error {
	return w.updateDeployment(ctx, name, func(md *clusterv1.MachineDeployment) { md.Spec.Paused = how == "paused" })
}

func (w *world) deleteDeployment(ctx context.Context, name string) error {
	return w.h.Client.Delete(ctx, &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}

// deleteOldMachine deletes a Machine of an old MachineSet, once the Machine
// controller holds it with its finalizer.
func (w *world) deleteOldMachine(ctx context.Context, name string) error {
	victim, err := w.oldMachine(ctx, name)
	if err != nil {
		return err
	}
	return w.h.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: victim}})
}

// callOldMachine names an old Machine of the deployment for the Machine
// steps "... of the set".
func (w *world) callOldMachine(ctx context.Context, name, alias string) error {
	victim, err := w.oldMachine(ctx, name)
	if err != nil {
		return err
	}
	storeNames(&aliases, w.ns, map[string]string{alias: victim})
	return nil
}

// oldMachine finds a Machine of an old MachineSet of the deployment that
// is not being deleted and that the Machine controller holds.
func (w *world) oldMachine(ctx context.Context, name string) (string, error) {
	var victim string
	err := w.eventually(ctx, "an old Machine held by the Machine controller", func(ctx context.Context) error {
		cur, err := w.currentSet(ctx, name)
		if err != nil {
			return err
		}
		machines, err := w.deploymentMachines(ctx, name)
		if err != nil {
			return err
		}
		for _, m := range machines {
			if ref := metav1.GetControllerOf(&m); m.DeletionTimestamp.IsZero() && ref != nil && ref.Name != cur.Name &&
				len(m.Finalizers) > 0 {
				victim = m.Name
				return nil
			}
		}
		return errors.New("no old Machine held by its finalizer")
	})
	return victim, err
}

func describeDeployment(md *clusterv1.MachineDeployment) string {
	var b strings.Builder
	st := md.Status
	fmt.Fprintf(&b, "phase %q state %q replicas %d updated %d ready %d available %d", st.Phase, st.State, st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas)
	if lt := st.LastTransition; lt != nil {
		fmt.Fprintf(&b, ", last row %s/%s %s->%s %s %q", lt.Table, lt.Row, lt.From, lt.To, lt.Outcome, lt.Message)
	}
	return b.String()
}

func (w *world) deploymentReports(ctx context.Context, name string, replicas, updated, available int) error {
	return w.eventually(ctx, "MachineDeployment counts", func(ctx context.Context) error {
		md, err := w.deployment(ctx, name)
		if err != nil {
			return err
		}
		st := md.Status
		if int(st.Replicas) != replicas || int(st.UpdatedReplicas) != updated || int(st.AvailableReplicas) != available ||
			st.Selector != "pool="+name || st.ObservedGeneration != md.Generation {
			return fmt.Errorf("%s, selector %q, observedGeneration %d of %d", describeDeployment(md), st.Selector, st.ObservedGeneration, md.Generation)
		}
		return nil
	})
}

// deploymentReaches waits for the phase (mirrored from the counts on every
// reconcile) or the table state a row wrote: the phase can read ScalingDown
// before the row that decides on the surplus has run.
func (w *world) deploymentReaches(ctx context.Context, name, which, want string) error {
	return w.eventually(ctx, "MachineDeployment "+which+" "+want, func(ctx context.Context) error {
		md, err := w.deployment(ctx, name)
		if err != nil {
			return err
		}
		got := md.Status.Phase
		if which == "the state" {
			got = md.Status.State
		}
		if got != want {
			return fmt.Errorf("%s %q: %s", which, got, describeDeployment(md))
		}
		return nil
	})
}

func (w *world) deploymentCondition(ctx context.Context, name, ctype, status, reason string) error {
	return w.deploymentConditionSaying(ctx, name, ctype, status, reason, "")
}

func (w *world) deploymentConditionSaying(ctx context.Context, name, ctype, status, reason, words string) error {
	return w.eventually(ctx, fmt.Sprintf("MachineDeployment condition %s %s %s %q", ctype, status, reason, words), func(ctx context.Context) error {
		md, err := w.deployment(ctx, name)
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(md.Status.Conditions, ctype)
		if c == nil {
			return fmt.Errorf("no %s condition; %s", ctype, describeDeployment(md))
		}
		if string(c.Status) != status || c.Reason != reason || !strings.Contains(c.Message, words) {
			return fmt.Errorf("%s=%s reason %s message %q; %s", ctype, c.Status, c.Reason, c.Message, describeDeployment(md))
		}
		return nil
	})
}

func (w *world) deploymentHasSets(ctx context.Context, name string, n int) error {
	return w.eventually(ctx, fmt.Sprintf("%s has %d MachineSets", name, n), func(ctx context.Context) error {
		_, sets, err := w.deploymentSets(ctx, name)
		if err != nil {
			return err
		}
		if len(sets) != n {
			return fmt.Errorf("%d MachineSets: %s", len(sets), setsLine(sets))
		}
		return nil
	})
}

func (w *world) deploymentHasActiveSets(ctx context.Context, name string, n int) error {
	return w.eventually(ctx, fmt.Sprintf("%s has %d MachineSets with replicas", name, n), func(ctx context.Context) error {
		_, sets, err := w.deploymentSets(ctx, name)
		if err != nil {
			return err
		}
		k := 0
		for _, ms := range sets {
			if ptr.Deref(ms.Spec.Replicas, 1) > 0 {
				k++
			}
		}
		if k != n {
			return fmt.Errorf("%d with replicas: %s", k, setsLine(sets))
		}
		return nil
	})
}

func setsLine(sets []clusterv1.MachineSet) string {
	var out []string
	for _, ms := range sets {
		out = append(out, fmt.Sprintf("%s rev %s replicas %d (status %d)", ms.Name, ms.Annotations[clusterv1.RevisionAnnotation], ptr.Deref(ms.Spec.Replicas, 1), ms.Status.Replicas))
	}
	return strings.Join(out, "; ")
}

func (w *world) deploymentSetsSum(ctx context.Context, name string, n int) error {
	return w.eventually(ctx, fmt.Sprintf("%s's MachineSets ask for %d", name, n), func(ctx context.Context) error {
		_, sets, err := w.deploymentSets(ctx, name)
		if err != nil {
			return err
		}
		sum := 0
		for _, ms := range sets {
			sum += int(ptr.Deref(ms.Spec.Replicas, 1))
		}
		if sum != n {
			return fmt.Errorf("they ask for %d: %s", sum, setsLine(sets))
		}
		return nil
	})
}

// currentSet is the MachineSet of the deployment's template: the one whose
// template names the deployment's infrastructure template.
func (w *world) currentSet(ctx context.Context, name string) (*clusterv1.MachineSet, error) {
	md, sets, err := w.deploymentSets(ctx, name)
	if err != nil {
		return nil, err
	}
	// The newest revision of the template: an older one of the same
	// template is old once spec.rollout.after has passed.
	for i := len(sets) - 1; i >= 0; i-- {
		if sets[i].Spec.Template.Spec.InfrastructureRef.Name == md.Spec.Template.Spec.InfrastructureRef.Name {
			return &sets[i], nil
		}
	}
	return nil, fmt.Errorf("no MachineSet of the current template: %s", setsLine(sets))
}

func (w *world) callCurrentSet(ctx context.Context, name, alias string) error {
	return w.eventually(ctx, "the current MachineSet of "+name, func(ctx context.Context) error {
		ms, err := w.currentSet(ctx, name)
		if err != nil {
			return err
		}
		storeNames(&setNames, w.ns, map[string]string{alias: ms.Name})
		return nil
	})
}

func (w *world) setAlias(alias string) string {
	if m, ok := setNames.Load(w.ns); ok {
		if real, ok := m.(map[string]string)[alias]; ok {
			return real
		}
	}
	return alias
}

func (w *world) currentSetIs(ctx context.Context, name, alias string, revision int) error {
	return w.eventually(ctx, "the current MachineSet of "+name, func(ctx context.Context) error {
		ms, err := w.currentSet(ctx, name)
		if err != nil {
			return err
		}
		if ms.Name != w.setAlias(alias) || ms.Annotations[clusterv1.RevisionAnnotation] != strconv.Itoa(revision) {
			return fmt.Errorf("the current MachineSet is %s revision %s, want %s revision %d", ms.Name, ms.Annotations[clusterv1.RevisionAnnotation], w.setAlias(alias), revision)
		}
		return nil
	})
}

func (w *world) calledSetGone(ctx context.Context, alias string) error {
	return w.machineSetGone(ctx, w.setAlias(alias))
}

func (w *world) calledSetReplicas(ctx context.Context, alias string, n int) error {
	return w.eventually(ctx, "MachineSet "+alias+" replicas", func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, w.setAlias(alias))
		if err != nil {
			return err
		}
		if got := int(ptr.Deref(ms.Spec.Replicas, 1)); got != n {
			return fmt.Errorf("asks for %d", got)
		}
		return nil
	})
}

func (w *world) allMachinesCurrent(ctx context.Context, name string) error {
	return w.eventually(ctx, "every Machine of "+name+" current", func(ctx context.Context) error {
		ms, err := w.currentSet(ctx, name)
		if err != nil {
			return err
		}
		md, err := w.deployment(ctx, name)
		if err != nil {
			return err
		}
		machines, err := w.deploymentMachines(ctx, name)
		if err != nil {
			return err
		}
		if len(machines) != int(ptr.Deref(md.Spec.Replicas, 1)) {
			return fmt.Errorf("%d Machines", len(machines))
		}
		for _, m := range machines {
			if ref := metav1.GetControllerOf(&m); ref == nil || ref.Name != ms.Name || !m.DeletionTimestamp.IsZero() {
				return fmt.Errorf("Machine %s is controlled by %v (deleting %v), want %s", m.Name, ref, !m.DeletionTimestamp.IsZero(), ms.Name)
			}
		}
		return nil
	})
}

func (w *world) allMachinesLabelled(ctx context.Context, name, key, value string) error {
	return w.eventually(ctx, "every Machine of "+name+" labelled", func(ctx context.Context) error {
		machines, err := w.deploymentMachines(ctx, name)
		if err != nil {
			return err
		}
		if len(machines) == 0 {
			return errors.New("no Machine")
		}
		for _, m := range machines {
			if m.Labels[key] != value {
				return fmt.Errorf("Machine %s labels %v", m.Name, m.Labels)
			}
		}
		return nil
	})
}

// deploymentEventTellsRow: an Event of the deployment tells the row and the
// state it moved to (a path of rows is one Event, its note naming each).
// deploymentEventTellsRow finds the Event of the step into state; with
// "Warning " it must be a Warning (a row marked warning: true).
func (w *world) deploymentEventTellsRow(ctx context.Context, warning, name, row, state string) error {
	return w.eventOf(ctx, "Event of row "+row, "MachineDeployment", name, func(e eventsv1.Event) bool {
		if warning != "" && e.Type != corev1.EventTypeWarning {
			return false
		}
		// The note reads "From → To (rows R1, R2): message".
		i := strings.Index(e.Note, "→ "+state+" (row")
		if i < 0 {
			return false
		}
		rows, _, closed := strings.Cut(e.Note[i:], ")")
		return closed && slices.Contains(strings.FieldsFunc(rows, func(r rune) bool { return r == ' ' || r == ',' || r == '(' }), row)
	}, func(e eventsv1.Event) string { return e.Type + " " + e.Note })
}

func (w *world) deploymentGone(ctx context.Context, name string) error {
	return w.eventually(ctx, "MachineDeployment "+name+" gone", func(ctx context.Context) error {
		md, err := w.deployment(ctx, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: %s, finalizers %v", describeDeployment(md), md.Finalizers)
	})
}

// deploymentAtRevision: the deployment's revision annotation (Cluster API
// surfaces its current MachineSet's revision there).
func (w *world) deploymentAtRevision(ctx context.Context, name, revision string) error {
	return w.eventually(ctx, "MachineDeployment revision "+revision, func(ctx context.Context) error {
		md := &clusterv1.MachineDeployment{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, md); err != nil {
			return err
		}
		if got := md.Annotations[clusterv1.RevisionAnnotation]; got != revision {
			return fmt.Errorf("revision annotation %q, want %q", got, revision)
		}
		return nil
	})
}

// calledSetMetadata waits until the set's label or annotation key passes
// check (its value, and whether it is there).
func (w *world) calledSetMetadata(ctx context.Context, alias, kind, key string, check func(string, bool) error) error {
	return w.eventually(ctx, "MachineSet "+alias+" "+kind+" "+key, func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, w.setAlias(alias))
		if err != nil {
			return err
		}
		have := ms.Annotations
		if kind == "label" {
			have = ms.Labels
		}
		v, ok := have[key]
		return check(v, ok)
	})
}

func (w *world) calledSetHas(ctx context.Context, alias, kind, key, value string) error {
	return w.calledSetMetadata(ctx, alias, kind, key, func(got string, ok bool) error {
		if !ok || got != value {
			return fmt.Errorf("%s %s = %q (present %v), want %q", kind, key, got, ok, value)
		}
		return nil
	})
}

func (w *world) calledSetLacks(ctx context.Context, alias, kind, key string) error {
	return w.calledSetMetadata(ctx, alias, kind, key, func(got string, ok bool) error {
		if ok {
			return fmt.Errorf("%s %s = %q is still there", kind, key, got)
		}
		return nil
	})
}
