package features

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// registerMachineSetSteps: MachineSets, the Machines they make, and the
// user's and providers' parts around them. The Machines of a set have
// random names; a scenario calls them by the names it gives them
// ("the Machines of "ms" are called "a" and "b"").
func registerMachineSetSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines?$`, w.aMachineSet)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? with (maxUnhealthy|maxInFlight|minReadySeconds|version) (\S+)$`, w.aMachineSetWith)
	sc.Step(`^the (MachineSet|MachineDeployment) "([^"]*)" reports the versions "([^"]*)"$`, w.reportsVersions)
	sc.Step(`^the Cluster "([^"]*)" reports the (worker|control plane) versions "([^"]*)"$`, w.clusterReportsVersions)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? with the finalizer "([^"]*)"$`, w.aMachineSetWithFinalizer)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? named by the template "([^"]*)"$`, w.aMachineSetNamedBy)
	sc.Step(`^every Machine of the MachineSet (?:called )?"([^"]*)" and its provider objects are named "([^"]*)" and five random characters$`, w.setMachinesNamed)
	sc.Step(`^a paused MachineSet "([^"]*)" of (\d+) Machines?$`, w.aPausedMachineSet)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? with Machine creation disabled$`, w.aMachineSetCreationDisabled)
	sc.Step(`^the annotation "([^"]*)" is removed from the MachineSet "([^"]*)"$`, w.removeMachineSetAnnotation)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? of the missing Cluster "([^"]*)"$`, w.aMachineSetOfMissingCluster)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? whose infrastructure template "([^"]*)" does not exist$`, w.aMachineSetWithMissingTemplate)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? whose infrastructure template kind is not served$`, w.aMachineSetWithUnservedTemplate)
	sc.Step(`^the infrastructure template of the MachineSet "([^"]*)" is pointed at a kind the API server does not serve$`, w.machineSetTemplateUnserved)
	sc.Step(`^a Machine "([^"]*)" labelled for "([^"]*)"$`, w.anOrphanFor)

	sc.Step(`^the infrastructure template "([^"]*)" is created$`, w.createInfraTemplate)
	sc.Step(`^the Machines of "([^"]*)" are called (.+)$`, w.callMachines)
	sc.Step(`^the Machines of "([^"]*)" were created with the Machine finalizer$`, w.machinesCreatedWithFinalizer)
	sc.Step(`^the providers bring every Machine of "([^"]*)" to Running$`, w.provideAll)
	sc.Step(`^the providers bring Machine "([^"]*)" of the set to Running$`, w.provideOne)
	sc.Step(`^Machine "([^"]*)" of the set fails$`, w.setMachineFails)
	sc.Step(`^Machine "([^"]*)" of the set has annotation "([^"]*)"$`, w.setMachineAnnotated)
	sc.Step(`^the annotation "([^"]*)" is removed from Machine "([^"]*)" of the set$`, w.setMachineUnannotated)
	sc.Step(`^Machine "([^"]*)" of the set loses the label "([^"]*)"$`, w.setMachineUnlabelled)

	sc.Step(`^the MachineSet "([^"]*)" is scaled to (\d+)$`, w.scale)
	sc.Step(`^I delete the MachineSet "([^"]*)"$`, w.deleteMachineSet)
	sc.Step(`^the finalizer "([^"]*)" is removed from the MachineSet "([^"]*)"$`, w.removeMachineSetFinalizer)
	sc.Step(`^the MachineSet "([^"]*)" has finalizer "([^"]*)"$`, w.addMachineSetFinalizer)
	sc.Step(`^the MachineSet "([^"]*)" is (paused|no longer paused)$`, w.pauseMachineSet)
	sc.Step(`^the status of the MachineSet "([^"]*)" names the state "([^"]*)"$`, w.machineSetStatusState)
	sc.Step(`^(\d+) minutes pass on the operator's clock$`, w.minutesPass)

	sc.Step(`^the MachineSet "([^"]*)" has (\d+) Machines?$`, w.setHasMachines)
	sc.Step(`^the MachineSet "([^"]*)" controls (\d+) Machines?$`, w.setControlsMachines)
	sc.Step(`^every Machine of "([^"]*)" has its bootstrap and infrastructure objects cloned from the templates$`, w.clonesExist)
	sc.Step(`^the templates of the MachineSet "([^"]*)" are owned by the Cluster "([^"]*)"$`, w.templatesOwnedByCluster)
	sc.Step(`^the MachineSet "([^"]*)" reaches phase "([^"]*)"$`, w.setReachesPhase)
	sc.Step(`^the MachineSet "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)"$`, w.setHasCondition)
	sc.Step(`^the MachineSet "([^"]*)" has condition "([^"]*)" with reason "([^"]*)" and message containing "([^"]*)"$`, w.setHasConditionWithMessage)
	sc.Step(`^the MachineSet "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)" and message "([^"]*)"$`, w.setHasConditionSaying)
	sc.Step(`^the MachineSet "([^"]*)" reports (\d+) replicas?, (\d+) ready and (\d+) available$`, w.setReports)
	sc.Step(`^Machine "([^"]*)" of the set (is gone|is being deleted|still exists|belongs to the set|belongs to no set)$`, w.setMachineState)
	sc.Step(`^the MachineSet "([^"]*)" is gone$`, w.machineSetGone)
	sc.Step(`^the MachineSet "([^"]*)" selects only the Machines of its Cluster: "([^"]*)" is in its selector and template labels, and its status\.selector reads "([^"]*)"$`, w.setSelectsItsCluster)
	registerMachineSetCAPISteps(sc, w)
	registerPreflightSteps(sc, w)
}

// aliases maps, per scenario namespace, the names a scenario gives Machines
// to their real names.
var aliases sync.Map // ns → map[string]string

// storeNames adds names to the scenario's map in store (aliases,
// setNames), copying it: other scenarios' steps read their own maps
// concurrently.
func storeNames(store *sync.Map, ns string, add map[string]string) {
	m := map[string]string{}
	if old, ok := store.Load(ns); ok {
		maps.Copy(m, old.(map[string]string))
	}
	maps.Copy(m, add)
	store.Store(ns, m)
}

func (w *world) alias(name string) string {
	if m, ok := aliases.Load(w.ns); ok {
		if real, ok := m.(map[string]string)[name]; ok {
			return real
		}
	}
	return name
}

func (w *world) newMachineSet(ctx context.Context, name string, replicas int, mutate ...func(*clusterv1.MachineSet)) error {
	_, err := w.h.MachineSetObjects(ctx, w.ns, w.cluster, name, int32(replicas), mutate...)
	return err
}

// setSelectsItsCluster: the set carries the cluster-name label in its
// selector and its template's labels, as Cluster API's
// reconcileMachineSetOwnerAndLabels puts it there, and its status.selector
// (what kubectl scale and autoscalers select by) shows it.
func (w *world) setSelectsItsCluster(ctx context.Context, name, label, selector string) error {
	k, v, ok := strings.Cut(label, "=")
	if !ok {
		return fmt.Errorf("label %q is not key=value", label)
	}
	return w.eventually(ctx, "the selector of MachineSet "+name, func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, name)
		if err != nil {
			return err
		}
		if ms.Spec.Selector.MatchLabels[k] != v || ms.Spec.Template.ObjectMeta.Labels[k] != v {
			return fmt.Errorf("selector %v, template labels %v", ms.Spec.Selector.MatchLabels, ms.Spec.Template.ObjectMeta.Labels)
		}
		if ms.Status.Selector != selector {
			return fmt.Errorf("status.selector %q", ms.Status.Selector)
		}
		return nil
	})
}

func (w *world) aMachineSet(ctx context.Context, name string, replicas int) error {
	return w.newMachineSet(ctx, name, replicas)
}

func (w *world) aMachineSetWith(ctx context.Context, name string, replicas int, field, value string) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) {
		switch field {
		case "maxUnhealthy":
			ms.Spec.Remediation.MaxUnhealthy = ptr.To(intstr.Parse(value))
		case "maxInFlight":
			ms.Spec.Remediation.MaxInFlight = ptr.To(intstr.Parse(value))
		case "minReadySeconds":
			n, _ := strconv.Atoi(value)
			ms.Spec.Template.Spec.MinReadySeconds = int32(n)
		case "version":
			ms.Spec.Template.Spec.Version = value
		}
	})
}

func (w *world) aMachineSetWithFinalizer(ctx context.Context, name string, replicas int, finalizer string) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) { ms.Finalizers = []string{finalizer} })
}

// describeVersions words status.versions as the steps do: "v1.37.0: 2,
// v1.37.1: 1", "none" for none.
func describeVersions(vs []clusterv1.StatusVersion) string {
	if len(vs) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%s: %d", v.Version, v.Replicas))
	}
	return strings.Join(parts, ", ")
}

func (w *world) reportsVersions(ctx context.Context, kind, name, want string) error {
	return w.eventually(ctx, kind+" "+name+" versions "+want, func(ctx context.Context) error {
		var got []clusterv1.StatusVersion
		if kind == "MachineSet" {
			ms, err := w.h.MachineSet(ctx, w.ns, w.setAlias(name))
			if err != nil {
				return err
			}
			got = ms.Status.Versions
		} else {
			md, err := w.deployment(ctx, name)
			if err != nil {
				return err
			}
			got = md.Status.Versions
		}
		if d := describeVersions(got); d != want {
			return fmt.Errorf("status.versions %s", d)
		}
		return nil
	})
}

func (w *world) clusterReportsVersions(ctx context.Context, name, which, want string) error {
	return w.eventually(ctx, "Cluster "+name+" "+which+" versions "+want, func(ctx context.Context) error {
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, w.key(name), c); err != nil {
			return err
		}
		got := c.Status.Workers.Versions
		if which == "control plane" {
			got = c.Status.ControlPlane.Versions
		}
		if d := describeVersions(got); d != want {
			return fmt.Errorf("%s versions %s", which, d)
		}
		return nil
	})
}

func (w *world) aMachineSetNamedBy(ctx context.Context, name string, replicas int, template string) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) { ms.Spec.MachineNaming.Template = template })
}

// setMachinesNamed waits for the set's live Machines to be there and checks
// each is named prefix + five random characters (Kubernetes' random
// alphabet), as are its bootstrap and infrastructure objects.
func (w *world) setMachinesNamed(ctx context.Context, set, prefix string) error {
	set = w.setAlias(set)
	name := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	return w.eventually(ctx, "Machines of "+set+" named "+prefix+"*", func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		machines, err := w.liveMachines(ctx, set)
		if err != nil {
			return err
		}
		if len(machines) != int(ptr.Deref(ms.Spec.Replicas, 1)) {
			return fmt.Errorf("%d Machines", len(machines))
		}
		for _, m := range machines {
			refs := []string{m.Spec.InfrastructureRef.Name}
			if m.Spec.Bootstrap.ConfigRef != nil {
				refs = append(refs, m.Spec.Bootstrap.ConfigRef.Name)
			}
			if !name.MatchString(m.Name) || slices.ContainsFunc(refs, func(r string) bool { return r != m.Name }) {
				return fmt.Errorf("Machine %s, provider objects %v", m.Name, refs)
			}
		}
		return nil
	})
}

// aMachineSetCreationDisabled: a set as an OnDelete MachineDeployment leaves
// its old ones.
func (w *world) aMachineSetCreationDisabled(ctx context.Context, name string, replicas int) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) {
		ms.Annotations = map[string]string{clusterv1.DisableMachineCreateAnnotation: "true"}
	})
}

func (w *world) removeMachineSetAnnotation(ctx context.Context, key, set string) error {
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) { delete(ms.Annotations, key) })
}

func (w *world) aPausedMachineSet(ctx context.Context, name string, replicas int) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) {
		ms.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	})
}

func (w *world) aMachineSetOfMissingCluster(ctx context.Context, name string, replicas int, cluster string) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) {
		ms.Spec.ClusterName, ms.Spec.Template.Spec.ClusterName = cluster, cluster
	})
}

func (w *world) aMachineSetWithMissingTemplate(ctx context.Context, name string, replicas int, template string) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) { ms.Spec.Template.Spec.InfrastructureRef.Name = template })
}

func (w *world) aMachineSetWithUnservedTemplate(ctx context.Context, name string, replicas int) error {
	return w.newMachineSet(ctx, name, replicas, unservedInfrastructure)
}

func unservedInfrastructure(ms *clusterv1.MachineSet) { unservedKind(&ms.Spec.Template.Spec) }

func unservedKind(spec *clusterv1.MachineSpec) {
	spec.InfrastructureRef.APIGroup = "ghost.krtt.dev"
	spec.InfrastructureRef.Kind = "GhostMachineTemplate"
}

// machineSetTemplateUnserved: the set's template names a kind of a group no
// CRD serves (a typo, or a provider removed).
func (w *world) machineSetTemplateUnserved(ctx context.Context, name string) error {
	return w.updateMachineSet(ctx, name, unservedInfrastructure)
}

// anOrphanFor creates a Machine (with its provider objects) that carries
// the set's selector label and has no controller.
func (w *world) anOrphanFor(ctx context.Context, name, set string) error {
	_, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name, func(m *clusterv1.Machine) {
		m.Labels = map[string]string{"pool": set}
	})
	return err
}

func (w *world) createInfraTemplate(ctx context.Context, name string) error {
	return w.h.Client.Create(ctx, &simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}

// machinesCreatedWithFinalizer: every Machine of the set carries the
// Machine finalizer, and the Machine controller, which has decided on each
// at least once, never had to add it (row N02).
func (w *world) machinesCreatedWithFinalizer(ctx context.Context, set string) error {
	var machines []clusterv1.Machine
	err := w.eventually(ctx, "Machines of "+set+" decided on, with the finalizer", func(ctx context.Context) error {
		var err error
		if machines, err = w.liveMachines(ctx, set); err != nil {
			return err
		}
		if len(machines) == 0 {
			return errors.New("no Machine")
		}
		for _, m := range machines {
			if !slices.Contains(m.Finalizers, clusterv1.MachineFinalizer) {
				return fmt.Errorf("Machine %s finalizers %v", m.Name, m.Finalizers)
			}
			if len(w.h.Traces(w.key(m.Name))) == 0 {
				return fmt.Errorf("Machine %s not decided on yet", m.Name)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range machines {
		if err := w.rowNeverFired(ctx, "N02", m.Name); err != nil {
			return err
		}
	}
	return nil
}

// liveMachines lists the Machines the set controls that are not being
// deleted.
func (w *world) liveMachines(ctx context.Context, set string) ([]clusterv1.Machine, error) {
	ms, err := w.h.MachineSet(ctx, w.ns, set)
	if err != nil {
		return nil, err
	}
	all, err := harness.MachinesOf(ctx, w.h.Client, ms)
	if err != nil {
		return nil, err
	}
	var out []clusterv1.Machine
	for _, m := range all {
		if m.DeletionTimestamp.IsZero() {
			out = append(out, m)
		}
	}
	return out, nil
}

var quoted = regexp.MustCompile(`"([^"]*)"`)

// callMachines names the set's live Machines, in the order of their real
// names.
func (w *world) callMachines(ctx context.Context, set, list string) error {
	var names []string
	for _, m := range quoted.FindAllStringSubmatch(list, -1) {
		names = append(names, m[1])
	}
	return w.eventually(ctx, "name the Machines", func(ctx context.Context) error {
		ms, err := w.liveMachines(ctx, w.setAlias(set))
		if err != nil {
			return err
		}
		if len(ms) != len(names) {
			return fmt.Errorf("%d live Machines, want %d to name", len(ms), len(names))
		}
		add := map[string]string{}
		for i, name := range names {
			add[name] = ms[i].Name
		}
		storeNames(&aliases, w.ns, add)
		return nil
	})
}

func (w *world) provide(ctx context.Context, machine string) error {
	return retry.OnError(retry.DefaultRetry, func(err error) bool { return apierrors.IsConflict(err) }, func() error {
		// A retry after a conflict must not create the Node twice.
		if err := w.h.BootstrapReady(ctx, w.ns, machine); err != nil {
			return err
		}
		return w.h.InfrastructureProvisioned(ctx, w.ns, machine)
	})
}

// provideAll brings each of the set's Machines to Running, once the set
// has made as many as it asks for (a step right after the set's creation
// must not find none and do nothing).
func (w *world) provideAll(ctx context.Context, set string) error {
	var ms []clusterv1.Machine
	if err := w.eventually(ctx, "MachineSet "+set+" has its Machines", func(ctx context.Context) error {
		s, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		if ms, err = w.liveMachines(ctx, set); err != nil {
			return err
		}
		if want := int(ptr.Deref(s.Spec.Replicas, 1)); len(ms) < want {
			return fmt.Errorf("%d of %d Machines created", len(ms), want)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, m := range ms {
		if err := w.provideOne(ctx, m.Name); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) provideOne(ctx context.Context, name string) error {
	name = w.alias(name)
	// The Machine controller adopts the clones the set made; wait for the
	// Machine to own them, so the providers' writes do not race that.
	if err := w.eventually(ctx, "Machine "+name+" Pending", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if m.Status.Phase != clusterv1.MachinePhasePending {
			return errors.New(describe(m))
		}
		return nil
	}); err != nil {
		return err
	}
	if err := w.provide(ctx, name); err != nil {
		return err
	}
	if err := w.nodeJoins(ctx, name); err != nil {
		return err
	}
	return w.reachesPhase(ctx, name, string(clusterv1.MachinePhaseRunning))
}

// setMachineFails: the bootstrap data arrives, so the Machine takes over its
// infrastructure object (and watches it); then the VM is lost.
func (w *world) setMachineFails(ctx context.Context, name string) error {
	name = w.alias(name)
	if err := w.bootstrapReady(ctx, name); err != nil {
		return err
	}
	if err := w.eventually(ctx, "Machine "+name+" owns its infrastructure", func(ctx context.Context) error {
		sm := &simv1.SimMachine{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, sm); err != nil {
			return err
		}
		if ref := metav1.GetControllerOf(sm); ref == nil || ref.Kind != "Machine" {
			return fmt.Errorf("SimMachine %s is controlled by %v", name, ref)
		}
		return nil
	}); err != nil {
		return err
	}
	// The set replaces a failed Machine at once, so it can be gone before
	// a poll reads it: a watch started before the failure sees every
	// version the Machine had.
	failedSeen := make(chan struct{})
	var once sync.Once
	saw := func(m *clusterv1.Machine) {
		if m.Name == name && ptr.Deref(m.Status.FailureReason, "") == "VMNotFound" {
			once.Do(func() { close(failedSeen) })
		}
	}
	watchErr := make(chan error, 1)
	if err := w.watchMachines(ctx, labels.Everything(),
		func(list []clusterv1.Machine) {
			for i := range list {
				saw(&list[i])
			}
		},
		func(_ watch.EventType, m *clusterv1.Machine) { saw(m) },
		func(err error) { watchErr <- err }); err != nil {
		return err
	}
	if err := w.infraReportsFailure(ctx, name, "VMNotFound", "the VM is gone"); err != nil {
		return err
	}
	deadline, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	select {
	case <-failedSeen:
		return nil
	case err := <-watchErr:
		return fmt.Errorf("watching Machine %s: %w", name, err)
	case <-deadline.Done():
		return fmt.Errorf("Machine %s never had failureReason VMNotFound within %s", name, wait)
	}
}

func (w *world) setMachineAnnotated(ctx context.Context, name, key string) error {
	return w.addAnnotation(ctx, w.alias(name), key)
}

func (w *world) setMachineUnannotated(ctx context.Context, key, name string) error {
	return w.removeAnnotation(ctx, key, w.alias(name))
}

func (w *world) setMachineUnlabelled(ctx context.Context, name, label string) error {
	return w.updateMachine(ctx, w.alias(name), func(m *clusterv1.Machine) { delete(m.Labels, label) })
}

// scale changes spec.replicas through the scale subresource, as kubectl
// scale does.
func (w *world) scale(ctx context.Context, set string, replicas int) error {
	ms, err := w.h.MachineSet(ctx, w.ns, set)
	if err != nil {
		return err
	}
	body := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
		"metadata": map[string]any{"name": set, "namespace": w.ns}, "spec": map[string]any{"replicas": int64(replicas)}}}
	return w.h.Client.SubResource("scale").Update(ctx, ms, client.WithSubResourceBody(body))
}

func (w *world) deleteMachineSet(ctx context.Context, set string) error {
	return w.h.Client.Delete(ctx, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: set}})
}

func (w *world) updateMachineSet(ctx context.Context, set string, fn func(*clusterv1.MachineSet)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		fn(ms)
		return w.h.Client.Update(ctx, ms)
	})
}

func (w *world) addMachineSetFinalizer(ctx context.Context, set, finalizer string) error {
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) { ms.Finalizers = append(ms.Finalizers, finalizer) })
}

func (w *world) removeMachineSetFinalizer(ctx context.Context, finalizer, set string) error {
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) {
		var keep []string
		for _, f := range ms.Finalizers {
			if f != finalizer {
				keep = append(keep, f)
			}
		}
		ms.Finalizers = keep
	})
}

func (w *world) pauseMachineSet(ctx context.Context, set, how string) error {
	if how == "no longer paused" {
		return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) { delete(ms.Annotations, clusterv1.PausedAnnotation) })
	}
	if err := w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) {
		if ms.Annotations == nil {
			ms.Annotations = map[string]string{}
		}
		ms.Annotations[clusterv1.PausedAnnotation] = ""
	}); err != nil {
		return err
	}
	return w.setHasCondition(ctx, set, clusterv1.PausedCondition, "True", "Paused")
}

// machineSetStatusState writes status.state as tables of another version
// would have left it.
func (w *world) machineSetStatusState(ctx context.Context, set, state string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		ms.Status.State = state
		return w.h.Client.Status().Update(ctx, ms)
	})
}

// minutesPass advances the operator's clock (scenarios doing it are
// @serial; the clock is set back when they end).
func (w *world) minutesPass(_ context.Context, minutes int) error {
	w.h.Clock.Advance(time.Duration(minutes) * time.Minute)
	return nil
}

// --- Then ---

func describeSet(ms *clusterv1.MachineSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase %q state %q replicas %d ready %d available %d", ms.Status.Phase, ms.Status.State,
		ms.Status.Replicas, ms.Status.ReadyReplicas, ms.Status.AvailableReplicas)
	if lt := ms.Status.LastTransition; lt != nil {
		fmt.Fprintf(&b, ", last row %s/%s %s->%s %s %q", lt.Table, lt.Row, lt.From, lt.To, lt.Outcome, lt.Message)
	}
	return b.String()
}

func (w *world) setHasMachines(ctx context.Context, set string, n int) error {
	return w.eventually(ctx, fmt.Sprintf("%s has %d Machines", set, n), func(ctx context.Context) error {
		ms, err := w.liveMachines(ctx, set)
		if err != nil {
			return err
		}
		if len(ms) != n {
			return fmt.Errorf("%d Machines not being deleted", len(ms))
		}
		return nil
	})
}

func (w *world) setControlsMachines(ctx context.Context, set string, n int) error {
	return w.eventually(ctx, fmt.Sprintf("%s controls %d Machines", set, n), func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if apierrors.IsNotFound(err) && n == 0 {
			// The set is gone already: none of its Machines may be left.
			list := &clusterv1.MachineList{}
			if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns), client.MatchingLabels{clusterv1.SetNameLabel: set}); err != nil {
				return err
			}
			if len(list.Items) > 0 {
				return fmt.Errorf("the set is gone, %d of its Machines are left", len(list.Items))
			}
			return nil
		}
		if err != nil {
			return err
		}
		all, err := harness.MachinesOf(ctx, w.h.Client, ms)
		if err != nil {
			return err
		}
		if len(all) != n {
			return fmt.Errorf("controls %d Machines", len(all))
		}
		return nil
	})
}

// clonesExist: each Machine's SimBootstrapConfig and SimMachine have its
// name, the template's contract metadata and the cluster-name label, and
// the Machine references them.
func (w *world) clonesExist(ctx context.Context, set string) error {
	return w.eventually(ctx, "cloned provider objects", func(ctx context.Context) error {
		ms, err := w.liveMachines(ctx, set)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Spec.InfrastructureRef.Kind != "SimMachine" || m.Spec.InfrastructureRef.Name != m.Name ||
				m.Spec.Bootstrap.ConfigRef == nil || m.Spec.Bootstrap.ConfigRef.Kind != "SimBootstrapConfig" || m.Spec.Bootstrap.ConfigRef.Name != m.Name {
				return fmt.Errorf("Machine %s references %+v and %+v", m.Name, m.Spec.Bootstrap.ConfigRef, m.Spec.InfrastructureRef)
			}
			if m.Labels[clusterv1.SetNameLabel] != set || m.Labels[clusterv1.ClusterNameLabel] != w.cluster || m.Labels["pool"] != set {
				return fmt.Errorf("Machine %s labels %v", m.Name, m.Labels)
			}
			for _, obj := range []client.Object{&simv1.SimMachine{}, &simv1.SimBootstrapConfig{}} {
				if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: m.Name}, obj); err != nil {
					return fmt.Errorf("%T of %s: %w", obj, m.Name, err)
				}
				// The clone carries the Machine's labels (Cluster API
				// GenerateTemplate), the template's pool label among them.
				if obj.GetAnnotations()[contract.ClonedFromNameAnnotation] != set || obj.GetLabels()[clusterv1.ClusterNameLabel] != w.cluster ||
					obj.GetLabels()["pool"] != set || obj.GetLabels()[clusterv1.SetNameLabel] != set {
					return fmt.Errorf("%T %s annotations %v labels %v", obj, m.Name, obj.GetAnnotations(), obj.GetLabels())
				}
				if ref := metav1.GetControllerOf(obj); ref == nil || ref.Kind != "Machine" || ref.Name != m.Name {
					return fmt.Errorf("%T %s is controlled by %v, want its Machine", obj, m.Name, ref)
				}
			}
		}
		return nil
	})
}

// templatesOwnedByCluster: the templates the set names carry an owner
// reference to the Cluster, its UID included (Cluster API
// reconcileExternalTemplateReference).
func (w *world) templatesOwnedByCluster(ctx context.Context, set, cluster string) error {
	return w.eventually(ctx, "templates owned by the Cluster", func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		c := &clusterv1.Cluster{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: cluster}, c); err != nil {
			return err
		}
		spec := ms.Spec.Template.Spec
		for _, obj := range []client.Object{
			&simv1.SimBootstrapConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: spec.Bootstrap.ConfigRef.Name}},
			&simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: spec.InfrastructureRef.Name}},
		} {
			if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: obj.GetName()}, obj); err != nil {
				return err
			}
			if !slices.ContainsFunc(obj.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
				return r.Kind == "Cluster" && r.Name == cluster && r.UID == c.UID
			}) {
				return fmt.Errorf("%T %s owners %+v", obj, obj.GetName(), obj.GetOwnerReferences())
			}
		}
		return nil
	})
}

func (w *world) setReachesPhase(ctx context.Context, set, phase string) error {
	return w.eventually(ctx, "MachineSet phase "+phase, func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		if ms.Status.Phase != phase {
			return errors.New(describeSet(ms))
		}
		return nil
	})
}

func (w *world) setCondition(ctx context.Context, set, ctype, status, reason, msg string) error {
	return w.setConditionMatching(ctx, set, ctype, status, reason, func(m string) bool { return strings.Contains(m, msg) })
}

// setConditionMatching waits for the set's condition of type ctype with
// that status (any when "") and reason, whose message matches.
func (w *world) setConditionMatching(ctx context.Context, set, ctype, status, reason string, matches func(string) bool) error {
	return w.eventually(ctx, fmt.Sprintf("MachineSet condition %s %s %s", ctype, status, reason), func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(ms.Status.Conditions, ctype)
		if c == nil {
			return fmt.Errorf("no %s condition; %s", ctype, describeSet(ms))
		}
		if (status != "" && string(c.Status) != status) || c.Reason != reason || !matches(c.Message) {
			return fmt.Errorf("%s=%s reason %s message %q; %s", ctype, c.Status, c.Reason, c.Message, describeSet(ms))
		}
		return nil
	})
}

func (w *world) setHasCondition(ctx context.Context, set, ctype, status, reason string) error {
	return w.setCondition(ctx, set, ctype, status, reason, "")
}

func (w *world) setHasConditionWithMessage(ctx context.Context, set, ctype, reason, msg string) error {
	return w.setCondition(ctx, set, ctype, "", reason, msg)
}

// setHasConditionSaying matches the whole message; \n in the step is a
// line break, as in the tables.
func (w *world) setHasConditionSaying(ctx context.Context, set, ctype, status, reason, msg string) error {
	msg = strings.ReplaceAll(msg, `\n`, "\n")
	return w.setConditionMatching(ctx, set, ctype, status, reason, func(m string) bool { return m == msg })
}

func (w *world) setReports(ctx context.Context, set string, replicas, ready, available int) error {
	return w.eventually(ctx, "MachineSet status counts", func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		st := ms.Status
		if int(st.Replicas) != replicas || int(st.ReadyReplicas) != ready || int(st.AvailableReplicas) != available ||
			st.Selector != clusterv1.ClusterNameLabel+"="+ms.Spec.ClusterName+",pool="+set || st.ObservedGeneration != ms.Generation {
			return fmt.Errorf("%s, selector %q, observedGeneration %d of %d", describeSet(ms), st.Selector, st.ObservedGeneration, ms.Generation)
		}
		return nil
	})
}

func (w *world) setMachineState(ctx context.Context, name, state string) error {
	name = w.alias(name)
	return w.eventually(ctx, "Machine "+name+" "+state, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if apierrors.IsNotFound(err) {
			if state == "is gone" {
				return nil
			}
			return fmt.Errorf("Machine %s is gone", name)
		}
		if err != nil {
			return err
		}
		owner := metav1.GetControllerOf(m)
		switch state {
		case "is gone":
			return fmt.Errorf("Machine %s still exists: %s", name, describe(m))
		case "is being deleted":
			if m.DeletionTimestamp.IsZero() {
				return fmt.Errorf("Machine %s is not being deleted", name)
			}
		case "still exists":
			if !m.DeletionTimestamp.IsZero() {
				return fmt.Errorf("Machine %s is being deleted", name)
			}
		case "belongs to the set":
			if owner == nil || owner.Kind != "MachineSet" || m.Labels[clusterv1.SetNameLabel] == "" {
				return fmt.Errorf("Machine %s controller %v labels %v", name, owner, m.Labels)
			}
		case "belongs to no set":
			if owner != nil || m.Labels[clusterv1.SetNameLabel] != "" {
				return fmt.Errorf("Machine %s controller %v labels %v", name, owner, m.Labels)
			}
		}
		return nil
	})
}

func (w *world) machineSetGone(ctx context.Context, set string) error {
	return w.eventually(ctx, "MachineSet "+set+" gone", func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: %s, finalizers %v", describeSet(ms), ms.Finalizers)
	})
}
