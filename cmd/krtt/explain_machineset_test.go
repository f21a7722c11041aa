package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/machineset"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	krttexplain "github.com/krtt-dev/krtt/engine/explain"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// explainMachineSetWaitingForTemplate: krtt explain machineset on a set whose
// infrastructure template does not exist names the row that holds it (R04),
// its counts and limits, the template and what would release it.
func explainMachineSetWaitingForTemplate(t *testing.T, h *harness.Harness, kubeconfig string) {
	ns := localcp.UniqueName("explain-machineset")
	ctx := context.Background()
	harness.Must(t, h.Namespace(ctx, ns))
	_, err := h.Cluster(ctx, ns, "c1")
	harness.Must(t, err)
	_, err = h.MachineSetObjects(ctx, ns, "c1", "ms", 2, func(ms *clusterv1.MachineSet) {
		ms.Spec.Template.Spec.InfrastructureRef.Name = "ghost"
	})
	harness.Must(t, err)
	var rep *krttexplain.Report
	harness.Await(t, explainWait, "MachineSet waits for its template", func(ctx context.Context) error {
		r, err := machineset.Explain(ctx, h.Client, h.Sets[machineset.Name], client.ObjectKey{Namespace: ns, Name: "ms"}, time.Now().UTC())
		if err != nil {
			return err
		}
		if r.Fires == nil || r.Fires.Row != "R04" || r.LastTransition == nil || r.LastTransition.Row != "R04" || len(r.Events) == 0 {
			return fmt.Errorf("fires %+v, last transition %+v, %d Events", r.Fires, r.LastTransition, len(r.Events))
		}
		rep = r
		return nil
	})
	if rep.Kind != "MachineSet" || rep.Replicas == nil || rep.Replicas.Desired != 2 || rep.Replicas.Working != 0 ||
		len(rep.Replicas.MissingTemplates) != 1 || rep.State != "ScalingUp" {
		t.Errorf("report %+v, replicas %+v", rep, rep.Replicas)
	}
	released := false
	for _, rel := range rep.Releases {
		released = released || rel.Fact == "templates" && rel.To == "Found" && rel.Row == "R05"
	}
	if !released {
		t.Errorf("releases %+v, want templates=Found → R05", rep.Releases)
	}

	code, out, errOut := krtt(t, "explain", "machineset", "ms", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
	if code != 0 {
		t.Fatalf("explain machineset -o json: exit %d\n%s%s", code, out, errOut)
	}
	var fromJSON krttexplain.Report
	if err := json.Unmarshal([]byte(out), &fromJSON); err != nil || fromJSON.Fires == nil || fromJSON.Fires.Row != "R04" {
		t.Fatalf("explain machineset -o json: %v %+v\n%s", err, fromJSON.Fires, out)
	}
	code, out, errOut = krtt(t, "explain", "machineset", "ms", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Fatalf("explain machineset: exit %d\n%s%s", code, out, errOut)
	}
	head, _, ok := strings.Cut(out, "\nEvents (last ")
	if !ok {
		t.Fatalf("no Events section:\n%s", out)
	}
	goldenCompare(t, "machineset-waiting-for-template.txt", mask(head+"\n"))

	code, out, _ = krtt(t, "explain", "machineset", "nope", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 1 || !strings.Contains(out, "MachineSet "+ns+"/nope\n  not found (the tables' machineSetFound=false row decides)") {
		t.Errorf("explain of a missing MachineSet: exit %d\n%s", code, out)
	}
}
