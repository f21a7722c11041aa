package features

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/harness"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// Steps for a Cluster's infrastructure object (spec.infrastructureRef): the
// scenario plays the infrastructure and control plane providers, which
// provision the objects, give the endpoint and finish their deletion.
func registerInfrastructureSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^a Cluster "([^"]*)" whose infrastructureRef names the SimCluster "([^"]*)"$`, func(ctx context.Context, name, infra string) error {
		return w.clusterWithInfrastructure(ctx, name, infra, "")
	})
	sc.Step(`^a Cluster "([^"]*)" whose infrastructureRef names the SimCluster "([^"]*)" and whose controlPlaneRef names the SimControlPlane "([^"]*)"$`, w.clusterWithInfrastructure)
	sc.Step(`^a Cluster "([^"]*)" whose controlPlaneRef names the SimControlPlane "([^"]*)" and that names no infrastructure$`, w.clusterWithControlPlaneOnly)
	sc.Step(`^the SimCluster "([^"]*)" is created$`, w.createSimCluster)
	sc.Step(`^the SimControlPlane "([^"]*)" that is not initialized yet is created$`, w.createUninitializedSimControlPlane)
	sc.Step(`^the infrastructure provider provisions the SimCluster "([^"]*)" at "([^"]*)"$`, func(ctx context.Context, name, endpoint string) error {
		return w.provisionSimCluster(ctx, name, endpoint, "")
	})
	sc.Step(`^the infrastructure provider provisions the SimCluster "([^"]*)" at "([^"]*)" in the failure domains "([^"]*)"$`, w.provisionSimCluster)
	sc.Step(`^the infrastructure provider provisions the SimCluster "([^"]*)" without a control plane endpoint$`, func(ctx context.Context, name string) error {
		return w.provisionSimCluster(ctx, name, "", "")
	})
	sc.Step(`^the Cluster "([^"]*)" reports the failure domains "([^"]*)"$`, w.clusterFailureDomains)
	sc.Step(`^the control plane provider reports the SimControlPlane "([^"]*)" initialized at "([^"]*)"$`, w.controlPlaneInitializedAt)
	sc.Step(`^the Cluster "([^"]*)" is in phase "([^"]*)"$`, w.clusterPhase)
	sc.Step(`^the Cluster "([^"]*)" has the control plane endpoint "([^"]*)"$`, w.clusterEndpoint)
	sc.Step(`^the Cluster "([^"]*)" has no control plane endpoint$`, func(ctx context.Context, name string) error { return w.clusterEndpoint(ctx, name, "") })
	sc.Step(`^the Cluster "([^"]*)" records its infrastructure as provisioned$`, w.clusterInfrastructureProvisioned)
	sc.Step(`^the (SimCluster|SimControlPlane) "([^"]*)" is owned by the Cluster "([^"]*)" and carries its cluster-name label$`, w.referencedAdopted)
	sc.Step(`^the (?:infrastructure|control plane) provider holds the deletion of the (SimCluster|SimControlPlane) "([^"]*)"$`, func(ctx context.Context, kind, name string) error {
		return w.providerHold(ctx, kind, name, true)
	})
	sc.Step(`^the (?:infrastructure|control plane) provider finishes the deletion of the (SimCluster|SimControlPlane) "([^"]*)"$`, func(ctx context.Context, kind, name string) error {
		return w.providerHold(ctx, kind, name, false)
	})
	sc.Step(`^the SimCluster "([^"]*)" is (being|not being) deleted$`, w.simClusterDeleting)
	sc.Step(`^someone deletes the (SimCluster|SimControlPlane) "([^"]*)"$`, w.deleteReferenced)
	sc.Step(`^the control plane provider reports the SimControlPlane "([^"]*)" "([^"]*)" with status "([^"]*)", reason "([^"]*)" and message "([^"]*)"$`, w.controlPlaneCondition)
	sc.Step(`^the Cluster "([^"]*)" has no condition "([^"]*)"$`, w.clusterHasNoCondition)
}

// controlPlaneCondition plays the control plane provider setting one of its
// object's conditions.
func (w *world) controlPlaneCondition(ctx context.Context, name, ctype, status, reason, message string) error {
	cp := &simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return w.updateStatus(ctx, cp, func() {
		meta.SetStatusCondition(&cp.Status.Conditions, metav1.Condition{Type: ctype, Status: metav1.ConditionStatus(status),
			Reason: reason, Message: message, ObservedGeneration: cp.Generation})
	})
}

func (w *world) clusterHasNoCondition(ctx context.Context, name, ctype string) error {
	return w.eventually(ctx, fmt.Sprintf("Cluster %s without condition %s", name, ctype), func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(c.Status.Conditions, ctype); cond != nil {
			return fmt.Errorf("%s = %+v", ctype, cond)
		}
		return nil
	})
}

// providerHold stands for a provider's own finalizer, which it removes
// once what the object stands for is gone.
const providerHold = "provider.example.com/resources"

func (w *world) clusterWithInfrastructure(ctx context.Context, name, infra, cp string) error {
	w.cluster = name
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: &clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimCluster", Name: infra}}}
	if cp != "" {
		c.Spec.ControlPlaneRef = &clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimControlPlane", Name: cp}
	}
	return w.h.Client.Create(ctx, harness.Label(c))
}

// clusterWithControlPlaneOnly creates a Cluster with a control plane object
// and no infrastructure object.
func (w *world) clusterWithControlPlaneOnly(ctx context.Context, name, cp string) error {
	w.cluster = name
	return w.h.Client.Create(ctx, harness.Label(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: &clusterv1.ObjectReference{APIGroup: simv1.GroupVersion.Group, Kind: "SimControlPlane", Name: cp}}}))
}

func (w *world) createSimCluster(ctx context.Context, name string) error {
	return w.h.Client.Create(ctx, harness.Label(&simv1.SimCluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}))
}

func (w *world) createUninitializedSimControlPlane(ctx context.Context, name string) error {
	return w.h.Client.Create(ctx, harness.Label(&simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: simv1.SimControlPlaneSpec{ExternallyManaged: ptr.To(false)}}))
}

func parseEndpoint(s string) (simv1.SimAPIEndpoint, error) {
	if s == "" {
		return simv1.SimAPIEndpoint{}, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return simv1.SimAPIEndpoint{}, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return simv1.SimAPIEndpoint{}, err
	}
	return simv1.SimAPIEndpoint{Host: host, Port: int32(p)}, nil
}

// updateSpec writes a change of an object's spec or metadata, as its owner
// would.
func (w *world) updateSpec(ctx context.Context, obj client.Object, mutate func()) error {
	key := client.ObjectKey{Namespace: w.ns, Name: obj.GetName()}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.h.Client.Get(ctx, key, obj); err != nil {
			return err
		}
		mutate()
		return w.h.Client.Update(ctx, obj)
	})
}

// provisionSimCluster plays the infrastructure provider: the endpoint (if
// any) in the spec, then provisioned, Ready and the failure domains (a
// comma-separated list of names; those ending in "*" fit the control
// plane) by the contract.
func (w *world) provisionSimCluster(ctx context.Context, name, endpoint, domains string) error {
	var fds []simv1.SimFailureDomain
	for d := range strings.SplitSeq(domains, ",") {
		if d = strings.TrimSpace(d); d != "" {
			fds = append(fds, simv1.SimFailureDomain{Name: strings.TrimSuffix(d, "*"), ControlPlane: ptr.To(strings.HasSuffix(d, "*"))})
		}
	}
	ep, err := parseEndpoint(endpoint)
	if err != nil {
		return err
	}
	sc := &simv1.SimCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := w.updateSpec(ctx, sc, func() { sc.Spec.ControlPlaneEndpoint = ep }); err != nil {
		return err
	}
	return w.updateStatus(ctx, sc, func() {
		sc.Status.Initialization.Provisioned = ptr.To(true)
		sc.Status.FailureDomains = fds
		sc.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Provisioned", LastTransitionTime: metav1.Now()}}
	})
}

func (w *world) controlPlaneInitializedAt(ctx context.Context, name, endpoint string) error {
	ep, err := parseEndpoint(endpoint)
	if err != nil {
		return err
	}
	cp := &simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := w.updateSpec(ctx, cp, func() { cp.Spec.ControlPlaneEndpoint = ep }); err != nil {
		return err
	}
	return w.updateStatus(ctx, cp, func() { cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true) })
}

func (w *world) clusterPhase(ctx context.Context, name, phase string) error {
	return w.clusterStatusIs(ctx, name, "phase", phase, func(c *clusterv1.Cluster) string { return c.Status.Phase })
}

func (w *world) clusterInState(ctx context.Context, name, state string) error {
	return w.clusterStatusIs(ctx, name, "state", state, func(c *clusterv1.Cluster) string { return c.Status.State })
}

// clusterStatusIs waits until the Cluster's status field what reads want.
func (w *world) clusterStatusIs(ctx context.Context, name, what, want string, get func(*clusterv1.Cluster) string) error {
	return w.eventually(ctx, "Cluster "+name+" in "+what+" "+want, func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		if got := get(c); got != want {
			return fmt.Errorf("Cluster %s is in %s %q (phase %s, state %s)", name, what, got, c.Status.Phase, c.Status.State)
		}
		return nil
	})
}

func (w *world) clusterEndpoint(ctx context.Context, name, endpoint string) error {
	return w.eventually(ctx, "Cluster "+name+" endpoint "+endpoint, func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		got := ""
		if ep := c.Spec.ControlPlaneEndpoint; ep.Host != "" || ep.Port != 0 {
			got = net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
		}
		if got != endpoint {
			return fmt.Errorf("Cluster %s has the control plane endpoint %q", name, got)
		}
		return nil
	})
}

// clusterFailureDomains: status.failureDomains names the domains, in
// order, each written as in the provider step.
func (w *world) clusterFailureDomains(ctx context.Context, name, want string) error {
	return w.eventually(ctx, "Cluster "+name+" failure domains", func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		var got []string
		for _, fd := range c.Status.FailureDomains {
			n := fd.Name
			if ptr.Deref(fd.ControlPlane, false) {
				n += "*"
			}
			got = append(got, n)
		}
		if strings.Join(got, ", ") != want {
			return fmt.Errorf("Cluster %s reports the failure domains %q", name, strings.Join(got, ", "))
		}
		return nil
	})
}

func (w *world) clusterInfrastructureProvisioned(ctx context.Context, name string) error {
	return w.eventually(ctx, "Cluster "+name+" infrastructure provisioned", func(ctx context.Context) error {
		c, err := w.cluster1(ctx, name)
		if err != nil {
			return err
		}
		if !ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) {
			return fmt.Errorf("Cluster %s: status.initialization.infrastructureProvisioned is not true", name)
		}
		return nil
	})
}

func (w *world) referencedAdopted(ctx context.Context, kind, name, cluster string) error {
	return w.eventually(ctx, kind+" "+name+" adopted", func(ctx context.Context) error {
		c, err := w.cluster1(ctx, cluster)
		if err != nil {
			return err
		}
		var obj client.Object = &simv1.SimCluster{}
		if kind == "SimControlPlane" {
			obj = &simv1.SimControlPlane{}
		}
		if err := w.h.Client.Get(ctx, w.key(name), obj); err != nil {
			return err
		}
		if got := obj.GetLabels()[clusterv1.ClusterNameLabel]; got != cluster {
			return fmt.Errorf("%s %s has cluster-name label %q", kind, name, got)
		}
		for _, r := range obj.GetOwnerReferences() {
			if r.UID == c.UID && r.Kind == "Cluster" && !ptr.Deref(r.Controller, false) {
				return nil
			}
		}
		return fmt.Errorf("%s %s has owner references %v, none (not a controller) to Cluster %s", kind, name, obj.GetOwnerReferences(), cluster)
	})
}

func (w *world) providerHold(ctx context.Context, kind, name string, hold bool) error {
	var obj client.Object = &simv1.SimCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if kind == "SimControlPlane" {
		obj = &simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	return w.updateSpec(ctx, obj, func() {
		if hold {
			controllerutil.AddFinalizer(obj, providerHold)
		} else {
			controllerutil.RemoveFinalizer(obj, providerHold)
		}
	})
}

// simClusterDeleting checks whether the SimCluster has a deletionTimestamp:
// "not being" is checked once (it is said at a moment the Cluster's
// condition pins down), "being" waited for.
// deleteReferenced deletes a Cluster's infrastructure or control plane
// object behind its back, as a person or another controller might.
func (w *world) deleteReferenced(ctx context.Context, kind, name string) error {
	var obj client.Object = &simv1.SimCluster{}
	if kind == "SimControlPlane" {
		obj = &simv1.SimControlPlane{}
	}
	obj.SetNamespace(w.ns)
	obj.SetName(name)
	return w.h.Client.Delete(ctx, obj)
}

func (w *world) simClusterDeleting(ctx context.Context, name, being string) error {
	check := func(ctx context.Context) error {
		sc := &simv1.SimCluster{}
		if err := w.h.Client.Get(ctx, w.key(name), sc); err != nil {
			return err
		}
		if deleting := !sc.DeletionTimestamp.IsZero(); deleting != (being == "being") {
			return fmt.Errorf("SimCluster %s: deletionTimestamp %v", name, sc.DeletionTimestamp)
		}
		return nil
	}
	if being != "being" {
		return check(ctx)
	}
	return w.eventually(ctx, "SimCluster "+name+" being deleted", check)
}
