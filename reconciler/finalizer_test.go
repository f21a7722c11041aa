package reconciler

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// TestFinalizerActions: the actions change the object in the scope, keep
// other finalizers and are idempotent.
func TestFinalizerActions(t *testing.T) {
	const fin = "door.toy.krtt.dev"
	type scope struct{ cm *corev1.ConfigMap }
	obj := func(s *scope) client.Object { return s.cm }
	add, remove := AddFinalizer(fin, obj), RemoveFinalizer(fin, obj)
	s := &scope{cm: &corev1.ConfigMap{}}
	s.cm.Finalizers = []string{"other.example.com"}
	for range 2 {
		if o := add(context.Background(), s); o.Status != engine.Done {
			t.Fatalf("add: %+v", o)
		}
	}
	if got := s.cm.Finalizers; len(got) != 2 || got[0] != "other.example.com" || got[1] != fin {
		t.Fatalf("after adding twice: %v", got)
	}
	for range 2 {
		if o := remove(context.Background(), s); o.Status != engine.Done {
			t.Fatalf("remove: %+v", o)
		}
	}
	if got := s.cm.Finalizers; len(got) != 1 || got[0] != "other.example.com" {
		t.Fatalf("after removing twice: %v", got)
	}
}
