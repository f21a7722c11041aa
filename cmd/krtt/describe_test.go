package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// describe cluster prints the tree of a Cluster whose objects carry the
// status an operator would have written: a control-plane Machine, a
// MachineSet scaling up with a Ready Machine and one being drained, and a
// Machine of another Cluster that must not show. No operator runs: the
// objects carry no watch-filter label, and the status is written here, so
// the golden does not depend on timing.
func TestDescribeClusterGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under testing.Short: needs envtest")
	}
	cp, err := localcp.ForTest()
	if err != nil {
		t.Fatalf("control plane (make test builds bin/k8s): %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	ctx := context.Background()
	c := cp.Client
	ns := localcp.UniqueName("describe")
	harness.Must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	now := metav1.Now()
	row := func(table, id, from, to string) *kit.LastTransition {
		return &kit.LastTransition{Table: table, Row: id, From: from, To: to, Time: now}
	}
	cond := func(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: now}
	}
	status := func(o client.Object) { t.Helper(); harness.Must(t, c.Status().Update(ctx, o)) }

	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
	harness.Must(t, c.Create(ctx, cl))
	cl.Status.Phase, cl.Status.State = "Provisioned", "Provisioned"
	cl.Status.Machines = clusterv1.ClusterMachines{Total: 3, Ready: 2, Deleting: 1}
	cl.Status.LastTransition = row("cluster-status", "K03", "Provisioned", "Provisioned")
	cl.Status.Conditions = []metav1.Condition{cond("WorkloadClusterReachable", metav1.ConditionTrue, "SelfHosted", "The Nodes are in the management cluster")}
	status(cl)

	labels := map[string]string{"pool": "workers"}
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec: clusterv1.MachineSetSpec{ClusterName: "c1", Replicas: ptr.To[int32](2),
			Selector: clusterv1.MachineSetSelector{MatchLabels: labels},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.TemplateMetadata{Labels: labels},
				Spec: clusterv1.MachineSpec{ClusterName: "c1", Version: "v1.37.0",
					Bootstrap:         clusterv1.MachineBootstrap{DataSecretName: ptr.To("boot")},
					InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachineTemplate", Name: "t"}}}}}
	harness.Must(t, c.Create(ctx, ms))
	ms.Status.Phase, ms.Status.State, ms.Status.Replicas, ms.Status.ReadyReplicas = "ScalingUp", "ScalingUp", 2, 1
	ms.Status.LastTransition = row("machineset-replicas", "S03", "ScalingUp", "ScalingUp")
	ms.Status.Conditions = []metav1.Condition{
		cond(clusterv1.ScalingUpCondition, metav1.ConditionTrue, "ScalingUp", "Creating 1 Machine (1 of 2 exist, 1 being deleted)"),
		cond(clusterv1.ScalingDownCondition, metav1.ConditionFalse, "NotScalingDown", ""),
	}
	status(ms)

	machine := func(name, cluster string, owner *clusterv1.MachineSet, mutate func(*clusterv1.Machine)) {
		t.Helper()
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: clusterv1.MachineSpec{ClusterName: cluster, Version: "v1.37.0",
				Bootstrap:         clusterv1.MachineBootstrap{DataSecretName: ptr.To(name)},
				InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachine", Name: name}}}
		if owner != nil {
			m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, clusterv1.GroupVersion.WithKind("MachineSet"))}
		}
		harness.Must(t, c.Create(ctx, m))
		m.Status.Phase, m.Status.State = clusterv1.MachinePhaseRunning, "Running"
		m.Status.LastTransition = row("machine-normal", "N01", "Running", "Running")
		m.Status.Conditions = []metav1.Condition{cond(clusterv1.ReadyCondition, metav1.ConditionTrue, "Ready", "")}
		if mutate != nil {
			mutate(m)
		}
		status(m)
	}
	machine("cp-0", "c1", nil, nil)
	machine("workers-a", "c1", ms, nil)
	machine("other-0", "c2", nil, nil)
	machine("workers-b", "c1", ms, func(m *clusterv1.Machine) {
		// Deleted while a finalizer holds it, as the operator's would.
		m.Finalizers = []string{"test.krtt.dev/hold"}
		harness.Must(t, c.Update(ctx, m))
		harness.Must(t, c.Delete(ctx, m))
		harness.Must(t, c.Get(ctx, client.ObjectKeyFromObject(m), m))
		t.Cleanup(func() {
			m.Finalizers = nil
			_ = c.Update(context.Background(), m)
		})
		m.Status.Phase, m.Status.State, m.Status.Deletion.Step = clusterv1.MachinePhaseDeleting, "DrainingNode", "DrainingNode"
		m.Status.LastTransition = row("machine-deletion", "D05", "DrainingNode", "DrainingNode")
		m.Status.Conditions = []metav1.Condition{
			cond(clusterv1.ReadyCondition, metav1.ConditionFalse, "Deleting", "The Machine is being deleted"),
			cond(clusterv1.DeletingCondition, metav1.ConditionTrue, clusterv1.DeletingDrainingNodeReason,
				"Drain not completed: 1 Pod left\n* Pod default/db: cannot evict, PodDisruptionBudget db allows no disruption"),
		}
	})

	kubeconfig := kubeconfigOf(t, cp.Config)
	code, out, errOut := krtt(t, "describe", "cluster", "c1", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Fatalf("describe: exit %d\n%s%s", code, out, errOut)
	}
	goldenCompare(t, "describe-cluster.txt", out)
	if strings.Contains(out, "other-0") {
		t.Error("a Machine of another Cluster is listed")
	}

	code, out, _ = krtt(t, "describe", "cluster", "missing", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 1 || !strings.Contains(out, "not found") {
		t.Errorf("a missing Cluster: exit %d, %q; want exit 1 and not found", code, out)
	}
}

// kubeconfigOf writes a kubeconfig for cfg, so the command is exercised
// through its real --kubeconfig loading.
func kubeconfigOf(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest", Namespace: "default"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
