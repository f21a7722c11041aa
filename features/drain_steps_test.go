package features

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerDrainSteps: the Pods a drain meets, and what it does with each
// (the pod-verdict decision table), drain rules and force deletion.
func registerDrainSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^mirror Pod "([^"]*)" runs on the Node of "([^"]*)"$`, w.mirrorPodRuns)
	sc.Step(`^the Machine "([^"]*)" recorded when its drain and its volume wait started$`, w.recordsDrainAndVolumeWaitStart)
	sc.Step(`^Pod "([^"]*)" with label "([^"=]*)=([^"]*)" runs on the Node of "([^"]*)"$`, w.labelledPodRuns)
	sc.Step(`^DaemonSet Pod "([^"]*)" runs on the Node of "([^"]*)"$`, w.daemonSetPodRuns)
	sc.Step(`^Pod "([^"]*)" has finished on the Node of "([^"]*)"$`, w.finishedPod)
	sc.Step(`^Pod "([^"]*)" has finished on the Node of "([^"]*)" and is held by a finalizer while it is deleted$`, w.finishedPodHeld)
	sc.Step(`^Pod "([^"]*)" is gone$`, w.podGone)
	sc.Step(`^DaemonSet Pod "([^"]*)" runs on the Node of "([^"]*)" and is held by a finalizer while it is deleted$`, w.daemonSetPodHeld)
	sc.Step(`^Pod "([^"]*)" is being deleted and held there by a finalizer$`, w.podBeingDeletedHeld)
	sc.Step(`^Pod "([^"]*)" completes$`, w.podCompletes)
	sc.Step(`^Pod "([^"]*)" has terminated$`, w.podTerminated)
	sc.Step(`^a MachineDrainRule "([^"]*)" with behavior "([^"]*)" for Pods labelled "([^"=]*)=([^"]*)"$`, w.drainRule)
	sc.Step(`^a MachineDrainRule "([^"]*)" with behavior "Drain" and order (-?\d+) for Pods labelled "([^"=]*)=([^"]*)"$`, w.drainRuleWithOrder)
	sc.Step(`^a MachineDrainRule "([^"]*)" with behavior "([^"]*)" for Pods labelled "([^"=]*)=([^"]*)" in namespaces labelled "([^"=]*)=([^"]*)"$`, w.drainRuleInNamespaces)
	sc.Step(`^a MachineDrainRule "([^"]*)" with behavior "([^"]*)" whose Pod selector the API server accepts but cannot be evaluated$`, w.unevaluableDrainRule)
	sc.Step(`^the MachineDrainRule "([^"]*)" is deleted$`, w.deleteDrainRule)
	sc.Step(`^the MachineDrainRule "([^"]*)" has condition "([^"]*)" with status "([^"]*)", reason "([^"]*)" and message containing "([^"]*)"$`, w.drainRuleCondition)
	sc.Step(`^a Warning Event of the MachineDrainRule "([^"]*)" with reason "([^"]*)" says "([^"]*)"$`, w.drainRuleWarning)
	sc.Step(`^a MachineDrainRule "([^"]*)" with behavior "([^"]*)" for Machines labelled "([^"=]*)=([^"]*)"$`, w.drainRuleForMachines)
	sc.Step(`^the namespace of the scenario is labelled "([^"=]*)=([^"]*)"$`, w.labelNamespace)
	sc.Step(`^Pod "([^"]*)" with priority (\d+) and a volume "([^"]*)" runs on the Node of "([^"]*)"$`, w.podWithVolume)
	sc.Step(`^volume "([^"]*)" is detached from the Node of "([^"]*)"$`, w.volumeDetached)
	sc.Step(`^a VolumeAttachment "([^"]*)" attaches volume "([^"]*)" to the Node of "([^"]*)"$`, w.volumeAttachment)
	sc.Step(`^the VolumeAttachment "([^"]*)" is gone$`, w.volumeAttachmentGone)
	sc.Step(`^the Machine "([^"]*)" carries the force-deletion label$`, w.forceDeletionLabel)
	sc.Step(`^the Machine "([^"]*)" forces its deletion when the drain times out$`, w.onDrainTimeoutForce)
	sc.Step(`^the Node of "([^"]*)" reports Ready=False$`, w.nodeNotReady)
	sc.Step(`^(\d+) minutes pass for "([^"]*)"$`, w.minutesPassFor)
	sc.Step(`^an admission policy refuses to cordon the Node of "([^"]*)"$`, w.refuseCordon)
	sc.Step(`^the admission policy that refuses to cordon the Node of "([^"]*)" is removed$`, w.allowCordon)
}

// refuseCordon makes the API server refuse to mark the Machine's Node
// unschedulable, as a policy of the cluster's owners may: a
// ValidatingAdmissionPolicy matching that Node alone. A policy takes effect
// a moment after it is created, so this returns once a dry-run cordon is
// refused.
func (w *world) refuseCordon(ctx context.Context, machine string) error {
	node := w.nodeName(machine)
	name := "no-cordon-" + node
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"nodes"}},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "this-node", Expression: fmt.Sprintf("object.metadata.name == %q", node)}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.spec.unschedulable) || !object.spec.unschedulable",
				Message:    "the owners of this cluster do not allow cordoning " + node,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := w.h.Client.Create(ctx, o); err != nil {
			return err
		}
	}
	w.undo = append(w.undo, func(ctx context.Context) error { return w.allowCordon(ctx, machine) })
	return w.eventually(ctx, "the API server refuses to cordon "+node, func(ctx context.Context) error {
		switch err := w.dryRunCordon(ctx, node); {
		case err == nil:
			return fmt.Errorf("a dry-run cordon of %s was accepted", node)
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			return nil
		default:
			return err
		}
	})
}

// allowCordon removes the policy of refuseCordon and returns once a
// dry-run cordon is accepted (or the Node is gone).
func (w *world) allowCordon(ctx context.Context, machine string) error {
	node := w.nodeName(machine)
	name := "no-cordon-" + node
	for _, o := range []client.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}},
	} {
		if err := w.h.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return w.eventually(ctx, "the API server lets "+node+" be cordoned", func(ctx context.Context) error {
		if err := w.dryRunCordon(ctx, node); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
}

// dryRunCordon asks the API server to mark the Node unschedulable without
// doing it.
func (w *world) dryRunCordon(ctx context.Context, node string) error {
	n := &corev1.Node{}
	if err := w.nodes.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		return err
	}
	cordoned := n.DeepCopy()
	cordoned.Spec.Unschedulable = true
	return w.nodes.Patch(ctx, cordoned, client.MergeFrom(n), client.DryRunAll)
}

func (w *world) mirrorPodRuns(ctx context.Context, pod, machine string) error {
	_, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod}, func(p *corev1.Pod) {
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static"}
	})
	return err
}

func (w *world) labelledPodRuns(ctx context.Context, pod, key, value, machine string) error {
	_, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod, key: value})
	return err
}

// daemonSetPodRuns creates a DaemonSet (no controller runs it here) and a
// Pod it controls.
func (w *world) daemonSetPodRuns(ctx context.Context, pod, machine string) error {
	labels := map[string]string{"app": pod}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}}}
	if err := w.h.Client.Create(ctx, ds); err != nil {
		return err
	}
	_, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), labels, func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}
	})
	return err
}

// finishedPod plays the kubelet of a Pod that ran to completion.
func (w *world) finishedPod(ctx context.Context, pod, machine string) error {
	p, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod})
	if err != nil {
		return err
	}
	p.Status.Phase = corev1.PodSucceeded
	p.Status.Conditions = nil
	return w.h.Client.Status().Update(ctx, p)
}

// finishedPodHeld leaves a finished Pod with a deletionTimestamp that a
// finalizer keeps from going.
func (w *world) finishedPodHeld(ctx context.Context, pod, machine string) error {
	if err := w.finishedPod(ctx, pod, machine); err != nil {
		return err
	}
	return w.deleteHeld(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod}})
}

// releasePod removes the hold finalizer of a Pod, if it has one.
func (w *world) releasePod(ctx context.Context, pod string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p); err != nil {
			return client.IgnoreNotFound(err)
		}
		var keep []string
		for _, f := range p.Finalizers {
			if f != holdFinalizer {
				keep = append(keep, f)
			}
		}
		p.Finalizers = keep
		return w.h.Client.Update(ctx, p)
	})
}

func (w *world) podGone(ctx context.Context, pod string) error {
	return w.eventually(ctx, "Pod "+pod+" gone", func(ctx context.Context) error {
		p := &corev1.Pod{}
		err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("Pod %s still exists (phase %s, deleting %v)", pod, p.Status.Phase, p.DeletionTimestamp != nil)
	})
}

func (w *world) daemonSetPodHeld(ctx context.Context, pod, machine string) error {
	if err := w.daemonSetPodRuns(ctx, pod, machine); err != nil {
		return err
	}
	return w.deleteHeld(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod}})
}

// podBeingDeletedHeld deletes a Pod that already runs and keeps it in its
// "being deleted" state.
func (w *world) podBeingDeletedHeld(ctx context.Context, pod string) error {
	return w.deleteHeld(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: pod}})
}

// podCompletes plays the kubelet of a Pod that ran to completion.
func (w *world) podCompletes(ctx context.Context, pod string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p); err != nil {
			return err
		}
		p.Status.Phase = corev1.PodSucceeded
		p.Status.Conditions = nil
		return w.h.Client.Status().Update(ctx, p)
	})
}

// podTerminated plays the kubelet finishing one evicted Pod.
func (w *world) podTerminated(ctx context.Context, pod string) error {
	return w.eventually(ctx, "Pod "+pod+" terminated", func(ctx context.Context) error {
		p := &corev1.Pod{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: pod}, p); err != nil {
			return client.IgnoreNotFound(err)
		}
		if p.DeletionTimestamp == nil {
			return fmt.Errorf("Pod %s is not being deleted", pod)
		}
		return client.IgnoreNotFound(w.h.Client.Delete(ctx, p, client.GracePeriodSeconds(0)))
	})
}

func (w *world) drainRule(ctx context.Context, name, behavior, key, value string) error {
	return w.createDrainRule(ctx, name, clusterv1.MachineDrainRuleDrainBehavior(behavior), nil, key, value)
}

func (w *world) drainRuleWithOrder(ctx context.Context, name string, order int, key, value string) error {
	return w.createDrainRule(ctx, name, clusterv1.DrainBehaviorDrain, ptr.To(int32(order)), key, value)
}

func (w *world) createDrainRule(ctx context.Context, name string, behavior clusterv1.MachineDrainRuleDrainBehavior, order *int32, key, value string) error {
	return w.h.Client.Create(ctx, &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.MachineDrainRuleSpec{Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: behavior, Order: order},
			Pods: []clusterv1.MachineDrainRulePodSelector{{Selector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{key: clusterv1.LabelValue(value)}}}}}})
}

// drainRuleInNamespaces selects Pods by their labels and their
// Namespace's labels (pods[].namespaceSelector).
func (w *world) drainRuleInNamespaces(ctx context.Context, name, behavior, key, value, nsKey, nsValue string) error {
	return w.h.Client.Create(ctx, &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.MachineDrainRuleSpec{Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: clusterv1.MachineDrainRuleDrainBehavior(behavior)},
			Pods: []clusterv1.MachineDrainRulePodSelector{{Selector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{key: clusterv1.LabelValue(value)}},
				NamespaceSelector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{nsKey: clusterv1.LabelValue(nsValue)}}}}}})
}

// drainRuleForMachines applies to every Pod of the Machines it selects
// (machines[].selector; no pods[]).
func (w *world) drainRuleForMachines(ctx context.Context, name, behavior, key, value string) error {
	return w.h.Client.Create(ctx, &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.MachineDrainRuleSpec{Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: clusterv1.MachineDrainRuleDrainBehavior(behavior)},
			Machines: []clusterv1.MachineDrainRuleMachineSelector{{Selector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{key: clusterv1.LabelValue(value)}}}}}})
}

// labelNamespace labels the scenario's namespace, where its Pods run.
func (w *world) labelNamespace(ctx context.Context, key, value string) error {
	ns := &corev1.Namespace{}
	if err := w.h.Client.Get(ctx, client.ObjectKey{Name: w.ns}, ns); err != nil {
		return err
	}
	base := ns.DeepCopy()
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[key] = value
	return w.h.Client.Patch(ctx, ns, client.MergeFrom(base))
}

// podWithVolume plays the CSI driver too: a PV with the volume handle, a
// PVC bound to it, the Pod mounting it, and the volume in the Node's
// status.volumesAttached.
func (w *world) podWithVolume(ctx context.Context, pod string, priority int, volume, machine string) error {
	pvName := w.ns + "-" + volume
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "sim", VolumeHandle: volume}},
			// Bound both ways, as the volume binder (not run here) leaves them.
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: w.ns, Name: volume}}}
	if err := w.h.Client.Create(ctx, pv); err != nil {
		return err
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: volume},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: pvName,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if err := w.h.Client.Create(ctx, pvc); err != nil {
		return err
	}
	// The priority admission plugin sets spec.priority from a PriorityClass.
	class := fmt.Sprintf("%s-priority-%d", w.ns, priority)
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Value: int32(priority)}
	if err := w.h.Client.Create(ctx, pc); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// The admission plugin reads PriorityClasses from its own cache: retry
	// until it knows the new one.
	err := w.eventually(ctx, "create Pod "+pod, func(ctx context.Context) error {
		_, err := w.h.RunningPod(ctx, w.ns, pod, w.nodeName(machine), map[string]string{"app": pod}, func(p *corev1.Pod) {
			p.Spec.PriorityClassName = class
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: volume}}}}
		})
		return err
	})
	if err != nil {
		return err
	}
	return w.volumeAttached(ctx, volume, machine)
}

func (w *world) volumeDetached(ctx context.Context, volume, machine string) error {
	return w.updateNode(ctx, machine, func(n *corev1.Node) {
		var keep []corev1.AttachedVolume
		for _, av := range n.Status.VolumesAttached {
			if !strings.HasSuffix(string(av.Name), "^"+volume) {
				keep = append(keep, av)
			}
		}
		n.Status.VolumesAttached = keep
	}, true)
}

func (w *world) volumeAttachment(ctx context.Context, name, volume, machine string) error {
	pv := w.ns + "-" + volume
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-" + name},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "sim", NodeName: w.nodeName(machine),
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}
	if err := w.h.Client.Create(ctx, va); err != nil {
		return err
	}
	va.Status.Attached = true
	return w.h.Client.Status().Update(ctx, va)
}

func (w *world) volumeAttachmentGone(ctx context.Context, name string) error {
	return w.eventually(ctx, "VolumeAttachment "+name+" gone", func(ctx context.Context) error {
		err := w.h.Client.Get(ctx, client.ObjectKey{Name: w.ns + "-" + name}, &storagev1.VolumeAttachment{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("VolumeAttachment %s still exists", name)
	})
}

func (w *world) forceDeletionLabel(ctx context.Context, name string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[clusterv1.ForceDeletionLabel] = clusterv1.ForceDeletionLabelValue
	})
}

func (w *world) onDrainTimeoutForce(ctx context.Context, name string) error {
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) { m.Spec.Deletion.OnDrainTimeout = clusterv1.DrainTimeoutForce })
}

// nodeNotReady plays the kubelet reporting NotReady, from the operator's now.
func (w *world) nodeNotReady(ctx context.Context, machine string) error {
	return w.updateNode(ctx, machine, func(n *corev1.Node) {
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status = corev1.ConditionFalse
				n.Status.Conditions[i].Reason = "KubeletNotReady"
				n.Status.Conditions[i].LastTransitionTime = metav1.NewTime(w.h.Clock.Now())
			}
		}
	}, true)
}

// minutesPassFor advances the operator's clock (the scenario is @serial);
// the Machine's drain looks at it again when its row requeues.
func (w *world) minutesPassFor(_ context.Context, minutes int, _ string) error {
	w.h.Clock.Advance(time.Duration(minutes) * time.Minute)
	return nil
}

// unevaluableDrainRule writes a rule whose matchLabels key has a prefix
// longer than the 253 characters a label key allows: admission checks the
// key's form (a map key's length is beyond what a CEL rule may afford to
// check), so the API server keeps it, and only evaluating it fails, as it
// does for a rule written before selectors were validated.
func (w *world) unevaluableDrainRule(ctx context.Context, name, behavior string) error {
	key := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + "/app"
	return w.h.Client.Create(ctx, &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.MachineDrainRuleSpec{Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: clusterv1.MachineDrainRuleDrainBehavior(behavior)},
			Pods: []clusterv1.MachineDrainRulePodSelector{{Selector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{key: "db"}}}}}})
}

func (w *world) deleteDrainRule(ctx context.Context, name string) error {
	return w.h.Client.Delete(ctx, &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}})
}

// drainRuleCondition: the MachineDrainRule controller wrote the condition.
func (w *world) drainRuleCondition(ctx context.Context, name, typ, status, reason, text string) error {
	return w.eventually(ctx, "MachineDrainRule "+name+" condition "+typ, func(ctx context.Context) error {
		r := &clusterv1.MachineDrainRule{}
		if err := w.h.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, r); err != nil {
			return err
		}
		c := meta.FindStatusCondition(r.Status.Conditions, typ)
		if c == nil || string(c.Status) != status || c.Reason != reason || !strings.Contains(c.Message, text) {
			return fmt.Errorf("condition %s = %+v", typ, c)
		}
		return nil
	})
}

// drainRuleWarning: a Warning Event about the rule, with the reason, says
// text.
func (w *world) drainRuleWarning(ctx context.Context, name, reason, text string) error {
	return w.eventually(ctx, "Warning Event of MachineDrainRule "+name, func(ctx context.Context) error {
		list := &eventsv1.EventList{}
		if err := w.h.Client.List(ctx, list, client.InNamespace(w.ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind != "MachineDrainRule" || e.Regarding.Name != name {
				continue
			}
			if e.Type == "Warning" && e.Reason == reason && strings.Contains(e.Note, text) {
				return nil
			}
			seen = append(seen, e.Type+" "+e.Reason+": "+e.Note)
		}
		return fmt.Errorf("Events of MachineDrainRule %s: %v", name, seen)
	})
}

func (w *world) recordsDrainAndVolumeWaitStart(ctx context.Context, name string) error {
	return w.machineHolds(ctx, name, "status.deletion.nodeDrainStartTime and waitForNodeVolumeDetachStartTime set", func(m *clusterv1.Machine) error {
		d := m.Status.Deletion
		switch {
		case d.NodeDrainStartTime == nil:
			return fmt.Errorf("status.deletion.nodeDrainStartTime is not set")
		case d.WaitForNodeVolumeDetachStartTime == nil:
			return fmt.Errorf("status.deletion.waitForNodeVolumeDetachStartTime is not set")
		case d.WaitForNodeVolumeDetachStartTime.Before(d.NodeDrainStartTime):
			return fmt.Errorf("the volume wait started (%s) before the drain (%s)", d.WaitForNodeVolumeDetachStartTime, d.NodeDrainStartTime)
		}
		return nil
	})
}
