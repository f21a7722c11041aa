package features

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cucumber/godog"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/poll"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// wait bounds every assertion: each polls until it holds or this (Scaled
// by harness.Eventually) passes.
const wait = poll.DefaultTimeout

var scenarioCounter atomic.Int64

// world is the state of one scenario.
type world struct {
	h       *harness.Harness
	cov     *coverage
	ns      string
	cluster string
	// nodes reaches the cluster that holds the scenario's Nodes and Pods:
	// the management cluster, or the workload cluster a Cluster's
	// kubeconfig Secret names (workload_steps_test.go).
	nodes client.Client
	// kubelets: Nodes on which a "kubelet" finishes terminating Pods while
	// assertions poll (envtest runs no kubelet).
	kubelets map[string]bool
	// clusterCA is the certificate of the CA Secret a scenario created
	// (kubeconfig_steps_test.go).
	clusterCA *x509.Certificate
	// pausedKubelets are kubelets held while the workload API server is down.
	pausedKubelets map[string]bool
	workloadDown   bool
	// release ends the scenario's hold on the shared operator.
	release func()
	// undo puts back what a scenario changed outside its namespace (a CRD),
	// whether it passed or not; run in order after the scenario.
	undo []func(context.Context) error
	// decided counts the rows fired for a Machine before a step changed it.
	decided map[string]int
	// teardown: the Machines of a Cluster when it was deleted, true for
	// control-plane ones (teardown_steps_test.go).
	teardown map[string]bool
	// teardownOf: the MachineSets and Machines of each MachineDeployment of
	// the Cluster when it was deleted, by deployment (teardown_steps_test.go).
	teardownOf map[string][]client.ObjectKey
}

// serial lets scenarios run in parallel, each in its own namespace, except
// those tagged @serial (an operator restart), which run alone.
var serial sync.RWMutex

func exclusive(s *godog.Scenario) func() {
	for _, t := range s.Tags {
		if t.Name == "@serial" {
			serial.Lock()
			return serial.Unlock
		}
	}
	serial.RLock()
	return serial.RUnlock
}

type worldKey struct{}

func registerSteps(sc *godog.ScenarioContext, h *harness.Harness, cov *coverage) {
	w := &world{h: h, cov: cov}

	sc.Before(func(ctx context.Context, s *godog.Scenario) (context.Context, error) {
		*w = world{h: h, cov: cov, kubelets: map[string]bool{}, cluster: "c1", nodes: h.Client}
		w.release = exclusive(s)
		w.ns = fmt.Sprintf("spec-%03d", scenarioCounter.Add(1))
		cov.begin(w.ns, s)
		return context.WithValue(ctx, worldKey{}, w), h.Namespace(ctx, w.ns)
	})
	sc.After(func(ctx context.Context, s *godog.Scenario, err error) (context.Context, error) {
		defer w.release()
		for _, undo := range w.undo {
			if uerr := undo(ctx); uerr != nil {
				return ctx, fmt.Errorf("restore after the scenario: %w", uerr)
			}
		}
		// Only @serial scenarios advance the clock, and nothing runs beside
		// them: set it back before the next ones start.
		defer w.h.Clock.Reset()
		if err != nil {
			if os.Getenv("KRTT_TEST_TRACES") != "" {
				w.dumpTraces()
			}
			return ctx, nil
		}
		// Every row the scenario is tagged with must have fired for one of
		// its Machines. Rows may fire just after the last step (N01 once
		// the Machine is gone), so this polls too, as long as a step does:
		// the reconcile that fires such a row waits for the one in flight,
		// which could be blocked for the whole observe timeout (10 s) reading
		// a provider kind the API server cannot list (machine_errors) before
		// reconciler.KindSync, so a wait of 10 s here raced it.
		want := tagged(s)
		for _, k := range want {
			if !cov.known(k) {
				return ctx, fmt.Errorf("tag @row:%s names no row of the shipped tables", k)
			}
		}
		perr := harness.Eventually(ctx, wait, func(context.Context) error {
			var missing []string
			for _, k := range want {
				if !cov.fired(w.ns, k) {
					missing = append(missing, k)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("tagged rows did not fire: %s (fired: %s)", strings.Join(missing, ", "), strings.Join(cov.firedIn(w.ns), ", "))
			}
			return nil
		})
		return ctx, perr
	})

	registerNodeSkipSteps(sc, w)
	registerServedSteps(sc, w)
	registerCertificatesSteps(sc, w)
	registerOwnershipSteps(sc, w)
	registerHealthSteps(sc, w)
	registerDrainSteps(sc, w)
	registerMachineSetSteps(sc, w)
	registerMachineDeploymentSteps(sc, w)
	registerWorkloadSteps(sc, w)
	registerWorkloadOutageSteps(sc, w)
	registerGoneBadSteps(sc, w)
	registerUnreadableKindSteps(sc, w)
	registerTerminatingSteps(sc, w)
	registerForceSteps(sc, w)
	registerTeardownSteps(sc, w)
	registerMistakeSteps(sc, w)
	registerReadinessSteps(sc, w)
	registerUpToDateSteps(sc, w)
	registerNodeSyncSteps(sc, w)
	registerInfrastructureSteps(sc, w)
	registerKubeconfigSteps(sc, w)
	registerTaintSteps(sc, w)

	// --- Given: the world ---
	sc.Step(`^a Cluster "([^"]*)"$`, w.aCluster)
	sc.Step(`^a Machine "([^"]*)" with its bootstrap and infrastructure objects$`, w.aMachine)
	sc.Step(`^a Machine "([^"]*)" with its bootstrap and infrastructure objects and the finalizer "([^"]*)"$`, w.aMachineWithFinalizer)
	sc.Step(`^a paused Machine "([^"]*)" with its bootstrap and infrastructure objects$`, w.aPausedMachine)
	sc.Step(`^a Machine "([^"]*)" of the missing Cluster "([^"]*)"$`, w.aMachineOfMissingCluster)
	sc.Step(`^a Machine "([^"]*)" whose bootstrap object does not exist$`, w.aMachineWithoutBootstrapObject)
	sc.Step(`^a Machine "([^"]*)" whose infrastructure object does not exist$`, w.aMachineWithoutInfrastructureObject)
	sc.Step(`^a Machine "([^"]*)" given the bootstrap data secret "([^"]*)" directly$`, w.aMachineWithDataSecret)
	sc.Step(`^a Machine "([^"]*)" whose infrastructure API fails to answer$`, w.aMachineWithFailingInfrastructureAPI)
	sc.Step(`^a running Machine "([^"]*)"$`, w.aRunningMachine)

	// --- providers and kubelet ---
	sc.Step(`^the bootstrap provider reports the data secret of "([^"]*)"$`, w.bootstrapReady)
	sc.Step(`^the infrastructure of "([^"]*)" is provisioned$`, w.infraProvisioned)
	sc.Step(`^the infrastructure of "([^"]*)" reports provisioned without a providerID$`, w.infraProvisionedWithoutProviderID)
	sc.Step(`^the infrastructure object of "([^"]*)" is deleted$`, w.deleteInfraObject)
	sc.Step(`^a Node joins for "([^"]*)"$`, w.nodeJoins)
	sc.Step(`^two Nodes join with the providerID of "([^"]*)"$`, w.twoNodesJoin)
	sc.Step(`^the Node of "([^"]*)" is deleted$`, w.deleteNode)
	sc.Step(`^a kubelet runs on the Node of "([^"]*)"$`, w.kubeletRuns)
	sc.Step(`^Pod "([^"]*)" runs on the Node of "([^"]*)"$`, w.podRuns)
	sc.Step(`^a PodDisruptionBudget blocks Pod "([^"]*)"$`, w.pdbBlocks)
	sc.Step(`^the PodDisruptionBudget of Pod "([^"]*)" allows disruption$`, w.pdbAllows)
	sc.Step(`^volume "([^"]*)" is attached to the Node of "([^"]*)"$`, w.volumeAttached)
	sc.Step(`^all volumes are detached from the Node of "([^"]*)"$`, w.volumesDetached)
	sc.Step(`^a policy forbids deleting the Node of "([^"]*)"$`, w.policyForbidsNodeDeletion)

	// --- the user ---
	sc.Step(`^the Machine "([^"]*)" has annotation "([^"]*)"$`, w.addAnnotation)
	sc.Step(`^the annotation "([^"]*)" is removed from the Machine "([^"]*)"$`, w.removeAnnotation)
	sc.Step(`^the Machine "([^"]*)" has finalizer "([^"]*)"$`, w.addFinalizer)
	sc.Step(`^the finalizer "([^"]*)" is removed from the Machine "([^"]*)"$`, w.removeFinalizer)
	sc.Step(`^the Machine "([^"]*)" has a (drain|volume detach|Node deletion) timeout of (\d+) seconds?$`, w.setTimeout)
	sc.Step(`^the (drain|volume detach|Node deletion|health|creation) timeout of "([^"]*)" has passed$`, w.timeoutPassed)
	sc.Step(`^I delete the Machine "([^"]*)"$`, w.deleteMachine)
	sc.Step(`^the operator restarts$`, w.restart)
	sc.Step(`^the operator restarts and looks at the Machine "([^"]*)" again$`, w.restartAndReconcile)
	sc.Step(`^the operator restarts without self-hosted Clusters$`, w.restartWithoutSelfHosted)

	// --- Then: assertions, each polling ---
	sc.Step(`^the Machine "([^"]*)" reaches phase "([^"]*)"$`, w.reachesPhase)
	sc.Step(`^the Machine "([^"]*)" has condition "([^"]*)" with reason "([^"]*)"$`, w.hasCondition)
	sc.Step(`^the Machine "([^"]*)" has condition "([^"]*)" with reason "([^"]*)" and message containing "([^"]*)"$`, w.hasConditionWithMessage)
	sc.Step(`^the Machine "([^"]*)" has condition "([^"]*)" with status "([^"]*)" and reason "([^"]*)"$`, w.hasConditionWithStatus)
	sc.Step(`^the last row of "([^"]*)" is "([^"]*)"$`, w.lastRow)
	sc.Step(`^row "([^"]*)" fired for "([^"]*)"$`, w.rowFired)
	sc.Step(`^the Machine "([^"]*)" has the krtt finalizer$`, w.hasKrttFinalizer)
	sc.Step(`^the Machine "([^"]*)" has failure reason "([^"]*)"$`, w.hasFailureReason)
	sc.Step(`^the Machine "([^"]*)" references its Node$`, w.referencesNode)
	sc.Step(`^the Machine "([^"]*)" reports the node info of its Node$`, w.reportsNodeInfo)
	sc.Step(`^a Node joins for "([^"]*)" with the NoSchedule taint "([^"]*)"$`, w.nodeJoinsTainted)
	sc.Step(`^the Machine "([^"]*)" has the label "([^"]*)" = "([^"]*)"$`, w.labelMachine)
	sc.Step(`^the Node of "([^"]*)" has the (label|annotation) "([^"]*)" = "([^"]*)"$`, w.nodeHasMetadata)
	sc.Step(`^the Node of "([^"]*)" has no taint "([^"]*)"$`, w.nodeHasNoTaint)
	sc.Step(`^the Machine "([^"]*)" records that its phase changed when it entered its state$`, w.phaseChangedWithState)
	sc.Step(`^the Machine "([^"]*)" is gone$`, w.machineGone)
	sc.Step(`^the Node of "([^"]*)" (exists|is gone|is cordoned)$`, w.nodeState)
	sc.Step(`^the (infrastructure|bootstrap) object of "([^"]*)" (exists|is gone)$`, w.externalState)
	sc.Step(`^Pod "([^"]*)" (is evicted|is still running)$`, w.podState)
}

// --- helpers ---

func (w *world) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: w.ns, Name: name}
}

// nodeName is the Node a Machine's kubelet registers: Nodes are
// cluster-scoped, so the name carries the scenario namespace.
func (w *world) nodeName(machine string) string { return w.ns + "-" + machine }

// eventually polls cond, playing the kubelet on the Nodes that have one.
func (w *world) eventually(ctx context.Context, what string, cond func(context.Context) error) error {
	err := harness.Eventually(ctx, wait, func(ctx context.Context) error {
		for n := range w.kubelets {
			if _, err := harness.FinishTerminatingPods(ctx, w.nodes, n); err != nil {
				return err
			}
		}
		return cond(ctx)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// eventOf waits until an Event regarding the kind's object name is one
// match accepts; until then its error lists every Event of that object as
// describe words it.
func (w *world) eventOf(ctx context.Context, what, kind, name string, match func(eventsv1.Event) bool, describe func(eventsv1.Event) string) error {
	return w.eventually(ctx, what, func(ctx context.Context) error {
		events, err := w.eventsAbout(ctx, kind, name)
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range events {
			if match(e) {
				return nil
			}
			seen = append(seen, describe(e))
		}
		return fmt.Errorf("Events of %s %s:\n%s", kind, name, strings.Join(seen, "\n"))
	})
}

// eventsAbout are the Events of the scenario's namespace regarding the
// object of that kind and name.
func (w *world) eventsAbout(ctx context.Context, kind, name string) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out, nil
}

func (w *world) machine(ctx context.Context, name string) (*clusterv1.Machine, error) {
	return w.h.Machine(ctx, w.ns, name)
}

// updateMachine changes a Machine, retrying on conflicts with the operator.
func (w *world) updateMachine(ctx context.Context, name string, fn func(*clusterv1.Machine)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		fn(m)
		return w.h.Client.Update(ctx, m)
	})
}

func (w *world) updateNode(ctx context.Context, machine string, fn func(*corev1.Node), status bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := &corev1.Node{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Name: w.nodeName(machine)}, n); err != nil {
			return err
		}
		fn(n)
		if status {
			return w.nodes.Status().Update(ctx, n)
		}
		return w.nodes.Update(ctx, n)
	})
}

func describe(m *clusterv1.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase %q state %q", m.Status.Phase, m.Status.State)
	if lt := m.Status.LastTransition; lt != nil {
		fmt.Fprintf(&b, ", last row %s/%s %s->%s %s %q", lt.Table, lt.Row, lt.From, lt.To, lt.Outcome, lt.Message)
	}
	return b.String()
}

func (w *world) dumpTraces() {
	for _, tr := range w.h.Traces(types.NamespacedName{}) {
		if strings.HasPrefix(tr.Object, w.ns+"/") {
			fmt.Printf("trace %s %s/%s %s->%s %s %s %s\n", tr.Object, tr.Table, tr.Row, tr.From, tr.To, tr.Action, tr.Outcome, tr.Message)
		}
	}
}

// --- Given ---

func (w *world) aCluster(ctx context.Context, name string) error {
	w.cluster = name
	_, err := w.h.Cluster(ctx, w.ns, name)
	return err
}

func (w *world) aMachine(ctx context.Context, name string) error {
	_, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name)
	return err
}

// aMachineWithFinalizer creates the Machine with another controller's
// finalizer from the start (adding it later could race with the operator's
// own finalizer patch, which replaces the list).
func (w *world) aMachineWithFinalizer(ctx context.Context, name, finalizer string) error {
	_, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name, func(m *clusterv1.Machine) {
		m.Finalizers = []string{finalizer}
	})
	return err
}

func (w *world) aPausedMachine(ctx context.Context, name string) error {
	_, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name, func(m *clusterv1.Machine) {
		m.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	})
	return err
}

func (w *world) aMachineOfMissingCluster(ctx context.Context, name, cluster string) error {
	_, err := w.h.MachineObjects(ctx, w.ns, cluster, name)
	return err
}

func (w *world) aMachineWithoutBootstrapObject(ctx context.Context, name string) error {
	return w.h.Client.Create(ctx, &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.MachineSpec{
			ClusterName: w.cluster,
			Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
				APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfig", Name: name + "-missing"}},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: name + "-missing"},
		},
	})
}

func (w *world) aMachineWithoutInfrastructureObject(ctx context.Context, name string) error {
	if err := w.h.Client.Create(ctx, &simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}); err != nil {
		return err
	}
	return w.h.Client.Create(ctx, &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.MachineSpec{
			ClusterName: w.cluster,
			Bootstrap: clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{
				APIGroup: simv1.GroupVersion.Group, Kind: "SimBootstrapConfig", Name: name}},
			InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachine", Name: name + "-missing"},
		},
	})
}

func (w *world) aMachineWithDataSecret(ctx context.Context, name, secret string) error {
	_, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name, func(m *clusterv1.Machine) {
		m.Spec.Bootstrap.ConfigRef = nil
		m.Spec.Bootstrap.DataSecretName = ptr.To(secret)
	})
	return err
}

func (w *world) aRunningMachine(ctx context.Context, name string) error {
	return w.runningMachine(ctx, name)
}

// runningMachine creates a Machine and plays its providers and kubelet
// until it is Running.
func (w *world) runningMachine(ctx context.Context, name string, mutate ...func(*clusterv1.Machine)) error {
	if _, err := w.h.MachineObjects(ctx, w.ns, w.cluster, name, mutate...); err != nil {
		return err
	}
	if err := w.bootstrapReady(ctx, name); err != nil {
		return err
	}
	if err := w.infraProvisioned(ctx, name); err != nil {
		return err
	}
	if err := w.nodeJoins(ctx, name); err != nil {
		return err
	}
	return w.reachesPhase(ctx, name, string(clusterv1.MachinePhaseRunning))
}

// --- providers and kubelet ---

func (w *world) bootstrapReady(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return w.h.BootstrapReady(ctx, w.ns, name) })
}

func (w *world) infraProvisioned(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return w.h.InfrastructureProvisioned(ctx, w.ns, name) })
}

// updateStatus plays a controller that writes obj's status: it reads obj
// (by its name, in the scenario's namespace), mutates it and updates its
// status, reading again on a conflict.
func (w *world) updateStatus(ctx context.Context, obj client.Object, mutate func()) error {
	key := client.ObjectKey{Namespace: w.ns, Name: obj.GetName()}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.h.Client.Get(ctx, key, obj); err != nil {
			return err
		}
		mutate()
		return w.h.Client.Status().Update(ctx, obj)
	})
}

func (w *world) infraProvisionedWithoutProviderID(ctx context.Context, name string) error {
	sm := &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return w.updateStatus(ctx, sm, func() {
		sm.Status.Initialization.Provisioned = ptr.To(true)
		sm.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Provisioned", LastTransitionTime: metav1.Now()}}
	})
}

func (w *world) deleteInfraObject(ctx context.Context, name string) error {
	return w.h.Client.Delete(ctx, &simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}

func (w *world) nodeJoins(ctx context.Context, name string) error {
	_, err := harness.JoinNode(ctx, w.nodes, w.nodeName(name), harness.ProviderID(w.ns, name))
	return err
}

// nodeJoinsTainted plays a kubelet that registers tainted, as a bootstrap
// provider's kubelet configuration may ask.
func (w *world) nodeJoinsTainted(ctx context.Context, name, key string) error {
	_, err := harness.JoinNode(ctx, w.nodes, w.nodeName(name), harness.ProviderID(w.ns, name),
		corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	return err
}

func (w *world) labelMachine(ctx context.Context, name, key, value string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[key] = value
	})
}

func (w *world) nodeHasMetadata(ctx context.Context, name, which, key, value string) error {
	return w.eventually(ctx, "Node "+which+" "+key, func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Name: w.nodeName(name)}, n); err != nil {
			return err
		}
		have := n.Labels
		if which == "annotation" {
			have = n.Annotations
		}
		if got, ok := have[key]; !ok || got != value {
			return fmt.Errorf("%s %s = %q (present %v), want %q", which, key, got, ok, value)
		}
		return nil
	})
}

func (w *world) nodeHasNoTaint(ctx context.Context, name, key string) error {
	return w.eventually(ctx, "Node without taint "+key, func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Name: w.nodeName(name)}, n); err != nil {
			return err
		}
		for _, t := range n.Spec.Taints {
			if t.Key == key {
				return fmt.Errorf("taints %+v", n.Spec.Taints)
			}
		}
		return nil
	})
}

func (w *world) twoNodesJoin(ctx context.Context, name string) error {
	for _, suffix := range []string{"-a", "-b"} {
		if _, err := harness.JoinNode(ctx, w.nodes, w.nodeName(name)+suffix, harness.ProviderID(w.ns, name)); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) deleteNode(ctx context.Context, name string) error {
	return w.nodes.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(name)}})
}

func (w *world) kubeletRuns(_ context.Context, name string) error {
	w.kubelets[w.nodeName(name)] = true
	return nil
}

func (w *world) podRuns(ctx context.Context, pod, machine string) error {
	_, err := harness.RunningPod(ctx, w.nodes, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod})
	return err
}

// The PDB of a Pod is named after it. envtest runs no disruption
// controller, so the steps write the PDB status as it would.
func (w *world) pdbBlocks(ctx context.Context, pod string) error {
	minAvailable := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": pod}}}}
	if err := w.nodes.Create(ctx, pdb); err != nil {
		return err
	}
	return w.setPDB(ctx, pod, 0)
}

func (w *world) pdbAllows(ctx context.Context, pod string) error { return w.setPDB(ctx, pod, 1) }

func (w *world) setPDB(ctx context.Context, name string, allowed int32) error {
	return w.eventually(ctx, "set PDB status", func(ctx context.Context) error {
		p := &policyv1.PodDisruptionBudget{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, p); err != nil {
			return err
		}
		p.Status.ObservedGeneration = p.Generation
		p.Status.DisruptionsAllowed = allowed
		p.Status.CurrentHealthy = 1 + allowed
		p.Status.DesiredHealthy = 1
		p.Status.ExpectedPods = 1 + allowed
		return w.nodes.Status().Update(ctx, p)
	})
}

func (w *world) volumeAttached(ctx context.Context, volume, machine string) error {
	return w.updateNode(ctx, machine, func(n *corev1.Node) {
		n.Status.VolumesAttached = append(n.Status.VolumesAttached, corev1.AttachedVolume{
			Name: corev1.UniqueVolumeName("kubernetes.io/csi/sim^" + volume), DevicePath: "/dev/" + volume})
	}, true)
}

func (w *world) volumesDetached(ctx context.Context, machine string) error {
	return w.updateNode(ctx, machine, func(n *corev1.Node) { n.Status.VolumesAttached = nil }, true)
}

// --- the user ---

func (w *world) addAnnotation(ctx context.Context, name, key string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[key] = ""
	})
}

func (w *world) removeAnnotation(ctx context.Context, key, name string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) { delete(m.Annotations, key) })
}

func (w *world) addFinalizer(ctx context.Context, name, f string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) { m.Finalizers = append(m.Finalizers, f) })
}

func (w *world) removeFinalizer(ctx context.Context, f, name string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
		var keep []string
		for _, x := range m.Finalizers {
			if x != f {
				keep = append(keep, x)
			}
		}
		m.Finalizers = keep
	})
}

func (w *world) setTimeout(ctx context.Context, name, which string, seconds int) error {
	v := ptr.To(int32(seconds))
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
		switch which {
		case "drain":
			m.Spec.Deletion.NodeDrainTimeoutSeconds = v
		case "volume detach":
			m.Spec.Deletion.NodeVolumeDetachTimeoutSeconds = v
		case "Node deletion":
			m.Spec.Deletion.NodeDeletionTimeoutSeconds = v
		}
	})
}

// timeoutPassed waits until the step has recorded when it started, then
// advances the operator's clock past the timeout (no sleeping). Nothing
// touches the Machine: the operator wakes it at its wait's deadline, as it
// would when real time got there. Scenarios that use it are @serial, since
// the clock is the whole operator's.
func (w *world) timeoutPassed(ctx context.Context, which, name string) error {
	var left time.Duration
	err := w.eventually(ctx, which+" timeout", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		var start *metav1.Time
		var seconds *int32
		switch which {
		case "drain":
			start, seconds = m.Status.Deletion.NodeDrainStartTime, m.Spec.Deletion.NodeDrainTimeoutSeconds
		case "volume detach":
			start, seconds = m.Status.Deletion.WaitForNodeVolumeDetachStartTime, m.Spec.Deletion.NodeVolumeDetachTimeoutSeconds
		case "Node deletion":
			start, seconds = m.DeletionTimestamp, m.Spec.Deletion.NodeDeletionTimeoutSeconds
		case "health":
			start, seconds = m.Status.Health.UnhealthySince, m.Spec.Health.HealthTimeoutSeconds
		case "creation":
			start, seconds = &m.CreationTimestamp, m.Spec.Health.CreationTimeoutSeconds
		}
		if start == nil || seconds == nil {
			return fmt.Errorf("no %s start time or timeout yet (%s)", which, describe(m))
		}
		left = start.Add(time.Duration(*seconds) * time.Second).Sub(w.h.Clock.Now())
		return nil
	})
	if err != nil {
		return err
	}
	if left >= 0 {
		w.h.Clock.Advance(left + time.Second)
	}
	return nil
}

func (w *world) deleteMachine(ctx context.Context, name string) error {
	return w.h.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}

func (w *world) restart(context.Context) error { return w.h.RestartOperator() }

// restartAndReconcile restarts the operator and waits until the new one has
// fired a row for the Machine, so what follows happens to a Machine the
// restarted operator has already seen.
func (w *world) restartAndReconcile(ctx context.Context, name string) error {
	before := len(w.h.Traces(w.key(name)))
	if err := w.h.RestartOperator(); err != nil {
		return err
	}
	return w.eventually(ctx, "a row fired for "+name+" after the restart", func(context.Context) error {
		if len(w.h.Traces(w.key(name))) <= before {
			return fmt.Errorf("no row fired for %s since the restart", name)
		}
		return nil
	})
}

// restartWithoutSelfHosted restarts the operator as shipped (no
// --self-hosted-clusters) until the scenario ends; the next scenarios get
// it back as they expect it.
func (w *world) restartWithoutSelfHosted(context.Context) error {
	w.h.NoSelfHosted = true
	w.undo = append(w.undo, func(context.Context) error {
		w.h.NoSelfHosted = false
		return w.h.RestartOperator()
	})
	return w.h.RestartOperator()
}

// --- Then ---

func (w *world) reachesPhase(ctx context.Context, name, phase string) error {
	return w.eventually(ctx, "phase "+phase, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if string(m.Status.Phase) != phase {
			return errors.New(describe(m))
		}
		return nil
	})
}

func (w *world) condition(ctx context.Context, name, ctype, status, reason, msg string) error {
	return w.eventually(ctx, fmt.Sprintf("condition %s reason %s", ctype, reason), func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(m.Status.Conditions, ctype)
		if c == nil || c.Reason != reason || (status != "" && string(c.Status) != status) || !strings.Contains(c.Message, msg) {
			return fmt.Errorf("%s = %+v; %s", ctype, c, describe(m))
		}
		return nil
	})
}

func (w *world) hasCondition(ctx context.Context, name, ctype, reason string) error {
	return w.condition(ctx, name, ctype, "", reason, "")
}

func (w *world) hasConditionWithMessage(ctx context.Context, name, ctype, reason, msg string) error {
	return w.condition(ctx, name, ctype, "", reason, msg)
}

func (w *world) hasConditionWithStatus(ctx context.Context, name, ctype, status, reason string) error {
	return w.condition(ctx, name, ctype, status, reason, "")
}

func (w *world) lastRow(ctx context.Context, name, row string) error {
	return w.eventually(ctx, "last row "+row, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if lt := m.Status.LastTransition; lt == nil || lt.Row != row {
			return errors.New(describe(m))
		}
		return nil
	})
}

// rowFired polls the operator's traces for the Machine.
func (w *world) rowFired(ctx context.Context, row, name string) error {
	return w.eventually(ctx, "row "+row+" fired", func(context.Context) error {
		for _, tr := range w.h.Traces(w.key(name)) {
			if tr.Row == row {
				return nil
			}
		}
		return fmt.Errorf("rows fired so far: %s", strings.Join(w.cov.firedIn(w.ns), ", "))
	})
}

func (w *world) hasKrttFinalizer(ctx context.Context, name string) error {
	return w.eventually(ctx, "krtt finalizer", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		for _, f := range m.Finalizers {
			if f == clusterv1.MachineFinalizer {
				return nil
			}
		}
		return fmt.Errorf("finalizers %v", m.Finalizers)
	})
}

func (w *world) hasFailureReason(ctx context.Context, name, reason string) error {
	return w.eventually(ctx, "failure reason "+reason, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if m.Status.FailureReason == nil || *m.Status.FailureReason != reason {
			return fmt.Errorf("failureReason %v; %s", m.Status.FailureReason, describe(m))
		}
		return nil
	})
}

func (w *world) referencesNode(ctx context.Context, name string) error {
	return w.eventually(ctx, "nodeRef", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if m.Status.NodeRef == nil || m.Status.NodeRef.Name != w.nodeName(name) {
			return fmt.Errorf("nodeRef %+v", m.Status.NodeRef)
		}
		return nil
	})
}

// reportsNodeInfo: status.nodeInfo is the Node's (Cluster API
// reconcileNode copies it).
func (w *world) reportsNodeInfo(ctx context.Context, name string) error {
	return w.eventually(ctx, "nodeInfo", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		n := &corev1.Node{}
		if err := w.nodes.Get(ctx, client.ObjectKey{Name: w.nodeName(name)}, n); err != nil {
			return err
		}
		if n.Status.NodeInfo.KubeletVersion == "" {
			return fmt.Errorf("the Node reports no kubelet version")
		}
		if m.Status.NodeInfo == nil || *m.Status.NodeInfo != n.Status.NodeInfo {
			return fmt.Errorf("nodeInfo %+v, want the Node's %+v", m.Status.NodeInfo, n.Status.NodeInfo)
		}
		return nil
	})
}

// phaseChangedWithState: status.lastUpdated (when the phase last changed,
// Cluster API setMachinePhaseAndLastUpdated) is the time the Machine entered
// its state, for the row that brought it there changed its phase.
func (w *world) phaseChangedWithState(ctx context.Context, name string) error {
	return w.eventually(ctx, "lastUpdated", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if m.Status.LastUpdated == nil || m.Status.StateSince == nil || !m.Status.LastUpdated.Equal(m.Status.StateSince) {
			return fmt.Errorf("lastUpdated %v, stateSince %v (state %s, phase %s)", m.Status.LastUpdated, m.Status.StateSince, m.Status.State, m.Status.Phase)
		}
		return nil
	})
}

func (w *world) machineGone(ctx context.Context, name string) error {
	return w.eventually(ctx, "Machine gone", func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: %s", describe(m))
	})
}

func (w *world) nodeState(ctx context.Context, machine, state string) error {
	return w.eventually(ctx, "Node "+state, func(ctx context.Context) error {
		n := &corev1.Node{}
		err := w.nodes.Get(ctx, client.ObjectKey{Name: w.nodeName(machine)}, n)
		switch state {
		case "is gone":
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err == nil {
				return fmt.Errorf("Node %s still exists", n.Name)
			}
			return err
		case "exists":
			return err
		default: // is cordoned
			if err != nil {
				return err
			}
			if !n.Spec.Unschedulable {
				return fmt.Errorf("Node %s is schedulable", n.Name)
			}
			return nil
		}
	})
}

func (w *world) externalState(ctx context.Context, which, machine, state string) error {
	return w.eventually(ctx, which+" object "+state, func(ctx context.Context) error {
		var obj client.Object = &simv1.SimMachine{}
		if which == "bootstrap" {
			obj = &simv1.SimBootstrapConfig{}
		}
		err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: machine}, obj)
		if state == "exists" {
			if err == nil && obj.GetDeletionTimestamp() != nil {
				return fmt.Errorf("%s object is being deleted", which)
			}
			return err
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			return fmt.Errorf("%s object still exists", which)
		}
		return err
	})
}

func (w *world) podState(ctx context.Context, pod, state string) error {
	return w.eventually(ctx, "Pod "+pod+" "+state, func(ctx context.Context) error {
		p := &corev1.Pod{}
		err := w.nodes.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p)
		if state == "is evicted" {
			if apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil) {
				return nil
			}
			if err == nil {
				return fmt.Errorf("Pod %s is still running", pod)
			}
			return err
		}
		if err != nil {
			return err
		}
		if p.DeletionTimestamp != nil {
			return fmt.Errorf("Pod %s is being deleted", pod)
		}
		return nil
	})
}
