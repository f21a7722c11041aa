package transition

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestRoundTrip(t *testing.T) {
	if ToKit(nil) != nil || FromKit(nil) != nil {
		t.Fatal("nil does not map to nil")
	}
	lt := &clusterv1.LastTransition{Table: "t", Row: "R1", From: "A", To: "B", Action: "Do", Outcome: "Done", Message: "m", Time: metav1.Unix(10, 0)}
	if got := FromKit(ToKit(lt)); *got != *lt {
		t.Errorf("round trip: got %+v, want %+v", got, lt)
	}
}
