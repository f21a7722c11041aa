package machine

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// These tests need no API server: facts and the Pod verdict table on
// hand-built Pods and Scopes.

func TestForceDeletionFact(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	node := func(typ corev1.NodeConditionType, status corev1.ConditionStatus, ago time.Duration) corev1.Node {
		return corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))},
			{Type: typ, Status: status, LastTransitionTime: metav1.NewTime(now.Add(-ago))},
		}}}
	}
	labelled := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{clusterv1.ForceDeletionLabel: "true"}}}
	plain := &clusterv1.Machine{}
	for _, tc := range []struct {
		name    string
		machine *clusterv1.Machine
		nodes   []corev1.Node
		want    string
	}{
		{"no Machine", nil, nil, "No"},
		{"the label", labelled, nil, "Label"},
		{"the label wins over the Node", labelled, []corev1.Node{node("ReadonlyFilesystem", corev1.ConditionTrue, time.Hour)}, "Label"},
		{"label value other than true", &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{clusterv1.ForceDeletionLabel: "yes"}}}, nil, "No"},
		{"healthy Node", plain, []corev1.Node{node("DiskPressure", corev1.ConditionFalse, time.Hour)}, "No"},
		{"read-only for 4 minutes", plain, []corev1.Node{node("ReadonlyFilesystem", corev1.ConditionTrue, 4*time.Minute)}, "No"},
		{"read-only for 6 minutes", plain, []corev1.Node{node("ReadonlyFilesystem", corev1.ConditionTrue, 6*time.Minute)}, "NodeUnhealthy"},
		{"no Node", plain, nil, "No"},
	} {
		s := &Scope{Machine: tc.machine, Nodes: tc.nodes, Now: now}
		if got := forceDeletion(s); got != tc.want {
			t.Errorf("%s: forceDeletion = %s, want %s", tc.name, got, tc.want)
		}
	}
	notReady := corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-6 * time.Minute))}}}}
	if got := forceDeletion(&Scope{Machine: plain, Nodes: []corev1.Node{notReady}, Now: now}); got != "NodeUnhealthy" {
		t.Errorf("NotReady for 6 minutes: forceDeletion = %s, want NodeUnhealthy", got)
	}
}

func TestDrainRuleSelection(t *testing.T) {
	rule := func(name string, machines []clusterv1.MachineDrainRuleMachineSelector) *clusterv1.MachineDrainRule {
		return &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1.MachineDrainRuleSpec{Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: clusterv1.DrainBehaviorSkip}, Machines: machines}}
	}
	sel := func(kv ...string) *clusterv1.LabelSelector {
		return &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{kv[0]: clusterv1.LabelValue(kv[1])}}
	}
	for _, tc := range []struct {
		name             string
		rule             *clusterv1.MachineDrainRule
		machine, cluster map[string]string
		want             bool
	}{
		{"no machines: every Machine", rule("a", nil), nil, nil, true},
		{"Machine selector matches", rule("a", []clusterv1.MachineDrainRuleMachineSelector{{Selector: sel("pool", "gpu")}}), map[string]string{"pool": "gpu"}, nil, true},
		{"Machine selector does not match", rule("a", []clusterv1.MachineDrainRuleMachineSelector{{Selector: sel("pool", "gpu")}}), map[string]string{"pool": "cpu"}, nil, false},
		{"both selectors must match", rule("a", []clusterv1.MachineDrainRuleMachineSelector{{Selector: sel("pool", "gpu"), ClusterSelector: sel("env", "prod")}}),
			map[string]string{"pool": "gpu"}, map[string]string{"env": "dev"}, false},
		{"any entry may match", rule("a", []clusterv1.MachineDrainRuleMachineSelector{{Selector: sel("pool", "gpu")}, {ClusterSelector: sel("env", "dev")}}),
			map[string]string{"pool": "cpu"}, map[string]string{"env": "dev"}, true},
		{"empty selector: everything", rule("a", []clusterv1.MachineDrainRuleMachineSelector{{Selector: &clusterv1.LabelSelector{}}}), nil, nil, true},
	} {
		if got := selectsMachine(tc.rule, tc.machine, tc.cluster); got != tc.want {
			t.Errorf("%s: selectsMachine = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The shipped table gives the verdicts the drain relies on; the order of
// the rows is the precedence (a label beats a rule, DaemonSets beat both,
// force beats everything but DaemonSet and mirror Pods).
func TestShippedPodVerdicts(t *testing.T) {
	dec := shippedPodVerdicts(t)
	now := time.Now()
	skipRule := &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: clusterv1.MachineDrainRuleSpec{
		Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: clusterv1.DrainBehaviorSkip}}}
	pod := func(mutate ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{}, Annotations: map[string]string{}}}
		p.Status.Phase = corev1.PodRunning
		for _, fn := range mutate {
			fn(p)
		}
		return p
	}
	label := func(v string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Labels[clusterv1.PodDrainLabel] = v } }
	terminating := func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Minute))) }
	finished := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	for _, tc := range []struct {
		name string
		item PodItem
		want string
	}{
		{"plain", PodItem{Pod: pod()}, verdictEvict},
		{"wait-completed label beats a Skip rule", PodItem{Pod: pod(label("wait-completed")), Rule: skipRule}, verdictWaitCompleted},
		{"Skip rule", PodItem{Pod: pod(), Rule: skipRule}, verdictSkip},
		{"live DaemonSet beats the label", PodItem{Pod: pod(label("wait-completed")), DaemonSet: "Live"}, verdictSkip},
		{"forced", PodItem{Pod: pod(label("skip")), Force: true}, verdictForceDelete},
		{"forced, DaemonSet", PodItem{Pod: pod(), DaemonSet: "Live", Force: true}, verdictSkip},
		{"forced, orphaned DaemonSet", PodItem{Pod: pod(), DaemonSet: "Orphaned", Force: true}, verdictForceDelete},
		{"forced, terminating DaemonSet Pod", PodItem{Pod: pod(terminating), DaemonSet: "Live", Force: true}, verdictGone},
		{"later order group", PodItem{Pod: pod(), OrderGroup: "Later"}, verdictEvictLater},
		{"volume turn not come", PodItem{Pod: pod(), HasPVC: true, VolumeTurn: "Waiting"}, verdictEvictSerially},
		{"terminating on an unreachable Node", PodItem{Pod: pod(terminating), NodeUnreachable: true}, verdictGone},
		{"evictions refused maxEvictRetries times", PodItem{Pod: pod(), EvictionRefusals: refusalsExhausted}, verdictForceDelete},
		{"refused by a budget that never allows", PodItem{Pod: pod(), EvictionRefusals: refusalsBudgetNeverAllows}, verdictEvict},
		{"refusals exhausted, but a Skip rule", PodItem{Pod: pod(), Rule: skipRule, EvictionRefusals: refusalsExhausted}, verdictSkip},
		{"a rule that cannot be evaluated holds the Pod", PodItem{Pod: pod(), Rule: skipRule, RuleInvalid: "bad"}, verdictHoldInvalidRule},
		{"the skip label beats a rule that cannot be evaluated", PodItem{Pod: pod(label("skip")), Rule: skipRule, RuleInvalid: "bad"}, verdictSkip},
		{"forced, a rule that cannot be evaluated", PodItem{Pod: pod(), Rule: skipRule, RuleInvalid: "bad", Force: true}, verdictForceDelete},
		// Cluster API skips these whether or not they are being deleted:
		// they never hold the drain.
		{"terminating live DaemonSet Pod", PodItem{Pod: pod(terminating), DaemonSet: "Live"}, verdictSkip},
		{"terminating mirror Pod", PodItem{Pod: pod(terminating, func(p *corev1.Pod) { p.Annotations[corev1.MirrorPodAnnotationKey] = "x" })}, verdictSkip},
		{"terminating Pod with the skip label", PodItem{Pod: pod(terminating, label("skip"))}, verdictSkip},
		{"terminating Pod of a Skip rule", PodItem{Pod: pod(terminating), Rule: skipRule}, verdictSkip},
		{"terminating Pod", PodItem{Pod: pod(terminating)}, verdictWaitTerminating},
		{"terminating Pod with the wait-completed label and a Skip rule", PodItem{Pod: pod(terminating, label("wait-completed")), Rule: skipRule}, verdictWaitTerminating},
		{"finished Pod with the skip label", PodItem{Pod: pod(finished, label("skip"))}, verdictSkip},
		{"finished live DaemonSet Pod", PodItem{Pod: pod(finished), DaemonSet: "Live"}, verdictRemoveFinished},
		{"finished Pod, forced", PodItem{Pod: pod(finished), Force: true}, verdictRemoveFinished},
		{"finished Pod being deleted", PodItem{Pod: pod(finished, terminating)}, verdictGone},
		// The label's value is read as Cluster API's drainLabelFilter reads it.
		{"skip label in capitals", PodItem{Pod: pod(label("SKIP"))}, verdictSkip},
		{"WaitCompleted label", PodItem{Pod: pod(label("WaitCompleted"))}, verdictWaitCompleted},
		{"Wait-Completed label", PodItem{Pod: pod(label("Wait-Completed"))}, verdictWaitCompleted},
		{"unknown label value", PodItem{Pod: pod(label("never"))}, verdictEvict},
	} {
		it := tc.item
		it.Now = now
		if it.DaemonSet == "" {
			it.DaemonSet = "No"
		}
		if it.OrderGroup == "" {
			it.OrderGroup = "Current"
		}
		if it.VolumeTurn == "" {
			it.VolumeTurn = "Now"
		}
		if it.EvictionRefusals == "" {
			it.EvictionRefusals = refusalsBelow
		}
		got, err := dec.Decide(&it)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Verdict() != tc.want {
			t.Errorf("%s: verdict %s (row %s), want %s", tc.name, got.Verdict(), got.Row.ID, tc.want)
		}
	}
}

// The evictionRefusals fact: the count in status against maxEvictRetries,
// a namesake with another UID starting again.
func TestEvictionRefusalsCount(t *testing.T) {
	m := &clusterv1.Machine{}
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "ua"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "ub"}},
	}
	countRefusals(m, pods, map[string]bool{"ns/a": true})
	if m.Status.Deletion.EvictionRefusals != nil {
		t.Fatalf("without maxEvictRetries nothing is kept: %+v", m.Status.Deletion.EvictionRefusals)
	}
	m.Spec.Deletion.MaxEvictRetries = ptr.To[int32](2)
	countRefusals(m, pods, map[string]bool{"ns/a": true})
	countRefusals(m, pods, map[string]bool{"ns/a": true, "ns/b": true})
	if a, b := refusalsOf(m, &pods[0]), refusalsOf(m, &pods[1]); a != 2 || b != 1 {
		t.Fatalf("refusals a=%d b=%d, want 2 and 1", a, b)
	}
	namesake := pods[0]
	namesake.UID = "other"
	if n := refusalsOf(m, &namesake); n != 0 {
		t.Errorf("a namesake with another UID has %d refusals, want 0", n)
	}
	// A Pod that left is forgotten.
	countRefusals(m, pods[1:], nil)
	if len(m.Status.Deletion.EvictionRefusals) != 1 || m.Status.Deletion.EvictionRefusals[0].Pod != "ns/b" {
		t.Errorf("refusals %+v, want only ns/b", m.Status.Deletion.EvictionRefusals)
	}
}

// A rule written before the API server validated selectors: it is named,
// with what is wrong, and counts as possibly selecting every Machine and
// Pod; a valid rule first by name still applies.
func TestRuleInvalid(t *testing.T) {
	broken := &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Name: "b-protect"}, Spec: clusterv1.MachineDrainRuleSpec{
		Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: clusterv1.DrainBehaviorSkip},
		Pods: []clusterv1.MachineDrainRulePodSelector{{Selector: &clusterv1.LabelSelector{
			MatchExpressions: []clusterv1.LabelSelectorRequirement{{Key: "app", Operator: "Foo"}}}}}}}
	if got, want := ruleInvalid(broken), `spec.pods[0].selector: "Foo" is not a valid label selector operator`; got != want {
		t.Errorf("ruleInvalid = %q, want %q", got, want)
	}
	badKey := &clusterv1.MachineDrainRule{Spec: clusterv1.MachineDrainRuleSpec{Machines: []clusterv1.MachineDrainRuleMachineSelector{
		{ClusterSelector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{"bad key!": "x"}}}}}}
	if got := ruleInvalid(badKey); !strings.HasPrefix(got, "spec.machines[0].clusterSelector: ") {
		t.Errorf("ruleInvalid = %q, want the clusterSelector named", got)
	}
	valid := &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Name: "a-drain"}, Spec: clusterv1.MachineDrainRuleSpec{
		Pods: []clusterv1.MachineDrainRulePodSelector{{Selector: &clusterv1.LabelSelector{MatchLabels: map[string]clusterv1.LabelValue{"app": "web"}}}}}}
	if ruleInvalid(valid) != "" {
		t.Errorf("a valid rule: %q", ruleInvalid(valid))
	}
	v := &drainView{s: &Scope{}}
	rules := []*clusterv1.MachineDrainRule{valid, broken}
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"app": "web"}}}
	db := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"app": "db"}}}
	for _, tc := range []struct {
		pod  *corev1.Pod
		want *clusterv1.MachineDrainRule
	}{{web, valid}, {db, broken}} {
		got, err := v.ruleFor(context.Background(), rules, nil, tc.pod)
		if err != nil || got != tc.want {
			t.Errorf("rule for Pod %s: %v %v, want %s", tc.pod.Name, got, err, tc.want.Name)
		}
	}
}
