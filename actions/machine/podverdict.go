package machine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// PodVerdictTable is the name of the decision table the drain asks about
// every Pod (transitions/machine/pod-verdict.yaml).
const PodVerdictTable = "pod-verdict"

// PodRegistryName is the registry the Pod verdict table names.
const PodRegistryName = "pod"

// Verdicts of the Pod verdict table the drain acts on.
const (
	verdictGone            = "Gone"
	verdictRemoveFinished  = "RemoveFinished"
	verdictWaitTerminating = "WaitTerminating"
	verdictSkip            = "Skip"
	verdictEvict           = "Evict"
)

// PodItem is what the Pod verdict table observes about one Pod: the Pod and
// what was read around it. Observers only read it.
type PodItem struct {
	Pod *corev1.Pod
	Now time.Time
	// NodeUnreachable: the Node reports Ready=Unknown.
	NodeUnreachable bool
	// DaemonSet is the daemonSet fact, read by podFacts.
	DaemonSet string
}

var (
	podOnce sync.Once
	podReg  *engine.Registry[*PodItem]
)

// PodRegistry returns the registry of the Pod verdict table's facts.
func PodRegistry() *engine.Registry[*PodItem] {
	podOnce.Do(func() {
		r := engine.NewRegistry[*PodItem](PodRegistryName)
		r.Bool("finished", "The Pod's phase is Succeeded or Failed.", func(p *PodItem) bool {
			return p.Pod.Status.Phase == corev1.PodSucceeded || p.Pod.Status.Phase == corev1.PodFailed
		})
		r.Enum("terminating", "Whether the Pod has a deletionTimestamp, and for how long.", func(p *PodItem) string {
			switch {
			case p.Pod.DeletionTimestamp.IsZero():
				return "No"
			case p.Now.Sub(p.Pod.DeletionTimestamp.Time) > unreachableGrace:
				return "Long"
			}
			return "Recently"
		})
		r.Bool("nodeUnreachable", "The Node reports Ready=Unknown.", func(p *PodItem) bool { return p.NodeUnreachable })
		r.Bool("mirror", "The Pod is a static Pod's mirror.", func(p *PodItem) bool {
			_, ok := p.Pod.Annotations[corev1.MirrorPodAnnotationKey]
			return ok
		})
		r.Enum("daemonSet", "The Pod's DaemonSet controller, if any.", func(p *PodItem) string { return p.DaemonSet })
		r.Enum("drainLabel", "The Pod's cluster.krtt.dev/drain label.", func(p *PodItem) string {
			if p.Pod.Labels[clusterv1.PodDrainLabel] == clusterv1.PodDrainLabelValueSkip {
				return "Skip"
			}
			return "None"
		})
		podReg = r
	})
	return podReg
}

// PodVerdicts binds the set's Pod verdict table to the Pod registry.
func PodVerdicts(set *engine.Set) (*engine.Decider[*PodItem], error) {
	t := set.Decision(PodVerdictTable)
	if t == nil {
		return nil, fmt.Errorf("the %s tables have no decision table %s, which the drain asks about every Pod", set.Name, PodVerdictTable)
	}
	return engine.NewDecider(t, PodRegistry())
}

// daemonSetOf reads the Pod's DaemonSet controller: No, Live, or Orphaned
// (its DaemonSet is gone or replaced, so nothing recreates the Pod).
func daemonSetOf(ctx context.Context, c client.Client, pod *corev1.Pod) (string, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "DaemonSet" || !strings.HasPrefix(ref.APIVersion, "apps/") {
		return "No", nil
	}
	ds := &appsv1.DaemonSet{}
	err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, ds)
	switch {
	case err == nil && (ref.UID == "" || ds.UID == ref.UID):
		return "Live", nil
	case err == nil, apierrors.IsNotFound(err):
		return "Orphaned", nil
	}
	return "", fmt.Errorf("get DaemonSet %s: %v", ref.Name, err)
}

// podVerdict is one Pod's verdict, or why it could not be decided.
type podVerdict struct {
	pod *corev1.Pod
	dec engine.ItemDecision
	// err: a fact could not be observed (the DaemonSet lookup failed).
	err error
}

func (v podVerdict) verdict() string {
	if v.err != nil {
		return ""
	}
	return v.dec.Verdict()
}

// drainView is one drain pass's reading of the Node's Pods.
type drainView struct {
	s           *Scope
	pods        []corev1.Pod
	unreachable bool
}

// decide asks the Pod verdict table about every Pod on the Node.
func (v *drainView) decide(ctx context.Context) ([]podVerdict, error) {
	if v.s.PodVerdicts == nil {
		return nil, fmt.Errorf("no Pod verdict table is loaded")
	}
	out := make([]podVerdict, len(v.pods))
	for i := range v.pods {
		pod := &v.pods[i]
		out[i].pod = pod
		ds, err := daemonSetOf(ctx, v.s.NodeClient, pod)
		if err != nil {
			out[i].err = err
			continue
		}
		item := &PodItem{Pod: pod, Now: v.s.Now, NodeUnreachable: v.unreachable, DaemonSet: ds}
		out[i].dec, out[i].err = v.s.PodVerdicts.Decide(item)
	}
	return out, nil
}

// record traces the verdicts the pass acted on, naming each Pod.
func (v *drainView) record(ctx context.Context, verdicts []podVerdict) {
	for _, pv := range verdicts {
		if pv.err == nil {
			v.s.PodVerdicts.Record(ctx, v.s.Key.String(), pv.dec, "Pod "+podName(pv.pod))
		}
	}
}
