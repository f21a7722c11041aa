// Package testenv starts a throw-away kube-apiserver and etcd (via
// controller-runtime envtest) with the krtt CRDs installed, for tests.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	simv1 "github.com/krtt-dev/krtt/api/sim/v1alpha1"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Env is a running test control plane.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme

	env *envtest.Environment
}

// RepoRoot returns the directory holding the main module's go.mod, found by
// walking up from this source file.
func RepoRoot() string {
	_, file, _, ok := goruntime.Caller(0)
	if !ok {
		panic("testenv: cannot locate source file")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testenv: no go.mod above " + filepath.Dir(file))
		}
		dir = parent
	}
}

// NewScheme returns a scheme with the client-go types and both krtt API
// groups.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, clusterv1.AddToScheme, simv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Start starts kube-apiserver and etcd from $KUBEBUILDER_ASSETS (or
// <repo>/bin/k8s), installs the CRDs from <repo>/config/crd/bases and
// returns a client for it. Call Stop when done.
func Start() (*Env, error) {
	root := RepoRoot()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("testenv: %s not found in %s: run `make test` (or `make tools`) to build bin/k8s/kube-apiserver and bin/k8s/etcd", bin, assets)
		}
	}

	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	e := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                s,
	}
	cfg, err := e.Start()
	if err != nil {
		return nil, fmt.Errorf("testenv: start control plane: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("testenv: new client: %w", err), e.Stop())
	}
	return &Env{Config: cfg, Client: c, Scheme: s, env: e}, nil
}

// Stop shuts the control plane down.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	return e.env.Stop()
}
