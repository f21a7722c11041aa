package machine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// status.deletion.step names the state only while the Machine is being
// deleted, and is cleared otherwise (a step left from an older reconcile
// must not linger).
func TestMirrorDeletionStep(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		name     string
		deleting bool
		state    string
		want     string
	}{
		{"deleting", true, "DrainingNode", "DrainingNode"},
		{"running", false, "Running", ""},
	} {
		m := &clusterv1.Machine{}
		m.Status.State, m.Status.Deletion.Step = tc.state, "stale"
		if tc.deleting {
			m.DeletionTimestamp = &now
		}
		mirrorDeletionStep(&Scope{Machine: m})
		if m.Status.Deletion.Step != tc.want {
			t.Errorf("%s: step %q, want %q", tc.name, m.Status.Deletion.Step, tc.want)
		}
	}
}
