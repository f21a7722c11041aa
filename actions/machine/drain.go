package machine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// PodNodeNameIndex is the field index on Pods by spec.nodeName that the
// operator's cache keeps, so listing a Node's Pods is a lookup, not a scan.
// The API server itself supports the same field selector.
const PodNodeNameIndex = "spec.nodeName"

// PodNodeNameIndexer extracts the index key.
func PodNodeNameIndexer(obj client.Object) []string {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Spec.NodeName == "" {
		return nil
	}
	return []string{p.Spec.NodeName}
}

// mirrorPodAnnotation marks a static Pod's mirror in the API server.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// maxNamesPerClass bounds how many Pods or volumes a message names per class.
const maxNamesPerClass = 3

// podVerdict is what the drain does with one Pod.
type podVerdict int

const (
	// verdictEvict: the Pod is evicted.
	verdictEvict podVerdict = iota
	// verdictSkip: the drain leaves the Pod alone (DaemonSet, mirror, skip label).
	verdictSkip
	// verdictDone: the Pod has finished; it is ignored.
	verdictDone
	// verdictTerminating: the Pod is already being deleted.
	verdictTerminating
	// verdictError: the drain could not decide (the DaemonSet lookup failed).
	verdictError
)

// Skip reasons, in the order messages list them.
const (
	skipDaemonSet = "DaemonSet"
	skipMirror    = "mirror"
	skipLabel     = "drain label"
)

var skipOrder = []string{skipDaemonSet, skipMirror, skipLabel}

// Remaining-Pod classes, in the order messages list them.
const (
	classPDB         = "blocked by PodDisruptionBudget"
	classError       = "eviction error"
	classTerminating = "still terminating"
	classEvicted     = "evicted, waiting for termination"
	classNamespace   = "eviction refused because the namespace is being deleted (the Pod goes with it)"
)

var classOrder = []string{classPDB, classError, classNamespace, classTerminating, classEvicted}

// classifyPod decides what the drain does with a Pod; for verdictSkip the
// reason says why, for verdictError it carries the error text.
func classifyPod(ctx context.Context, c client.Client, pod *corev1.Pod) (podVerdict, string) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return verdictDone, ""
	}
	if !pod.DeletionTimestamp.IsZero() {
		return verdictTerminating, ""
	}
	if _, ok := pod.Annotations[mirrorPodAnnotation]; ok {
		return verdictSkip, skipMirror
	}
	if pod.Labels[clusterv1.PodDrainLabel] == clusterv1.PodDrainLabelValueSkip {
		return verdictSkip, skipLabel
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "DaemonSet" && strings.HasPrefix(ref.APIVersion, "apps/") {
		ds := &appsv1.DaemonSet{}
		err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, ds)
		switch {
		case err == nil && (ref.UID == "" || ds.UID == ref.UID):
			return verdictSkip, skipDaemonSet
		case err == nil, apierrors.IsNotFound(err):
			// Orphaned: its DaemonSet is gone (or replaced), nothing
			// recreates it, so it is evicted like any other Pod.
		default:
			return verdictError, fmt.Sprintf("get DaemonSet %s: %v", ref.Name, err)
		}
	}
	return verdictEvict, ""
}

// podsOnNode lists the Pods bound to a Node, through the spec.nodeName
// index or field selector, falling back to a filtered list where the client
// supports neither (a cache without the index). The result is sorted by
// namespace/name.
func podsOnNode(ctx context.Context, c client.Client, node string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	var pods []corev1.Pod
	if err := c.List(ctx, list, client.MatchingFields{PodNodeNameIndex: node}); err == nil {
		pods = list.Items
	} else {
		list = &corev1.PodList{}
		if err := c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list Pods: %w", err)
		}
		for _, p := range list.Items {
			if p.Spec.NodeName == node {
				pods = append(pods, p)
			}
		}
	}
	sort.Slice(pods, func(i, j int) bool { return podName(&pods[i]) < podName(&pods[j]) })
	return pods, nil
}

// DrainSkippedPods returns the Pods on a Node that the drain leaves alone:
// Pods of an existing DaemonSet, mirror (static) Pods and Pods labelled
// cluster.krtt.dev/drain=skip. The volume wait ignores their volumes.
func DrainSkippedPods(ctx context.Context, c client.Client, node string) ([]corev1.Pod, error) {
	pods, err := podsOnNode(ctx, c, node)
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for i := range pods {
		if v, _ := classifyPod(ctx, c, &pods[i]); v == verdictSkip {
			out = append(out, pods[i])
		}
	}
	return out, nil
}

// unreachableGrace is the grace period of evictions from an unreachable
// Node, and how long a terminating Pod there holds the drain: its kubelet
// cannot confirm the end, and the taint manager removes such Pods anyway.
const unreachableGrace = time.Second

func drainNode(ctx context.Context, s *Scope) engine.Outcome { return drain(ctx, s, false) }

func drainUnreachableNode(ctx context.Context, s *Scope) engine.Outcome { return drain(ctx, s, true) }

// drain cordons the Node and makes one eviction pass over its Pods. It
// never waits for a Pod: Pods that remain are reported, and the row requeues.
func drain(ctx context.Context, s *Scope, unreachable bool) engine.Outcome {
	node := s.Node()
	if node == nil {
		return engine.OK()
	}
	if err := cordon(ctx, s.NodeClient, node); err != nil {
		return engine.Fail(err)
	}
	pods, err := podsOnNode(ctx, s.NodeClient, node.Name)
	if err != nil {
		return engine.Fail(fmt.Errorf("list Pods on Node %s: %w", node.Name, err))
	}

	skipped := map[string][]string{}
	gone := 0 // terminating Pods of an unreachable Node no longer waited for
	remaining := map[string][]string{}
	nRemaining := 0
	keep := func(class, name string) {
		remaining[class] = append(remaining[class], name)
		nRemaining++
	}
	for i := range pods {
		pod := &pods[i]
		name := podName(pod)
		verdict, why := classifyPod(ctx, s.NodeClient, pod)
		switch verdict {
		case verdictDone:
			// A finished Pod holds nothing, but it would stay behind on a
			// Node that is going: remove it too (never waited for).
			if pod.DeletionTimestamp.IsZero() {
				_ = evict(ctx, s.NodeClient, pod, unreachable)
			}
			continue
		case verdictSkip:
			skipped[why] = append(skipped[why], name)
			continue
		case verdictTerminating:
			if unreachable && s.Now.Sub(pod.DeletionTimestamp.Time) > unreachableGrace {
				gone++
				continue
			}
			keep(classTerminating, name)
			continue
		case verdictError:
			keep(classError, name+" ("+why+")")
			continue
		}
		err := evict(ctx, s.NodeClient, pod, unreachable)
		switch {
		case err == nil:
			keep(classEvicted, name)
		case apierrors.IsNotFound(err):
			// Gone already.
		case apierrors.IsTooManyRequests(err):
			keep(classPDB, name+" ("+apiMessage(err)+")")
		case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			keep(classNamespace, name)
		default:
			keep(classError, name+" ("+apiMessage(err)+")")
		}
	}

	note := ""
	if unreachable {
		note = fmt.Sprintf("; the Node is unreachable: evictions use a %s grace period and Pods terminating for longer are not waited for", unreachableGrace)
		if gone > 0 {
			note += fmt.Sprintf(" (%s)", plural(gone, "Pod"))
		}
	}
	if nRemaining == 0 {
		if len(skipped) == 0 {
			return engine.OKf("all Pods evicted%s", note)
		}
		return engine.OKf("all Pods evicted (%s)%s", describeSkipped(skipped), note)
	}
	parts := make([]string, 0, len(classOrder))
	for _, class := range classOrder {
		if names := remaining[class]; len(names) > 0 {
			parts = append(parts, class+": "+fewNames(names, maxNamesPerClass))
		}
	}
	verb := "remain"
	if nRemaining == 1 {
		verb = "remains"
	}
	msg := fmt.Sprintf("Draining Node %s: %s %s — %s", node.Name, plural(nRemaining, "Pod"), verb, strings.Join(parts, "; "))
	if len(skipped) > 0 {
		msg += " (" + describeSkipped(skipped) + ")"
	}
	return engine.Wait("%s%s", msg, note)
}

// cordon marks the Node unschedulable, writing only when it is not yet.
func cordon(ctx context.Context, c client.Client, node *corev1.Node) error {
	if node.Spec.Unschedulable {
		return nil
	}
	base := node.DeepCopy()
	node.Spec.Unschedulable = true
	if err := c.Patch(ctx, node, client.MergeFrom(base)); err != nil {
		node.Spec.Unschedulable = false
		return fmt.Errorf("cordon Node %s: %w", node.Name, err)
	}
	return nil
}

// evict asks the Eviction API to evict a Pod; the API server enforces
// PodDisruptionBudgets and answers 429 when one forbids it.
func evict(ctx context.Context, c client.Client, pod *corev1.Pod, unreachable bool) error {
	eviction := &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		DeleteOptions: &metav1.DeleteOptions{
			// Evict the Pod that was classified, not a namesake created since.
			Preconditions: &metav1.Preconditions{UID: &pod.UID},
		},
	}
	if unreachable {
		grace := int64(unreachableGrace.Seconds())
		eviction.DeleteOptions.GracePeriodSeconds = &grace
	}
	return c.SubResource("eviction").Create(ctx, pod, eviction)
}

// apiMessage is the API server's message plus the causes it lists (the
// Eviction API names the PodDisruptionBudget in a cause).
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return err.Error()
	}
	st := status.Status()
	msg := strings.TrimSpace(st.Message)
	if msg == "" {
		msg = err.Error()
	}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Message != "" && !strings.Contains(msg, c.Message) {
				msg = strings.TrimSuffix(msg, ".") + ". " + c.Message
			}
		}
	}
	return msg
}

func describeSkipped(skipped map[string][]string) string {
	n := 0
	parts := make([]string, 0, len(skipOrder))
	for _, why := range skipOrder {
		if names := skipped[why]; len(names) > 0 {
			n += len(names)
			parts = append(parts, why+": "+fewNames(names, maxNamesPerClass))
		}
	}
	return strconv.Itoa(n) + " skipped: " + strings.Join(parts, "; ")
}

func podName(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
