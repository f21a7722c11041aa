package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/machinedeployment"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	krttexplain "github.com/krtt-dev/krtt/engine/explain"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// explainMachineDeploymentScalingUp: krtt explain machinedeployment on a
// deployment whose MachineSet cannot create Machines (its infrastructure
// template was deleted after the MachineSet was made) names the row (O13),
// the step and what it waits on, with its MachineSet's revision and counts.
func explainMachineDeploymentScalingUp(t *testing.T, h *harness.Harness, kubeconfig string) {
	ns := localcp.UniqueName("explain-md")
	ctx := context.Background()
	harness.Must(t, h.Namespace(ctx, ns))
	_, err := h.Cluster(ctx, ns, "c1")
	harness.Must(t, err)
	sel := map[string]string{"pool": "md"}
	ghost := &simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ghost"}}
	harness.Must(t, h.Client.Create(ctx, harness.Label(ghost)))
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "md"}}
	harness.Must(t, h.Client.Create(ctx, harness.Label(&clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "md"},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c1", Replicas: ptr.To(int32(0)),
			Selector: clusterv1.MachineSetSelector{MatchLabels: sel},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.TemplateMetadata{Labels: sel},
				Spec: clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.MachineBootstrap{DataSecretName: ptr.To("data")},
					InfrastructureRef: clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimMachineTemplate", Name: "ghost"}}}},
	})))
	// The deployment makes its MachineSet while the template exists; then
	// the template goes and the deployment is scaled up.
	harness.Await(t, explainWait, "the MachineDeployment's MachineSet", func(ctx context.Context) error {
		list := &clusterv1.MachineSetList{}
		if err := h.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d MachineSets", len(list.Items))
		}
		return nil
	})
	harness.Must(t, h.Client.Delete(ctx, ghost))
	harness.Must(t, h.Client.Get(ctx, client.ObjectKeyFromObject(md), md))
	before := md.DeepCopy()
	md.Spec.Replicas = ptr.To(int32(2))
	harness.Must(t, h.Client.Patch(ctx, md, client.MergeFrom(before)))
	var rep *krttexplain.Report
	harness.Await(t, explainWait, "MachineDeployment scaling up", func(ctx context.Context) error {
		r, err := machinedeployment.Explain(ctx, h.Client, h.Sets[machinedeployment.Name], client.ObjectKey{Namespace: ns, Name: "md"}, time.Now().UTC())
		if err != nil {
			return err
		}
		if r.Fires == nil || r.Fires.Row != "O13" || r.State != "ScalingUp" {
			return fmt.Errorf("fires %+v in %s", r.Fires, r.State)
		}
		rep = r
		return nil
	})
	if rep.Kind != "MachineDeployment" || rep.WaitingOn == nil || !strings.Contains(rep.WaitingOn.On, "RollingUpdate: 0 of 2 new Machine(s) available (current MachineSet at 2)") ||
		!strings.Contains(rep.WaitingOn.On, "(revision 1, current) 2 replicas, 0 Machines, 0 available") {
		t.Errorf("report %+v, waiting on %+v", rep, rep.WaitingOn)
	}
	code, out, errOut := krtt(t, "explain", "machinedeployment", "md", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 || !strings.Contains(out, "O13") || !strings.Contains(out, "(revision 1, current)") {
		t.Fatalf("explain machinedeployment: exit %d\n%s%s", code, out, errOut)
	}
}
