package machine

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// The refusal count grows by one per refused pass and stops at
// maxEvictRetries: past it the verdict no longer changes, and a count still
// growing would cost a status write on every drain pass.
func TestCountRefusalsStopsAtTheLimit(t *testing.T) {
	pods := []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "u1"}}}
	m := &clusterv1.Machine{}
	m.Spec.Deletion.MaxEvictRetries = ptr.To[int32](2)
	for pass, want := range []int32{1, 2, 2, 2} {
		note := refusalsNote(m, &pods[0])
		countRefusals(m, pods, map[string]bool{"ns/db": true})
		if got := refusalsOf(m, &pods[0]); got != want {
			t.Fatalf("pass %d: count %d, want %d", pass+1, got, want)
		}
		if wantNote := fmt.Sprintf(" (refused %d of maxEvictRetries 2)", want); note != wantNote {
			t.Errorf("pass %d: note %q, want %q", pass+1, note, wantNote)
		}
	}
	// A pass that was not refused keeps the count.
	countRefusals(m, pods, map[string]bool{})
	if got := refusalsOf(m, &pods[0]); got != 2 {
		t.Errorf("after a pass without refusal: count %d, want 2", got)
	}
}
