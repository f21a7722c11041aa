package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// Cluster API v1beta2 names the bench needs (it reads and writes Cluster
// API objects as unstructured: Cluster API is never a dependency of krtt).
var (
	capiCluster = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}
	capiMachine = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"}
	crdGVK      = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

const (
	capiClusterNameLabel  = "cluster.x-k8s.io/cluster-name"
	capiControlPlaneLabel = "cluster.x-k8s.io/control-plane"
	// capiContractLabel on a provider CRD tells Cluster API which of the
	// provider's API versions implements its v1beta2 contract.
	capiContractLabel = "cluster.x-k8s.io/v1beta2"
	// capiMinServer is the oldest API server Cluster API v1.14 starts against.
	capiMinServer = "v1.20.0"
)

type capiOptions struct {
	manager string // binary of sigs.k8s.io/cluster-api/core
	crds    string // its core/config/crd/bases
	version string
}

// capiVersion reads the Cluster API version hack/capi pins.
func capiVersion(root string) string {
	f, err := os.Open(filepath.Join(root, "hack", "capi", "go.mod"))
	if err != nil {
		return "cluster-api"
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "sigs.k8s.io/cluster-api" {
			return "cluster-api " + fields[1]
		}
	}
	return "cluster-api"
}

// capiCRDDir finds core/config/crd/bases of the Cluster API module hack/capi
// requires (in the Go module cache once hack/capi was built).
func capiCRDDir(root string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api")
	cmd.Dir = filepath.Join(root, "hack", "capi")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("find the Cluster API module of hack/capi (`go list -m` there): %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "core", "config", "crd", "bases"), nil
}

// capiCanRun says why Cluster API cannot run against this API server, or nil.
func capiCanRun(serverVersion string, o capiOptions) error {
	v, err := utilversion.ParseGeneric(serverVersion)
	if err != nil {
		return fmt.Errorf("kube-apiserver reports version %q, which is not a version: Cluster API checks it and will not start", serverVersion)
	}
	if !v.AtLeast(utilversion.MustParseGeneric(capiMinServer)) {
		return fmt.Errorf("kube-apiserver reports %s and Cluster API refuses API servers older than %s. "+
			"A kube-apiserver built without version ldflags says v0.0.0: `make kube-apiserver-version` relinks bin/k8s/kube-apiserver with them (make bench-peer does so first)",
			serverVersion, capiMinServer)
	}
	if _, err := os.Stat(o.manager); err != nil {
		return fmt.Errorf("Cluster API manager: %w (make bench-peer builds it into bin/capi-manager)", err)
	}
	if _, err := os.Stat(o.crds); err != nil {
		return fmt.Errorf("Cluster API CRDs: %w", err)
	}
	return nil
}

func capiFlavour(o capiOptions) flavour {
	return flavour{
		name:    "capi",
		version: o.version,
		machine: capiMachine,
		start: func(ctx context.Context, b *bench, ns string) (procs, error) {
			if err := capiCanRun(b.serverVersion, o); err != nil {
				return nil, err
			}
			if err := capiPrepare(ctx, b, o, ns); err != nil {
				return nil, err
			}
			p, err := startCAPI(b, o)
			if err != nil {
				return nil, err
			}
			if err := waitRemoteConnection(ctx, b.client, ns, 2*time.Minute); err != nil {
				return nil, errors.Join(err, p.stop())
			}
			return procs{p}, nil
		},
		newMachine: func(ns, name string, controlPlane bool) *unstructured.Unstructured {
			bootstrap, infra := simRefs(name)
			// Without Cluster API's webhooks nothing defaults a Machine: set
			// what its defaulting webhook would.
			labels := map[string]any{capiClusterNameLabel: clusterName}
			if controlPlane {
				labels[capiControlPlaneLabel] = ""
			}
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": capiMachine.GroupVersion().String(),
				"kind":       capiMachine.Kind,
				"metadata":   map[string]any{"namespace": ns, "name": name, "labels": labels},
				"spec": map[string]any{
					"clusterName": clusterName, "bootstrap": bootstrap, "infrastructureRef": infra,
					"deletion": map[string]any{"nodeDeletionTimeoutSeconds": int64(10)},
				},
			}}
		},
	}
}

// capiPrepare installs Cluster API's CRDs, labels the sim CRDs with the
// contract version, and creates the Cluster and the kubeconfig Secret that
// makes the workload cluster this same API server.
func capiPrepare(ctx context.Context, b *bench, o capiOptions, ns string) error {
	logf("installing the Cluster API CRDs from %s", o.crds)
	if _, err := envtest.InstallCRDs(b.cp.Config, envtest.CRDInstallOptions{Paths: []string{o.crds}, ErrorIfPathMissing: true, MaxTime: time.Minute}); err != nil {
		return fmt.Errorf("install the Cluster API CRDs: %w", err)
	}
	for _, name := range []string{"simmachines.sim.krtt.dev", "simbootstrapconfigs.sim.krtt.dev"} {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		crd.SetName(name)
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"v1alpha1"}}}`, capiContractLabel)
		if err := b.client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return fmt.Errorf("label CRD %s for the Cluster API contract: %w", name, err)
		}
	}
	u, err := url.Parse(b.cp.URL)
	if err != nil {
		return err
	}
	port, err := strconv.ParseInt(u.Port(), 10, 32)
	if err != nil {
		return fmt.Errorf("API server URL %s: %w", b.cp.URL, err)
	}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": capiCluster.GroupVersion().String(),
		"kind":       capiCluster.Kind,
		"metadata":   map[string]any{"namespace": ns, "name": clusterName},
		// No infrastructureRef: the Cluster controller then reports the
		// infrastructure provisioned, which lets the cluster cache connect.
		"spec": map[string]any{"controlPlaneEndpoint": map[string]any{"host": u.Hostname(), "port": port}},
	}}
	if err := b.client.Create(ctx, cluster); err != nil {
		return fmt.Errorf("create the Cluster API Cluster: %w", err)
	}
	kubeconfig, err := os.ReadFile(b.cp.Kubeconfig)
	if err != nil {
		return err
	}
	// The manager caches only Secrets labelled with a cluster name.
	return b.client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName + "-kubeconfig",
			Labels: map[string]string{capiClusterNameLabel: clusterName}},
		Type: "cluster.x-k8s.io/secret",
		Data: map[string][]byte{"value": kubeconfig},
	})
}

// capiProcName names Cluster API's manager process (its log, its profiles).
const capiProcName = "capi-manager"

func startCAPI(b *bench, o capiOptions) (*controllerProc, error) {
	var ports [3]int
	for i := range ports {
		p, err := localcp.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	certDir := filepath.Join(b.cp.Dir, "capi-webhook-certs")
	if err := writeSelfSignedCert(certDir); err != nil {
		return nil, fmt.Errorf("webhook certificate: %w", err)
	}
	diag := fmt.Sprintf("127.0.0.1:%d", ports[0])
	health := fmt.Sprintf("127.0.0.1:%d", ports[1])
	args := []string{
		"--kubeconfig", b.cp.Kubeconfig,
		"--diagnostics-address", diag, "--insecure-diagnostics",
		"--health-addr", health,
		"--webhook-port", strconv.Itoa(ports[2]), "--webhook-cert-dir", certDir,
		"--machine-concurrency", strconv.Itoa(b.o.concurrency),
		// Client-side rate limits off, as krtt's are: the API server is
		// what both are measured against.
		"--kube-api-qps", "-1", "--clustercache-client-qps", "-1",
	}
	args, pprof, err := withProfiler(b, args)
	if err != nil {
		return nil, err
	}
	p, err := startProc(capiProcName, o.manager, args, "http://"+diag+"/metrics", "http://"+health+"/readyz", filepath.Join(b.cp.Dir, "logs", capiProcName+".log"))
	if err != nil {
		return nil, err
	}
	p.pprof = pprof
	if err := p.waitReady(2 * time.Minute); err != nil {
		return nil, errors.Join(err, p.stop())
	}
	return p, nil
}

// waitRemoteConnection waits until Cluster API reaches the workload
// cluster (RemoteConnectionProbe=True on the Cluster); before that no
// Machine can get its Node.
func waitRemoteConnection(ctx context.Context, c client.Reader, ns string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(capiCluster)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, u); err != nil {
			return err
		}
		status, reason := condition(u, "RemoteConnectionProbe")
		if status == "True" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Cluster API did not connect to the workload cluster (this API server) within %s: RemoteConnectionProbe=%q (%s)", timeout, status, reason)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
}

// condition returns status and reason of a status.conditions entry.
func condition(u *unstructured.Unstructured, typ string) (string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		return s, r
	}
	return "", "not reported yet"
}
