package harness

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/engine"
)

type okTransport struct{}

func (okTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

func TestWriteAuditHoldsActionsToTheirMarkers(t *testing.T) {
	a := NewWriteAudit(map[string]string{"machine": "machines"})
	rt := a.Wrap(okTransport{})
	send := func(method, path string, ra *engine.RunningAction) {
		t.Helper()
		ctx := context.Background()
		if ra != nil {
			ctx = engine.WithRunningAction(ctx, *ra)
		}
		req, err := http.NewRequestWithContext(ctx, method, "https://api"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	pure := &engine.RunningAction{Set: "machine", Object: "ns/m1", Action: "MarkDrainStart", Pure: true}
	through := &engine.RunningAction{Set: "machine", Object: "ns/m1", Action: "SyncNode", WritesThrough: true}
	plain := &engine.RunningAction{Set: "machine", Object: "ns/m1", Action: "DeleteNode"}
	machine := "/apis/cluster.krtt.dev/v1alpha1/namespaces/ns/machines/m1"

	// Allowed: reads by anyone, writes outside an action, writes of an
	// unmarked action, a write-through action writing another object.
	send(http.MethodGet, machine, pure)
	send(http.MethodPatch, machine, nil)
	send(http.MethodDelete, "/api/v1/nodes/n1", plain)
	send(http.MethodPatch, "/api/v1/nodes/n1", through)
	send(http.MethodPatch, "/apis/cluster.krtt.dev/v1alpha1/namespaces/ns/machines/m10", through)
	if v := a.Violations(); len(v) != 0 {
		t.Fatalf("violations for allowed requests: %v", v)
	}
	if got := strings.Join(a.WritesThrough(), ";"); got != "machine SyncNode: 2" {
		t.Errorf("write-through writes %q", got)
	}

	// Refused: a pure action's write, a write-through action writing the
	// reconciled object or its status.
	send(http.MethodPatch, "/api/v1/nodes/n1", pure)
	send(http.MethodPatch, machine, through)
	send(http.MethodPut, machine+"/status", through)
	v := a.Violations()
	if len(v) != 3 || !strings.Contains(v[0], "MarkDrainStart (marked Pure)") || !strings.Contains(v[1], "SyncNode (marked WritesThrough) wrote the object it reconciles") ||
		!strings.HasSuffix(v[2], "/machines/m1/status") {
		t.Errorf("violations %q", v)
	}
}
