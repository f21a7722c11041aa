package record

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestRoundTrip(t *testing.T) {
	lt := &clusterv1.LastTransition{Table: "t", Row: "R1", From: "A", To: "B", Action: "Do", Outcome: "Done", Message: "m", Time: metav1.Now()}
	if got := LastTransition(Transition(lt)); *got != *lt {
		t.Errorf("round trip %+v, want %+v", got, lt)
	}
	if Transition(nil) != nil || LastTransition(nil) != nil {
		t.Error("nil stays nil")
	}
}
