package machine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/engine/explain"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/reconciler"
)

// Explain is krtt explain machine: it observes the Machine with the
// operator's own Observer, computes the facts with the runner's observers,
// decides with the set and reads status and Events (reconciler.Explain),
// then adds what only a Machine has: the Node side, its deletion hooks, the
// Deleting condition, what it waits on and when an unhealthy Node forces
// the deletion. It runs no action.
func Explain(ctx context.Context, c client.Client, set *engine.TableSet, key client.ObjectKey, now time.Time) (*explain.Report, error) {
	// The operator's own observe and decide, through the controller kit,
	// with a direct client and no action run.
	// The Node side is reached as the operator reaches it: through the
	// Cluster's kubeconfig Secret when there is one, and the management
	// cluster otherwise: explain runs with its user's rights, not the
	// operator's, and shows what a self-hosted Cluster's Node side holds.
	clusters := remote.New(c, c, remote.Options{Scheme: c.Scheme(), SelfHosted: true})
	// Never started, the cache would keep the connections the observation
	// opened running after the explanation.
	defer clusters.Close()
	rep, plan, err := reconciler.Explain(ctx, c, Spec(set, c, clusters, nil, controller.NodeSync{}), "Machine", key, now)
	if err != nil {
		return nil, err
	}
	if w := plan.Obs.Env.Workload; w.State != "" {
		rep.NodeSide = &explain.NodeSide{State: string(w.State), Server: w.Server, Secret: w.Secret, Message: w.Message}
	}
	if m := plan.Obs.Env.Machine; m != nil {
		rep.Hooks = hooks(m)
		if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition); c != nil {
			t := c.LastTransitionTime.UTC()
			rep.Deleting = &explain.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: &t}
		}
		rep.WaitingOn = waitingOn(plan.Obs.Env, plan.State, now)
		if rep.WaitingOn != nil {
			rep.WaitingOn.Forced = forcedEnd(set, plan.State, plan.Obs.Env, now)
		}
	}
	return rep, nil
}

// forcedEnd says when the Node's health forces the deletion, in a state
// where a row of the tables reads forceDeletion=NodeUnhealthy; nil in the
// other states.
func forcedEnd(set *engine.TableSet, st *engine.State, s *Scope, now time.Time) *explain.ForcedEnd {
	row := ""
	for _, t := range set.Tables {
		for _, r := range t.Rows {
			if row != "" || !r.AppliesIn(st) {
				continue
			}
			for _, m := range r.WhenClause() {
				if m.Fact == "forceDeletion" && slices.Contains(m.Values, "NodeUnhealthy") {
					row = r.ID
				}
			}
		}
	}
	if row == "" {
		return nil
	}
	f := &explain.ForcedEnd{Row: row, After: shortDuration(NodeUnhealthyForce)}
	start, cond := NodeUnhealthyStart(s.Node())
	if start.IsZero() {
		return f
	}
	since := start.UTC()
	from := NodeSideSince(s, start).UTC()
	if from.After(since) {
		f.CountsFrom = &from
	}
	end := from.Add(NodeUnhealthyForce)
	f.Condition, f.Since, f.EndsAt = cond, &since, &end
	if left := end.Sub(now); left > 0 {
		f.EndsIn = shortDuration(left)
	} else {
		f.Overdue = true
		f.EndsIn = "-" + shortDuration(-left)
	}
	return f
}

func hooks(m *clusterv1.Machine) []explain.Hook {
	out := []explain.Hook{}
	for _, p := range []struct{ point, prefix string }{
		{"pre-drain", clusterv1.PreDrainDeleteHookAnnotationPrefix},
		{"pre-terminate", clusterv1.PreTerminateDeleteHookAnnotationPrefix},
	} {
		var keys []string
		for k := range m.Annotations {
			if strings.HasPrefix(k, p.prefix) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, explain.Hook{Point: p.point, Name: strings.TrimPrefix(k, p.prefix), Annotation: k, Owner: m.Annotations[k]})
		}
	}
	return out
}

// waitingOn describes what the state waits on, from the state's wait in
// the tables, timed as the engine times it for the timed-out facts.
func waitingOn(s *Scope, st *engine.State, now time.Time) *explain.Wait {
	sw := st.Wait
	if sw == nil {
		return nil
	}
	m := s.Machine
	t := engine.WaitTimingOf(Registry(), sw, s)
	if sw.Since == WorkloadUnusableSince && t.Since.IsZero() {
		// A Running Machine waits only while its workload cluster cannot
		// be used (the grace of its Node conditions).
		return nil
	}
	w := explain.WaitFromTiming(sw, t, now)
	switch sw.Object {
	case "infrastructure":
		w.On += objectText(s.Infrastructure, m.Spec.InfrastructureRef)
		w.SetExternalStart(s.Infrastructure, now)
	case "bootstrap":
		ref := clusterv1.ObjectReference{}
		if m.Spec.Bootstrap.ConfigRef != nil {
			ref = *m.Spec.Bootstrap.ConfigRef
		}
		w.On += objectText(s.Bootstrap, ref)
		w.SetExternalStart(s.Bootstrap, now)
	default:
		if strings.Contains(sw.On, "Node") {
			w.On += nodeName(s)
		}
	}
	return w
}

func nodeName(s *Scope) string {
	if n := s.Node(); n != nil {
		return " (Node " + n.Name + ")"
	}
	if m := s.Machine; m.Status.NodeRef != nil && m.Status.NodeRef.Name != "" {
		return " (Node " + m.Status.NodeRef.Name + ")"
	}
	return ""
}

func objectText(u *unstructured.Unstructured, ref clusterv1.ObjectReference) string {
	if u == nil {
		return fmt.Sprintf(" (%s %s: not found)", ref.Kind, ref.Name)
	}
	out := fmt.Sprintf(" (%s %s", u.GetKind(), u.GetName())
	if fs := u.GetFinalizers(); len(fs) > 0 {
		out += "; finalizers: " + strings.Join(fs, ", ")
	}
	return out + ")"
}

// shortDuration prints a duration as the explain reports print theirs:
// rounded to the second, 2m rather than 2m0s.
func shortDuration(d time.Duration) string {
	return engine.ShortDuration(d.Round(time.Second))
}
