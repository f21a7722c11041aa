package machine

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

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
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

// maxNamesPerClass bounds how many Pods or volumes a message names per class.
const maxNamesPerClass = 3

// Skip reasons, in the order messages list them.
const (
	skipDaemonSet = "DaemonSet"
	skipMirror    = "mirror"
	skipLabel     = "drain label"
)

var skipOrder = []string{skipDaemonSet, skipMirror, skipLabel}

// skipReason names why a Pod was skipped, from the row that skipped it.
func skipReason(pv podVerdict) string {
	switch {
	case pv.dec.Facts.Get("mirror") == "true":
		return skipMirror
	case pv.dec.Facts.Get("daemonSet") == "Live":
		return skipDaemonSet
	case pv.dec.Facts.Get("drainLabel") == "Skip":
		return skipLabel
	}
	return "MachineDrainRule " + pv.item.Rule.Name
}

// Remaining-Pod classes a drain message lists, in Cluster API's order
// (EvictionResult.ConditionMessage), with krtt's own two (a rule that cannot
// be evaluated, Pods evicted one at a time) where they read best.
const (
	classInvalidRule   = "held by a MachineDrainRule that cannot be evaluated"
	classTerminating   = "deletionTimestamp set, but still not removed from the Node"
	classWaitCompleted = "waiting for completion"
	classSerial        = "evicted one at a time"
)

// Cluster API's words for an eviction refused because the Pod's namespace
// is being deleted: the namespace controller deletes the Pod soon.
const namespaceTerminatingRefusal = "Cannot evict pod from terminating namespace: unable to create eviction (kube-controller-manager should set deletionTimestamp)"

// pdbRefusalPrefix starts the condition's line for a Pod its
// PodDisruptionBudget protects; other failures are "failed to evict Pod, …".
const pdbRefusalPrefix = "cannot evict pod as it would violate the pod's disruption budget."

// maxFailureLines bounds the failure answers a drain message lists one by
// one; the Pods of the others are counted in one line, as Cluster API does.
const maxFailureLines = 5

// leftPod is a Pod that holds the drain, with what is particular to it.
type leftPod struct{ name, detail string }

// drainLeft is what one drain pass leaves on the Node, by class.
type drainLeft struct {
	n           int
	invalidRule []leftPod
	terminating []string
	// failures maps each failure's answer, as the API server gave it
	// (Cluster API sorts by it), to its Pods and the words of its line.
	failures      map[string]*drainFailure
	waitCompleted []string
	serial        []leftPod
	later         []string
	// waitCompletedLater are waited for after the lower order groups.
	waitCompletedLater []string
}

type drainFailure struct {
	line string
	pods []string
}

func (l *drainLeft) keep(list *[]string, name string) { *list = append(*list, name); l.n++ }

func (l *drainLeft) keepDetail(list *[]leftPod, name, detail string) {
	*list = append(*list, leftPod{name, detail})
	l.n++
}

// fail records a Pod whose eviction (or deletion) failed with answer: Pods
// with the same answer share one line, worded line (failedEviction words an
// eviction's as Cluster API does).
func (l *drainLeft) fail(name, answer, line string) {
	if l.failures == nil {
		l.failures = map[string]*drainFailure{}
	}
	f := l.failures[answer]
	if f == nil {
		f = &drainFailure{line: line}
		l.failures[answer] = f
	}
	f.pods = append(f.pods, name)
	l.n++
}

// message is Cluster API's EvictionResult.ConditionMessage for what is
// left: its header, a line per class ("* Pods a, b: why"), one per failure
// answer (five at most, then how many Pods have other issues), the Pods
// evicted later last.
func (l *drainLeft) message(started *metav1.Time) string {
	msg := "Drain not completed yet"
	if started != nil {
		msg += " (started at " + started.UTC().Format(time.RFC3339) + ")"
	}
	msg += ":"
	line := func(pods []string, why string) {
		msg += fmt.Sprintf("\n* %s %s: %s", podNoun(len(pods)), fewNames(pods, maxNamesPerClass), why)
	}
	withDetail := func(pods []leftPod) []string {
		names := make([]string, len(pods))
		for i, p := range pods {
			names[i] = p.name
			if p.detail != "" {
				names[i] += " (" + p.detail + ")"
			}
		}
		return names
	}
	if len(l.invalidRule) > 0 {
		line(withDetail(l.invalidRule), classInvalidRule)
	}
	if len(l.terminating) > 0 {
		line(l.terminating, classTerminating)
	}
	answers := slices.Sorted(maps.Keys(l.failures))
	others := 0
	for i, a := range answers {
		f := l.failures[a]
		if i >= maxFailureLines {
			others += len(f.pods)
			continue
		}
		line(f.pods, f.line)
	}
	if others > 0 {
		msg += fmt.Sprintf("\n* %d %s with other issues", others, podNoun(others))
	}
	if len(l.waitCompleted) > 0 {
		line(l.waitCompleted, classWaitCompleted)
	}
	if len(l.serial) > 0 {
		line(withDetail(l.serial), classSerial)
	}
	if len(l.later) > 0 {
		msg += "\nAfter above Pods have been removed from the Node, the following Pods will be evicted: " + fewNames(l.later, maxNamesPerClass)
	}
	if len(l.waitCompletedLater) > 0 {
		msg += "\nAfter above Pods have been removed from the Node, waiting for the following Pods to complete without eviction: " + fewNames(l.waitCompletedLater, maxNamesPerClass)
	}
	return msg
}

func podNoun(n int) string {
	if n == 1 {
		return "Pod"
	}
	return "Pods"
}

// failedEviction is the line of an eviction that failed with answer.
func failedEviction(answer string) string {
	if rest, ok := strings.CutPrefix(answer, "Cannot evict pod as it would violate the pod's disruption budget."); ok {
		return pdbRefusalPrefix + rest
	}
	return "failed to evict Pod, " + answer
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

// skippedPods returns the Pods on the Machine's Node whose verdict is Skip
// (DaemonSet, mirror and drain-label Pods): the volume wait ignores their
// volumes.
func skippedPods(ctx context.Context, s *Scope, node *corev1.Node) ([]*corev1.Pod, error) {
	pods, err := podsOnNode(ctx, s.NodeClient, node.Name)
	if err != nil {
		return nil, err
	}
	v := &drainView{s: s, node: node, pods: pods, unreachable: NodeUnreachable(node)}
	verdicts, err := v.decide(ctx)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, pv := range verdicts {
		if pv.err != nil {
			return nil, pv.err
		}
		if pv.verdict() == verdictSkip {
			out = append(out, pv.pod)
		}
	}
	return out, nil
}

// unreachableGrace is the grace period of evictions from an unreachable
// Node, and how long a terminating Pod there holds the drain: its kubelet
// cannot confirm the end, and the taint manager removes such Pods anyway.
const unreachableGrace = time.Second

func drainNode(ctx context.Context, s *Scope) engine.Outcome { return drain(ctx, s, false, false) }

func drainUnreachableNode(ctx context.Context, s *Scope) engine.Outcome {
	return drain(ctx, s, true, false)
}

// forceDrainNode is the drain of a forced deletion: the Pod verdict table
// is asked with force=true, so Pods are deleted with grace period 0.
func forceDrainNode(ctx context.Context, s *Scope) engine.Outcome {
	return drain(ctx, s, NodeUnreachable(s.Node()), true)
}

// drain cordons the Node and makes one pass over its Pods, acting on each
// Pod's verdict. It never waits for a Pod: Pods that remain are reported,
// and the row requeues.
func drain(ctx context.Context, s *Scope, unreachable, force bool) engine.Outcome {
	node := s.Node()
	if node == nil {
		return engine.OK().Untouched()
	}
	cordoned, err := cordon(ctx, s.NodeClient, node)
	if err != nil {
		return engine.Fail(err)
	}
	pods, err := podsOnNode(ctx, s.NodeClient, node.Name)
	if err != nil {
		return engine.Fail(fmt.Errorf("list Pods on Node %s: %w", node.Name, err))
	}

	// wrote: this pass wrote to the API server (the cordon, an eviction, a
	// deletion). A pass that did not leaves the observation as true as it
	// was, and says so (engine.Outcome.Untouched).
	wrote := cordoned
	view := &drainView{s: s, node: node, pods: pods, unreachable: unreachable, force: force}
	verdicts, err := view.decide(ctx)
	if err != nil {
		return engine.Fail(err)
	}
	view.record(ctx, verdicts)
	evicted := evictAll(ctx, s.NodeClient, verdicts, unreachable)

	skipped := map[string][]string{}
	gone := 0                 // Pods whose verdict is Gone on an unreachable Node
	forced := 0               // Pods deleted with grace period 0
	deletedAfterRefusals := 0 // of them, after maxEvictRetries refused evictions
	refused := map[string]bool{}
	left := &drainLeft{}
	for i, pv := range verdicts {
		pod := pv.pod
		name := podName(pod)
		if pv.err != nil {
			left.fail(name, pv.err.Error(), pv.err.Error())
			continue
		}
		switch pv.verdict() {
		case verdictRemoveFinished:
			wrote = true // evicted by evictAll; a finished Pod's answer does not matter
			continue
		case verdictGone:
			if pv.dec.Facts.Get("finished") == "false" {
				gone++ // terminating on an unreachable Node
			}
			continue
		case verdictSkip:
			why := skipReason(pv)
			skipped[why] = append(skipped[why], name)
			continue
		case verdictWaitTerminating:
			// The same words as in the pass that evicted it, so the
			// message (and the Machine's status) does not change until a
			// Pod goes.
			left.keep(&left.terminating, name)
			continue
		case verdictWaitCompleted:
			if pv.item.OrderGroup == "Later" {
				left.keep(&left.waitCompletedLater, name)
			} else {
				left.keep(&left.waitCompleted, name)
			}
			continue
		case verdictHoldInvalidRule:
			left.keepDetail(&left.invalidRule, name, pv.item.Rule.Name+": "+pv.item.RuleInvalid+"; fix or delete the rule")
			continue
		case verdictEvictLater:
			left.keep(&left.later, name)
			continue
		case verdictEvictSerially:
			left.keepDetail(&left.serial, name, "waiting for "+pv.item.WaitingOn)
			continue
		case verdictForceDelete:
			wrote = true
			if err := forceDelete(ctx, s.NodeClient, pod); err != nil {
				answer := apiMessage(err)
				left.fail(name, answer, "failed to delete Pod, "+answer)
			} else {
				forced++
				if pv.dec.Facts.Get("evictionRefusals") != refusalsBelow {
					deletedAfterRefusals++
				}
			}
			continue
		case verdictEvict:
		default:
			// A verdict the tables gained without Go to act on it: say so
			// rather than evict or skip the Pod silently.
			answer := "verdict " + pv.verdict() + " has no action"
			left.fail(name, answer, answer)
			continue
		}
		wrote = true
		err := evicted[i] // evictAll sent every Evict verdict's eviction
		switch {
		case err == nil:
			left.keep(&left.terminating, name)
		case apierrors.IsNotFound(err):
			// Gone already.
		case apierrors.IsTooManyRequests(err):
			refused[name] = true
			answer := apiMessage(err)
			note := refusalsNote(s.Machine, pod)
			left.fail(name, answer+note, failedEviction(answer)+note)
		case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			left.fail(name, namespaceTerminatingRefusal, failedEviction(namespaceTerminatingRefusal))
		default:
			answer := apiMessage(err)
			left.fail(name, answer, failedEviction(answer))
		}
	}

	countRefusals(s.Machine, pods, refused)
	note := ""
	if deletedAfterRefusals > 0 {
		note = fmt.Sprintf("; %s deleted with grace period 0 after maxEvictRetries refused evictions", plural(deletedAfterRefusals, "Pod"))
	}
	if force {
		note = fmt.Sprintf("; forced: %s deleted with grace period 0", plural(forced, "Pod"))
	}
	if unreachable && !force {
		note = fmt.Sprintf("; the Node is unreachable: evictions use a %s grace period and Pods terminating for longer are not waited for", unreachableGrace)
		if gone > 0 {
			note += fmt.Sprintf(" (%s)", plural(gone, "Pod"))
		}
	}
	if left.n == 0 {
		if !force {
			// A forced drain is told by its row's Warning instead.
			s.Told.Tell(reconciler.Tell{Reason: "SuccessfulDrainNode", Related: node,
				Note: fmt.Sprintf("success draining Machine's node %q", node.Name)})
		}
		done := engine.OKf("all Pods evicted%s", note)
		if len(skipped) > 0 {
			done = engine.OKf("all Pods evicted (%s)%s", describeSkipped(skipped), note)
		}
		if !wrote {
			return done.Untouched()
		}
		return done
	}
	msg := left.message(s.Machine.Status.Deletion.NodeDrainStartTime)
	if note != "" {
		// A sentence of its own after Cluster API's lines.
		line := strings.TrimPrefix(note, "; ")
		msg += "\n" + strings.ToUpper(line[:1]) + line[1:]
	}
	return engine.Wait("%s", msg)
}

// maxParallelEvictions bounds the evictions of one drain pass in flight.
const maxParallelEvictions = 10

// evictAll sends the pass's evictions (the Pods whose verdict is Evict or
// RemoveFinished) together, at most maxParallelEvictions at a time, as
// kubectl drain does, and returns each one's answer by its index in
// verdicts. One after another they held the worker for a round trip per
// Pod: at 30 Pods per Node most of a deletion. The API server still
// checks every eviction against the PodDisruptionBudgets (a budget's
// status is updated with a precondition, so two evictions never spend one
// disruption), and which Pods may go now is the verdict table's decision,
// made before (drain order, serial groups).
func evictAll(ctx context.Context, c client.Client, verdicts []podVerdict, unreachable bool) map[int]error {
	var idx []int
	for i, pv := range verdicts {
		if v := pv.verdict(); v == verdictEvict || v == verdictRemoveFinished {
			idx = append(idx, i)
		}
	}
	errs := make([]error, len(idx))
	sem := make(chan struct{}, maxParallelEvictions)
	var wg sync.WaitGroup
	for j, i := range idx {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[j] = evict(ctx, c, verdicts[i].pod, unreachable)
		}()
	}
	wg.Wait()
	out := make(map[int]error, len(idx))
	for j, i := range idx {
		out[i] = errs[j]
	}
	return out
}

// cordon marks the Node unschedulable, writing only when it is not yet;
// wrote says it did.
func cordon(ctx context.Context, c client.Client, node *corev1.Node) (wrote bool, err error) {
	if node.Spec.Unschedulable {
		return false, nil
	}
	if err := reconciler.PatchFields(ctx, c, node, map[string]any{"spec": map[string]any{"unschedulable": true}}); err != nil {
		return false, fmt.Errorf("cordon Node %s: %w", node.Name, err)
	}
	return true, nil
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

// forceDelete deletes a Pod with grace period 0: no eviction, so no
// PodDisruptionBudget is consulted, and the API server removes it at once.
func forceDelete(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	err := c.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// deleteVolumeAttachments deletes the Node's VolumeAttachments, as a
// forced deletion does before it skips the volume wait.
func deleteVolumeAttachments(ctx context.Context, s *Scope) engine.Outcome {
	node := s.Node()
	if node == nil {
		return engine.OK()
	}
	vas := &storagev1.VolumeAttachmentList{}
	if err := s.NodeClient.List(ctx, vas); err != nil && !isNoMatch(err) {
		return engine.Fail(fmt.Errorf("list VolumeAttachments: %w", err))
	}
	var names []string
	for i := range vas.Items {
		va := &vas.Items[i]
		if va.Spec.NodeName != node.Name || !va.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.NodeClient.Delete(ctx, va); err != nil && !apierrors.IsNotFound(err) {
			return engine.Fail(fmt.Errorf("delete VolumeAttachment %s: %w", va.Name, err))
		}
		names = append(names, va.Name)
	}
	if len(names) == 0 {
		return engine.OKf("no VolumeAttachment left on Node %s", node.Name)
	}
	return engine.OKf("deleted %s of Node %s: %s", plural(len(names), "VolumeAttachment"), node.Name, fewNames(names, maxNamesPerClass))
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
