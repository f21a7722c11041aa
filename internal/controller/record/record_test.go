package record

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestRoundTrip(t *testing.T) {
	lt := &clusterv1.LastTransition{Table: "t", Row: "R1", From: "A", To: "B", Action: "Do", Outcome: "Done", Message: "m", Time: metav1.Now(),
		Via: []clusterv1.ViaRow{{Table: "t", Row: "R0", From: "Z", To: "A", Action: "Mark", Message: "marked"}}}
	if got := LastTransition(Transition(lt)); !equality.Semantic.DeepEqual(got, lt) {
		t.Errorf("round trip %+v, want %+v", got, lt)
	}
	if Transition(nil) != nil || LastTransition(nil) != nil {
		t.Error("nil stays nil")
	}
}
