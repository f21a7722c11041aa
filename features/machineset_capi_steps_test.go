package features

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cucumber/godog"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// registerMachineSetCAPISteps: the MachineSet as Cluster API users know it:
// every Machine counts until it is gone (watched on every event), templates
// repointed, in-place propagation, long names, refused creations.
func registerMachineSetCAPISteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^every Machine event of the set "([^"]*)" is watched$`, w.watchSetMachines)
	sc.Step(`^the set "([^"]*)" never had more than (\d+) Machines at any watch event$`, w.setNeverExceeded)
	sc.Step(`^Machine "([^"]*)" of the set is deleted by hand$`, w.deleteSetMachine)
	sc.Step(`^the MachineSet "([^"]*)" reports (\d+) replicas? of which (\d+) (?:is|are) being deleted$`, w.setReportsDeleting)
	sc.Step(`^the new Machine of "([^"]*)" is called "([^"]*)"$`, w.callNewMachine)
	sc.Step(`^the MachineSet "([^"]*)" is pointed at new templates "([^"]*)"$`, w.repointTemplates)
	sc.Step(`^Machine "([^"]*)" of the set has provider objects cloned from the templates "([^"]*)"$`, w.clonedFrom)
	sc.Step(`^the provider objects of Machine "([^"]*)" of the set have the label "([^"]*)" = "([^"]*)"$`, w.providerObjectsLabelled)
	sc.Step(`^the provider objects of Machine "([^"]*)" of the set have no label "([^"]*)"$`, w.providerObjectsNotLabelled)
	sc.Step(`^the template of the MachineSet "([^"]*)" gets the label "([^"]*)" = "([^"]*)" and nodeDrainTimeoutSeconds (\d+)$`, w.templateGetsLabelAndDrainTimeout)
	sc.Step(`^the template of the MachineSet "([^"]*)" loses the label "([^"]*)"$`, w.templateLosesLabel)
	sc.Step(`^Machine "([^"]*)" of the set gets the label "([^"]*)" = "([^"]*)"$`, w.setMachineLabelled)
	sc.Step(`^Machine "([^"]*)" of the set has the label "([^"]*)" = "([^"]*)" and nodeDrainTimeoutSeconds (\d+)$`, w.setMachineHasLabelAndDrainTimeout)
	sc.Step(`^Machine "([^"]*)" of the set has no label "([^"]*)" and the label "([^"]*)" = "([^"]*)"$`, w.setMachineLabels)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? selecting "pool" = "([^"]*)"$`, w.aMachineSetSelecting)
	sc.Step(`^a MachineSet "([^"]*)" of (\d+) Machines? is created$`, w.aMachineSet)
	sc.Step(`^the Machines of "([^"]*)" carry the set-name label "([^"]*)"$`, w.setNameLabelIs)
	sc.Step(`^the API server (refuses|accepts) new Machines in this namespace$`, w.apiServerMachines)
	sc.Step(`^an Event of the MachineSet "([^"]*)" tells row "([^"]*)" with reason "([^"]*)"$`, w.setEventTellsRow)
	sc.Step(`^a Warning Event of the MachineSet "([^"]*)" tells row "([^"]*)" with reason "([^"]*)"$`, w.setWarningTellsRow)
	sc.Step(`^no reconcile of the "([^"]*)" controller has panicked$`, w.noPanic)
}

// setMonitor counts the Machines carrying a set's set-name label on every
// watch event (those being deleted count until their Deleted event) and
// keeps the largest count seen.
type setMonitor struct {
	mu      sync.Mutex
	present map[string]bool
	events  int
	max     int
	worst   []string
	err     error
}

func (m *setMonitor) apply(typ watch.EventType, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events++
	if typ == watch.Deleted {
		delete(m.present, name)
	} else {
		m.present[name] = true
	}
	if n := len(m.present); n > m.max {
		m.max = n
		m.worst = m.worst[:0]
		for k := range m.present {
			m.worst = append(m.worst, k)
		}
		sort.Strings(m.worst)
	}
}

var monitors sync.Map // ns/set → *setMonitor

// watchSetMachines lists the set's Machines and watches them from the
// list's resourceVersion, so no event is missed, until the scenario ends.
func (w *world) watchSetMachines(ctx context.Context, set string) error {
	mon := &setMonitor{present: map[string]bool{}}
	err := w.watchMachines(ctx, labels.SelectorFromSet(labels.Set{clusterv1.SetNameLabel: set}),
		func(list []clusterv1.Machine) {
			for _, m := range list {
				mon.apply(watch.Added, m.Name)
			}
		},
		func(t watch.EventType, m *clusterv1.Machine) { mon.apply(t, m.Name) },
		func(err error) { mon.mu.Lock(); mon.err = err; mon.mu.Unlock() })
	if err != nil {
		return err
	}
	monitors.Store(w.ns+"/"+set, mon)
	return nil
}

func (w *world) setNeverExceeded(_ context.Context, set string, limit int) error {
	v, ok := monitors.Load(w.ns + "/" + set)
	if !ok {
		return fmt.Errorf("the Machines of %s are not watched", set)
	}
	mon := v.(*setMonitor)
	mon.mu.Lock()
	defer mon.mu.Unlock()
	switch {
	case mon.err != nil:
		return fmt.Errorf("the watch failed: %w", mon.err)
	case mon.events == 0:
		return errors.New("the watch saw no event")
	case mon.max > limit:
		return fmt.Errorf("the set had %d Machines at once: %s", mon.max, strings.Join(mon.worst, ", "))
	}
	return nil
}

// deleteSetMachine deletes a Machine once the Machine controller holds it
// with its finalizer: deleted before that, a Machine is gone at once and
// its hooks hold nothing.
func (w *world) deleteSetMachine(ctx context.Context, name string) error {
	name = w.alias(name)
	if err := w.eventually(ctx, "Machine "+name+" has the Machine finalizer", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if !slices.Contains(m.Finalizers, clusterv1.MachineFinalizer) {
			return fmt.Errorf("finalizers %v", m.Finalizers)
		}
		return nil
	}); err != nil {
		return err
	}
	return w.deleteMachine(ctx, name)
}

func (w *world) setReportsDeleting(ctx context.Context, set string, replicas, deleting int) error {
	return w.eventually(ctx, "MachineSet status.replicas counts the Machines being deleted", func(ctx context.Context) error {
		ms, err := w.h.MachineSet(ctx, w.ns, set)
		if err != nil {
			return err
		}
		all, err := harness.MachinesOf(ctx, w.h.Client, ms)
		if err != nil {
			return err
		}
		n := 0
		for _, m := range all {
			if !m.DeletionTimestamp.IsZero() {
				n++
			}
		}
		if int(ms.Status.Replicas) != replicas || n != deleting || ms.Status.ObservedGeneration != ms.Generation {
			return fmt.Errorf("%s; %d Machines, %d being deleted", describeSet(ms), len(all), n)
		}
		return nil
	})
}

// callNewMachine names the one live Machine of the set no alias names yet.
func (w *world) callNewMachine(ctx context.Context, set, name string) error {
	return w.eventually(ctx, "name the new Machine", func(ctx context.Context) error {
		ms, err := w.liveMachines(ctx, set)
		if err != nil {
			return err
		}
		known := map[string]bool{}
		old := map[string]string{}
		if v, ok := aliases.Load(w.ns); ok {
			old = v.(map[string]string)
		}
		for _, real := range old {
			known[real] = true
		}
		var fresh []string
		for _, m := range ms {
			if !known[m.Name] {
				fresh = append(fresh, m.Name)
			}
		}
		if len(fresh) != 1 {
			return fmt.Errorf("new live Machines %v, want exactly one", fresh)
		}
		next := map[string]string{name: fresh[0]}
		for k, v := range old {
			next[k] = v
		}
		aliases.Store(w.ns, next)
		return nil
	})
}

// repointTemplates creates templates named name (with the sim's watch
// filter label on what they clone, as the harness's) and points the set's
// template at them.
func (w *world) repointTemplates(ctx context.Context, set, name string) error {
	cloned := clusterv1.TemplateMetadata{Labels: map[string]string{clusterv1.WatchFilterLabel: harness.Filter}}
	if err := w.h.Client.Create(ctx, harness.Label(&simv1.SimBootstrapConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: simv1.SimBootstrapConfigTemplateSpec{Template: simv1.SimBootstrapConfigTemplateResource{ObjectMeta: cloned}}})); err != nil {
		return err
	}
	if err := w.h.Client.Create(ctx, harness.Label(&simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: simv1.SimMachineTemplateSpec{Template: simv1.SimMachineTemplateResource{ObjectMeta: cloned}}})); err != nil {
		return err
	}
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) {
		ms.Spec.Template.Spec.InfrastructureRef.Name = name
		ms.Spec.Template.Spec.Bootstrap.ConfigRef.Name = name
	})
}

// clonedFrom: the Machine references its own SimMachine and
// SimBootstrapConfig, and both were cloned from the templates named tpl.
func (w *world) clonedFrom(ctx context.Context, name, tpl string) error {
	name = w.alias(name)
	return w.eventually(ctx, "Machine "+name+" cloned from "+tpl, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if m.Spec.InfrastructureRef.Kind != "SimMachine" || m.Spec.InfrastructureRef.Name != name ||
			m.Spec.Bootstrap.ConfigRef == nil || m.Spec.Bootstrap.ConfigRef.Name != name {
			return fmt.Errorf("Machine %s references %+v and %+v", name, m.Spec.Bootstrap.ConfigRef, m.Spec.InfrastructureRef)
		}
		for _, obj := range []client.Object{&simv1.SimMachine{}, &simv1.SimBootstrapConfig{}} {
			if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, obj); err != nil {
				return fmt.Errorf("%T of %s: %w", obj, name, err)
			}
			if got := obj.GetAnnotations()[contract.ClonedFromNameAnnotation]; got != tpl {
				return fmt.Errorf("%T %s cloned from %q, want %q", obj, name, got, tpl)
			}
		}
		return nil
	})
}

// providerObjectsLabel waits until the label key of the bootstrap and
// infrastructure objects of a Machine of the set reads as want says.
func (w *world) providerObjectsLabel(ctx context.Context, name, key string, want func(v string, ok bool) bool) error {
	name = w.alias(name)
	return w.eventually(ctx, "provider objects of "+name+" label "+key, func(ctx context.Context) error {
		for _, obj := range []client.Object{&simv1.SimMachine{}, &simv1.SimBootstrapConfig{}} {
			if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, obj); err != nil {
				return fmt.Errorf("%T of %s: %w", obj, name, err)
			}
			if v, ok := obj.GetLabels()[key]; !want(v, ok) {
				return fmt.Errorf("%T %s labels %v", obj, name, obj.GetLabels())
			}
		}
		return nil
	})
}

func (w *world) providerObjectsLabelled(ctx context.Context, name, key, value string) error {
	return w.providerObjectsLabel(ctx, name, key, func(v string, ok bool) bool { return ok && v == value })
}

func (w *world) providerObjectsNotLabelled(ctx context.Context, name, key string) error {
	return w.providerObjectsLabel(ctx, name, key, func(_ string, ok bool) bool { return !ok })
}

func (w *world) templateGetsLabelAndDrainTimeout(ctx context.Context, set, key, value string, seconds int) error {
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) {
		ms.Spec.Template.ObjectMeta.Labels[key] = value
		ms.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To(int32(seconds))
	})
}

func (w *world) templateLosesLabel(ctx context.Context, set, key string) error {
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) { delete(ms.Spec.Template.ObjectMeta.Labels, key) })
}

func (w *world) setMachineLabelled(ctx context.Context, name, key, value string) error {
	return w.updateMachine(ctx, w.alias(name), func(m *clusterv1.Machine) { m.Labels[key] = value })
}

func (w *world) setMachineHasLabelAndDrainTimeout(ctx context.Context, name, key, value string, seconds int) error {
	name = w.alias(name)
	return w.eventually(ctx, "Machine "+name+" updated in place", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if m.Labels[key] != value || ptr.Deref(m.Spec.Deletion.NodeDrainTimeoutSeconds, 0) != int32(seconds) {
			return fmt.Errorf("Machine %s labels %v, nodeDrainTimeoutSeconds %v", name, m.Labels, ptr.Deref(m.Spec.Deletion.NodeDrainTimeoutSeconds, -1))
		}
		return nil
	})
}

func (w *world) setMachineLabels(ctx context.Context, name, gone, key, value string) error {
	name = w.alias(name)
	return w.eventually(ctx, "Machine "+name+" labels", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if _, ok := m.Labels[gone]; ok || m.Labels[key] != value {
			return fmt.Errorf("Machine %s labels %v", name, m.Labels)
		}
		return nil
	})
}

// aMachineSetSelecting: a set whose selector and template label is
// pool=<pool> (the harness's default pool=<name> cannot carry a name longer
// than a label value).
func (w *world) aMachineSetSelecting(ctx context.Context, name string, replicas int, pool string) error {
	return w.newMachineSet(ctx, name, replicas, func(ms *clusterv1.MachineSet) {
		ms.Spec.Selector.MatchLabels = map[string]string{"pool": pool}
		ms.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": pool}
	})
}

func (w *world) setNameLabelIs(ctx context.Context, set, value string) error {
	return w.eventually(ctx, "set-name labels", func(ctx context.Context) error {
		ms, err := w.liveMachines(ctx, set)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return errors.New("no Machine")
		}
		for _, m := range ms {
			if m.Labels[clusterv1.SetNameLabel] != value {
				return fmt.Errorf("Machine %s set-name label %q", m.Name, m.Labels[clusterv1.SetNameLabel])
			}
		}
		return nil
	})
}

// apiServerMachines installs (or removes) a ValidatingAdmissionPolicy that
// refuses every Machine created in the scenario's namespace, and waits
// until the API server applies it (a dry-run create is refused, or
// accepted again).
func (w *world) apiServerMachines(ctx context.Context, how string) error {
	name := "deny-machines-" + w.ns
	msg := "no new Machines in namespace " + w.ns
	if how == "refuses" {
		policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail),
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
						Rule: admissionv1.Rule{APIGroups: []string{clusterv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"machines"}}},
				}}},
				Validations: []admissionv1.Validation{{Expression: "false", Message: msg}},
			}}
		binding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
				MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": w.ns}}}}}
		for _, obj := range []client.Object{policy, binding} {
			if err := w.h.Env.Client.Create(ctx, obj); err != nil {
				return err
			}
		}
		w.undo = append(w.undo, func(ctx context.Context) error {
			for _, obj := range []client.Object{binding, policy} {
				if err := w.h.Env.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
					return err
				}
			}
			return nil
		})
	} else if err := w.h.Env.Client.Delete(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return err
	}
	return w.eventually(ctx, "the API server "+how+" Machines", func(ctx context.Context) error {
		probe := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "probe"},
			Spec: clusterv1.MachineSpec{ClusterName: w.cluster, Bootstrap: clusterv1.MachineBootstrap{DataSecretName: ptr.To("probe")},
				InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: "probe"}}}
		err := w.h.Env.Client.Create(ctx, probe, client.DryRunAll)
		refused := err != nil && strings.Contains(err.Error(), msg)
		switch {
		case how == "refuses" && !refused:
			return fmt.Errorf("a Machine create is not refused yet: %v", err)
		case how == "accepts" && err != nil:
			return fmt.Errorf("a Machine create is still refused: %w", err)
		}
		return nil
	})
}

func (w *world) setEventTellsRow(ctx context.Context, set, row, reason string) error {
	return w.eventOf(ctx, "Event of row "+row+" with reason "+reason, "MachineSet", set,
		func(e eventsv1.Event) bool { return strings.Contains(e.Action, row) && e.Reason == reason },
		func(e eventsv1.Event) string { return e.Action + "/" + e.Reason })
}

func (w *world) setWarningTellsRow(ctx context.Context, set, row, reason string) error {
	return w.eventOf(ctx, "Warning Event of row "+row+" with reason "+reason, "MachineSet", set,
		func(e eventsv1.Event) bool {
			return strings.Contains(e.Action, row) && e.Reason == reason && e.Type == corev1.EventTypeWarning
		},
		func(e eventsv1.Event) string { return e.Type + " " + e.Action + "/" + e.Reason })
}

// noPanic reads controller-runtime's reconcile panic counter for the
// controller: a panic in a reconcile is recovered, logged and counted
// there. The counter must exist (the controller runs), and be 0.
func (w *world) noPanic(_ context.Context, controller string) error {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return err
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_panics_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					if n := m.GetCounter().GetValue(); n != 0 {
						return fmt.Errorf("%v reconciles of the %s controller panicked", n, controller)
					}
					return nil
				}
			}
		}
	}
	return fmt.Errorf("no reconcile panic counter for the %s controller", controller)
}
