package machine

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/poll"
)

func taintList(ts []corev1.Taint) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Key+"="+t.Value+":"+string(t.Effect))
	}
	return strings.Join(out, " ")
}

// TestMachineTaints walks Cluster API's propagateMachineTaintsToNode cases:
// what the Node's taints become, whether they changed, and the tracking
// annotation.
func TestMachineTaints(t *testing.T) {
	always := func(k, v string) clusterv1.MachineTaint {
		return clusterv1.MachineTaint{Key: k, Value: v, Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.TaintPropagationAlways}
	}
	once := func(k, v string) clusterv1.MachineTaint {
		return clusterv1.MachineTaint{Key: k, Value: v, Effect: corev1.TaintEffectNoExecute, Propagation: clusterv1.TaintPropagationOnInitialization}
	}
	node := func(kv ...string) []corev1.Taint {
		var out []corev1.Taint
		for _, s := range kv {
			key, rest, _ := strings.Cut(s, "=")
			value, effect, _ := strings.Cut(rest, ":")
			out = append(out, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		current     []corev1.Taint
		want        []clusterv1.MachineTaint
		tracked     string
		initialized bool
		taints      string
		changed     bool
		owned       string
	}{
		{name: "first sync adds both kinds", current: node("other=x:NoSchedule"), want: []clusterv1.MachineTaint{always("a", "1"), once("b", "")},
			taints: "other=x:NoSchedule a=1:NoSchedule b=:NoExecute", changed: true, owned: "a:NoSchedule"},
		{name: "first sync without taints changes no taint (syncNode still sets the empty annotation)", current: node("other=x:NoSchedule"),
			taints: "other=x:NoSchedule"},
		{name: "in sync", current: node("a=1:NoSchedule"), want: []clusterv1.MachineTaint{always("a", "1"), once("b", "")}, tracked: "a:NoSchedule", initialized: true,
			taints: "a=1:NoSchedule", owned: "a:NoSchedule"},
		{name: "an Always taint removed from the Node comes back, an OnInitialization one does not", current: node(), want: []clusterv1.MachineTaint{always("a", "1"), once("b", "")},
			tracked: "a:NoSchedule", initialized: true, taints: "a=1:NoSchedule", changed: true, owned: "a:NoSchedule"},
		{name: "a changed value is set back", current: node("a=2:NoSchedule"), want: []clusterv1.MachineTaint{always("a", "1")}, tracked: "a:NoSchedule", initialized: true,
			taints: "a=1:NoSchedule", changed: true, owned: "a:NoSchedule"},
		{name: "an Always taint the Machine dropped goes, others stay", current: node("a=1:NoSchedule", "other=x:NoSchedule", "b=:NoExecute"),
			tracked: "a:NoSchedule", initialized: true, taints: "other=x:NoSchedule b=:NoExecute", changed: true},
		{name: "Always turned OnInitialization is left on the Node, no longer tracked", current: node("a=1:NoExecute"), want: []clusterv1.MachineTaint{once("a", "1")},
			tracked: "a:NoExecute", initialized: true, taints: "a=1:NoExecute"},
		{name: "OnInitialization turned Always is kept", current: node(), want: []clusterv1.MachineTaint{always("b", "")}, initialized: true,
			taints: "b=:NoSchedule", changed: true, owned: "b:NoSchedule"},
	} {
		before := slices.Clone(tc.current)
		taints, changed, owned := machineTaints(tc.current, tc.want, tc.tracked, tc.initialized)
		if got := taintList(taints); got != tc.taints || changed != tc.changed || owned != tc.owned {
			t.Errorf("%s: taints %q, changed %v, owned %q; want %q, %v, %q", tc.name, got, changed, owned, tc.taints, tc.changed, tc.owned)
		}
		if taintList(tc.current) != taintList(before) {
			t.Errorf("%s: the Node's taints were changed in place", tc.name)
		}
	}
}

// TestSyncNodeMachineTaints: syncNode writes the Machine's taints and the
// tracking annotation with the labels, keeps an Always taint someone
// removed, and removes one the Machine dropped.
func TestSyncNodeMachineTaints(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := createNode(t, corev1.Taint{Key: "other", Value: "x", Effect: corev1.TaintEffectNoSchedule})
	m := testMachine(ns, map[string]string{clusterv1.ClusterNameLabel: "c1"})
	m.Spec.Taints = []clusterv1.MachineTaint{
		{Key: "example.com/dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.TaintPropagationAlways},
		{Key: "example.com/warming", Effect: corev1.TaintEffectNoExecute, Propagation: clusterv1.TaintPropagationOnInitialization},
	}
	// The API server's admission adds node.kubernetes.io/not-ready; it is
	// not the Machine's business.
	taints := func() string {
		return taintList(slices.DeleteFunc(getNode(t, node.Name).Spec.Taints, func(c corev1.Taint) bool {
			return strings.HasPrefix(c.Key, "node.kubernetes.io/")
		}))
	}
	setTaints := func(ts ...corev1.Taint) {
		n := getNode(t, node.Name)
		n.Spec.Taints = ts
		poll.Must(t, env.Client.Update(ctx, n))
	}

	wantStatus(t, syncNode(ctx, scopeFor(t, m, node.Name)), engine.Done, "taints from the Machine", TaintsFromMachineAnnotation)
	if got, want := taints(), "other=x:NoSchedule example.com/dedicated=gpu:NoSchedule example.com/warming=:NoExecute"; got != want {
		t.Errorf("taints after the first sync: %q, want %q", got, want)
	}
	if got := getNode(t, node.Name).Annotations[TaintsFromMachineAnnotation]; got != "example.com/dedicated:NoSchedule" {
		t.Errorf("%s = %q", TaintsFromMachineAnnotation, got)
	}
	wantStatus(t, syncNode(ctx, scopeFor(t, m, node.Name)), engine.Done, "in sync")

	// Someone removes both: only the Always one comes back.
	setTaints(corev1.Taint{Key: "other", Value: "x", Effect: corev1.TaintEffectNoSchedule})
	wantStatus(t, syncNode(ctx, scopeFor(t, m, node.Name)), engine.Done, "taints from the Machine")
	if got, want := taints(), "other=x:NoSchedule example.com/dedicated=gpu:NoSchedule"; got != want {
		t.Errorf("taints after both were removed: %q, want %q", got, want)
	}

	// The Machine drops its Always taint: it goes from the Node.
	m.Spec.Taints = m.Spec.Taints[1:]
	wantStatus(t, syncNode(ctx, scopeFor(t, m, node.Name)), engine.Done, "taints from the Machine")
	if got, want := taints(), "other=x:NoSchedule"; got != want {
		t.Errorf("taints after the Machine dropped its Always taint: %q, want %q", got, want)
	}
}
