package features

import (
	"context"
	"fmt"

	"github.com/cucumber/godog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// registerPreflightSteps: the control plane versions a MachineSet's
// preflight checks compare, played as the control plane provider would
// report them, and the annotation that skips checks.
func registerPreflightSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the control plane of the Cluster "([^"]*)" asks for version "([^"]*)" and reports version "([^"]*)"$`, w.controlPlaneVersions)
	sc.Step(`^the control plane of the Cluster "([^"]*)" reports version "([^"]*)"$`, w.controlPlaneReportsVersion)
	sc.Step(`^the annotation "([^"]*)" is set to "([^"]*)" on the MachineSet "([^"]*)"$`, w.setMachineSetAnnotation)
}

// controlPlaneOf is the SimControlPlane the Cluster's controlPlaneRef names.
func (w *world) controlPlaneOf(ctx context.Context, cluster string) (*simv1.SimControlPlane, error) {
	c, err := w.cluster1(ctx, cluster)
	if err != nil {
		return nil, err
	}
	if c.Spec.ControlPlaneRef == nil {
		return nil, fmt.Errorf("the Cluster %s names no control plane", cluster)
	}
	return &simv1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Name: c.Spec.ControlPlaneRef.Name}}, nil
}

func (w *world) controlPlaneVersions(ctx context.Context, cluster, spec, status string) error {
	cp, err := w.controlPlaneOf(ctx, cluster)
	if err != nil {
		return err
	}
	if err := w.updateSpec(ctx, cp, func() { cp.Spec.Version = spec }); err != nil {
		return err
	}
	return w.updateStatus(ctx, cp, func() { cp.Status.Version = status })
}

func (w *world) controlPlaneReportsVersion(ctx context.Context, cluster, status string) error {
	cp, err := w.controlPlaneOf(ctx, cluster)
	if err != nil {
		return err
	}
	return w.updateStatus(ctx, cp, func() { cp.Status.Version = status })
}

func (w *world) setMachineSetAnnotation(ctx context.Context, key, value, set string) error {
	return w.updateMachineSet(ctx, set, func(ms *clusterv1.MachineSet) {
		if ms.Annotations == nil {
			ms.Annotations = map[string]string{}
		}
		ms.Annotations[key] = value
	})
}
