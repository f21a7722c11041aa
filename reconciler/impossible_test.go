package reconciler

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// An observation in a combination the tables declare impossible is counted
// in krtt_impossible_facts_total and shown on the stored object as
// FactsConsistent=False, also when the row that fires leaves status alone
// (a paused object): the Lamp's tables over a Door object, whose schema
// keeps any field.
func TestImpossibleFactsCountedAndShown(t *testing.T) {
	ns := createNamespace(t, "impossible")
	ctx := context.Background()
	u := newDoor()
	u.SetNamespace(ns)
	u.SetName("lamp")
	_ = unstructured.SetNestedField(u.Object, true, "spec", "paused")
	_ = unstructured.SetNestedField(u.Object, true, "spec", "lit")
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	set := lampSet(t)
	spec := Spec[*unstructured.Unstructured, *lamp]{
		Name: set.Name, Set: set, Registry: lampRegistry(), NewObject: newDoor, Status: fullStatus,
		Observe: func(ctx context.Context, key client.ObjectKey, _ time.Time) Observation[*unstructured.Unstructured, *lamp] {
			u := newDoor()
			err := env.Client.Get(ctx, key, u)
			return Observation[*unstructured.Unstructured, *lamp]{Env: &lamp{obj: u}, Object: u, Found: err == nil, Err: err}
		},
	}
	r, err := New(spec, Options{Client: env.Client, APIReader: env.Client, Now: func() time.Time { return toyTime }})
	if err != nil {
		t.Fatal(err)
	}
	before := impossibleCount(t, set.Name, "litWithoutPower")
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(u)}); err != nil {
		t.Fatal(err)
	}
	if got := impossibleCount(t, set.Name, "litWithoutPower"); got != before+1 {
		t.Errorf("krtt_impossible_facts_total{controller=lamp,impossible=litWithoutPower} = %v, want %v", got, before+1)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		t.Fatal(err)
	}
	conds := fullStatus(u).GetConditions()
	if c := meta.FindStatusCondition(conds, FactsConsistentCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "ImpossibleFacts" {
		t.Errorf("FactsConsistent = %+v, want False ImpossibleFacts", c)
	}
	if !meta.IsStatusConditionTrue(conds, "Paused") {
		t.Errorf("conditions %+v, want Paused=True from row P1", conds)
	}
	if st := fullStatus(u).GetRecord().State; st != "" {
		t.Errorf("status.state %q written by a statusUnchanged row", st)
	}
}

func impossibleCount(t *testing.T, controller, impossible string) float64 {
	t.Helper()
	var m dto.Metric
	if err := impossibleFactsTotal.WithLabelValues(controller, impossible).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
