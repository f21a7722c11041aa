package security

import (
	"fmt"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// that config/prometheus sets (its module is not a dependency of krtt).
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port            string `json:"port"`
			Path            string `json:"path"`
			Scheme          string `json:"scheme"`
			BearerTokenFile string `json:"bearerTokenFile"`
			TLSConfig       struct {
				InsecureSkipVerify bool `json:"insecureSkipVerify"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// The ServiceMonitor reaches the Deployment's metrics port over HTTPS with
// a token: its selector picks the metrics Service, whose selector picks the
// operator's Pods and whose port leads to the container's metrics port,
// which the manager is told to serve on.
func TestServiceMonitorReachesTheMetricsPort(t *testing.T) {
	root := localcp.RepoRoot()
	dep := documents[appsv1.Deployment](t, filepath.Join(root, "config", "manager", "manager.yaml"), "Deployment")[0]
	svcs := documents[corev1.Service](t, filepath.Join(root, "config", "manager", "metrics_service.yaml"), "Service")
	sms := documents[serviceMonitor](t, filepath.Join(root, "config", "prometheus", "monitor.yaml"), "ServiceMonitor")
	if len(svcs) != 1 || len(sms) != 1 {
		t.Fatalf("want one metrics Service and one ServiceMonitor, found %d and %d", len(svcs), len(sms))
	}
	svc, sm := svcs[0], sms[0]
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) {
		t.Errorf("the Service's selector %v does not pick the operator's Pods %v", svc.Spec.Selector, dep.Spec.Template.Labels)
	}
	if sm.Metadata.Namespace != svc.Namespace || !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
		t.Errorf("the ServiceMonitor (%s, %v) does not pick the Service %s/%s %v", sm.Metadata.Namespace, sm.Spec.Selector.MatchLabels, svc.Namespace, svc.Name, svc.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 || len(svc.Spec.Ports) != 1 {
		t.Fatalf("want one endpoint and one Service port")
	}
	ep, port := sm.Spec.Endpoints[0], svc.Spec.Ports[0]
	if ep.Port != port.Name || ep.Scheme != "https" || ep.Path != "/metrics" || ep.BearerTokenFile == "" {
		t.Errorf("the endpoint %+v does not scrape https://<%s>/metrics with a token", ep, port.Name)
	}
	var container *corev1.ContainerPort
	for _, c := range dep.Spec.Template.Spec.Containers {
		for i := range c.Ports {
			if c.Ports[i].Name == port.TargetPort.String() {
				container = &c.Ports[i]
			}
		}
	}
	if container == nil {
		t.Fatalf("the Service's targetPort %s names no container port", port.TargetPort.String())
	}
	found := false
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if a == fmt.Sprintf("--metrics-bind-address=:%d", container.ContainerPort) {
			found = true
		}
		if a == "--metrics-secure=false" {
			t.Error("the Deployment serves metrics without authentication")
		}
	}
	if !found {
		t.Errorf("the manager is not told to serve metrics on the container port %d: %v", container.ContainerPort, dep.Spec.Template.Spec.Containers[0].Args)
	}
}
