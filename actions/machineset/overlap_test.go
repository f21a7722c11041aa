package machineset

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func labelled(name string, selector, template map[string]string) *clusterv1.MachineSet {
	return &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: clusterv1.MachineSetSpec{ClusterName: "c1",
			Selector: clusterv1.MachineSetSelector{MatchLabels: selector},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.TemplateMetadata{Labels: template}}},
	}
}

type kv = map[string]string

func TestOverlap(t *testing.T) {
	a := labelled("a", kv{"pool": "a"}, kv{"pool": "a"})
	gone := labelled("gone", kv{"pool": "a"}, kv{"pool": "a"})
	gone.DeletionTimestamp = ptr.To(metav1.Now())
	gone.Finalizers = []string{"x"}
	other := labelled("other", kv{"pool": "a"}, kv{"pool": "a"})
	other.Spec.ClusterName = "c2"
	for _, tc := range []struct {
		name string
		b    *clusterv1.MachineSet
		want bool
	}{
		{"identical selectors", labelled("b", kv{"pool": "a"}, kv{"pool": "a"}), true},
		{"a's selector a subset of b's", labelled("b", kv{"pool": "a", "gpu": "yes"}, kv{"pool": "a", "gpu": "yes"}), true},
		{"other keys, but b's template carries a's selector", labelled("b", kv{"zone": "z"}, kv{"zone": "z", "pool": "a"}), true},
		{"same key, other value", labelled("b", kv{"pool": "b"}, kv{"pool": "b"}), false},
		{"other keys only", labelled("b", kv{"zone": "z"}, kv{"zone": "z"}), false},
		{"another Cluster", other, false},
		{"being deleted", gone, false},
		{"itself", a, false},
	} {
		if got := Overlap(a, tc.b); got != tc.want {
			t.Errorf("%s: Overlap = %v, want %v", tc.name, got, tc.want)
		}
		if got := Overlap(tc.b, a); got != tc.want {
			t.Errorf("%s: Overlap is not symmetric", tc.name)
		}
	}
}

// TestOverlapObserved: through the indexes (the manager's cache) and
// without them (krtt explain's reader) a set finds the sets it overlaps
// with, an orphan both select is left to neither, and the facts say whether
// SelectorUnique already tells it.
func TestOverlapObserved(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}},
		labelled("a", kv{"pool": "a"}, kv{"pool": "a", "tier": "web"}),
		labelled("b", kv{"pool": "a", "gpu": "yes"}, kv{"pool": "a", "gpu": "yes"}),
		labelled("c", kv{"tier": "web"}, kv{"tier": "web"}),
		labelled("d", kv{"pool": "d"}, kv{"pool": "d"}),
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "both", Labels: kv{"pool": "a", "gpu": "yes"}},
			Spec: clusterv1.MachineSpec{ClusterName: "c1"}},
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mine", Labels: kv{"pool": "a"}},
			Spec: clusterv1.MachineSpec{ClusterName: "c1"}},
	}
	indexed := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&clusterv1.Machine{}, ControllerUIDIndex, ControllerUIDIndexer).
		WithIndex(&clusterv1.MachineSet{}, SelectorLabelIndex, SelectorLabelIndexer).
		WithIndex(&clusterv1.MachineSet{}, TemplateLabelIndex, TemplateLabelIndexer).Build()
	plain := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	for name, c := range map[string]client.Client{"indexed": indexed, "without indexes": plain} {
		t.Run(name, func(t *testing.T) {
			s := (&Observer{Client: c}).Observe(context.Background(), client.ObjectKey{Namespace: "ns", Name: "a"}, t0)
			var got []string
			for _, o := range s.Overlaps {
				got = append(got, o.Name)
			}
			if strings.Join(got, " ") != "b c" {
				t.Fatalf("overlaps %v, want b c", got)
			}
			if len(s.Contested) != 1 || s.Contested[0].Name != "both" || len(s.Orphans) != 1 || s.Orphans[0].Name != "mine" {
				t.Fatalf("contested %v, orphans %v: want both left to neither set, mine adopted", names(s.Contested), names(s.Orphans))
			}
			f := facts(t, s)
			if f["selectorOverlap"] != "true" || f["selectorConditionCurrent"] != "false" {
				t.Fatalf("facts %v", f)
			}
			msg := overlapMessage(s)
			if !strings.Contains(msg, "MachineSets b (selector gpu=yes,pool=a), c (selector tier=web) of Cluster c1") {
				t.Errorf("message does not name the other sets: %s", msg)
			}
			meta.SetStatusCondition(&s.Set.Status.Conditions, metav1.Condition{Type: SelectorUniqueCondition,
				Status: metav1.ConditionFalse, Reason: "SelectorOverlap", Message: msg})
			if f := facts(t, s); f["selectorConditionCurrent"] != "true" {
				t.Errorf("the condition row S14 writes is not current: %v", f)
			}
			s.Overlaps = nil
			if f := facts(t, s); f["selectorOverlap"] != "false" || f["selectorConditionCurrent"] != "false" {
				t.Errorf("an overlap gone leaves the condition current: %v", f)
			}
		})
	}
}

// TestOverlapsChangedWakes: a set that comes, changes its selector, is
// deleted or goes wakes the sets it overlaps with before and after; a
// change of its status wakes none.
func TestOverlapsChangedWakes(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	a := labelled("a", kv{"pool": "a"}, kv{"pool": "a"})
	b := labelled("b", kv{"pool": "a", "gpu": "yes"}, kv{"pool": "a", "gpu": "yes"})
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(a, b).
		WithIndex(&clusterv1.MachineSet{}, SelectorLabelIndex, SelectorLabelIndexer).
		WithIndex(&clusterv1.MachineSet{}, TemplateLabelIndex, TemplateLabelIndexer).Build()
	h := mapper{client: c}.overlapsChanged()
	mended := b.DeepCopy()
	mended.Spec.Selector.MatchLabels = kv{"pool": "b"}
	mended.Spec.Template.ObjectMeta.Labels = kv{"pool": "b"}
	statusOnly := b.DeepCopy()
	statusOnly.Status.Replicas = 3
	deleting := b.DeepCopy()
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	deleting.Finalizers = []string{"x"}
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		event func(workqueue.TypedRateLimitingInterface[reconcile.Request])
		want  int
	}{
		{"created", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: b}, q)
		}, 1},
		{"status changed", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: b, ObjectNew: statusOnly}, q)
		}, 0},
		{"selector mended", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: b, ObjectNew: mended}, q)
		}, 1},
		{"being deleted", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: b, ObjectNew: deleting}, q)
		}, 1},
		{"gone", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, event.DeleteEvent{Object: deleting}, q)
		}, 1},
	} {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		tc.event(q)
		if q.Len() != tc.want {
			t.Errorf("%s: %d sets woken, want %d", tc.name, q.Len(), tc.want)
		}
		for q.Len() > 0 {
			req, _ := q.Get()
			if req.Name != "a" {
				t.Errorf("%s: woke %s, want a", tc.name, req.Name)
			}
			q.Done(req)
		}
		q.ShutDown()
	}
}
