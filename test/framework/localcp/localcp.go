// Package localcp is the one way krtt starts a Kubernetes control plane
// (etcd and kube-apiserver from bin/k8s, through controller-runtime envtest):
// for make run, the demo, the bench, the chaos suite and the tests
// (ForTest). Its state is kept in a directory, by default .krtt/: etcd data
// in .krtt/etcd survives restarts, an admin kubeconfig is written to
// .krtt/kubeconfig and the krtt CRDs are installed on every start.
package localcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

// ModulePath is the krtt module; Root looks for its go.mod.
const ModulePath = "github.com/krtt-dev/krtt"

// DefaultDir is where the state is kept unless Options.Dir says otherwise.
const DefaultDir = ".krtt"

// DefaultPort is the API server port used when it is free.
const DefaultPort = 6443

// Options configure Start.
type Options struct {
	// Dir keeps the state: etcd/ (data), kubeconfig, logs/. Default .krtt.
	Dir string
	// Fresh removes the state (Dir/etcd, Dir/kubeconfig, Dir/logs) first.
	Fresh bool
	// Port is the preferred secure port of the API server on 127.0.0.1:
	// 0 means DefaultPort, a negative value any free port. When the
	// preferred port is taken a free one is used instead.
	Port int
	// Root is the krtt checkout holding bin/k8s, config/crd/bases and config/sim/crd.
	// Default: found from the working directory, then from this source file.
	Root string
	// Log receives progress lines (nil: silent).
	Log io.Writer
	// Audit makes kube-apiserver log every write to the objects of a
	// Machine's deletion to ControlPlane.AuditLog (see configureAudit).
	Audit bool
	// EtcdProfiling makes etcd serve pprof at ControlPlane.EtcdURL +
	// "/debug/pprof" (krtt-bench -profile).
	EtcdProfiling bool
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	// Dir is the absolute state directory.
	Dir string
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// Config is the admin rest.Config (user krtt-admin, group system:masters).
	Config *rest.Config
	// Client is an admin client with the client-go and krtt types.
	Client client.Client
	// Scheme has the client-go, cluster.krtt.dev and sim.krtt.dev types.
	Scheme *runtime.Scheme
	// URL is the API server's address.
	URL string
	// Resumed is true when etcd data from an earlier run was found.
	Resumed bool
	// AuditLog is the audit log's path (Options.Audit), else "".
	AuditLog string
	// EtcdURL is etcd's client address (plain HTTP on loopback).
	EtcdURL string

	env     *envtest.Environment
	logs    []*os.File
	certDir string
	// tempDir: Dir is a temporary directory of ForTest, removed by Stop.
	tempDir bool
	// proxy, when set, stands between the clients and a shared API server
	// (WorkloadForTest).
	proxy *Proxy
}

// Scheme returns a scheme with the client-go types and both krtt API groups.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, clusterv1.AddToScheme, simv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// RepoRoot is Root for tests and their fixtures, which cannot run outside
// the checkout: it panics instead of returning an error.
func RepoRoot() string {
	root, err := Root()
	if err != nil {
		panic(err)
	}
	return root
}

// Root returns the krtt checkout: the first directory at or above the
// working directory whose go.mod declares the krtt module, else the one
// this source file was built from.
func Root() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := goruntime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if isKrttModule(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("localcp: no krtt checkout (go.mod of %s) at or above the working directory; run from the repository", ModulePath)
}

func isKrttModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest) == ModulePath
		}
	}
	return false
}

// Assets returns the directory holding kube-apiserver and etcd
// ($KUBEBUILDER_ASSETS or <root>/bin/k8s), or an error saying how to build
// them.
func Assets(root string) (string, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make tools` first (it builds bin/k8s/kube-apiserver and bin/k8s/etcd from source once, about 10 minutes)", bin, assets)
		}
	}
	return assets, nil
}

// Start starts etcd and kube-apiserver, installs the CRDs and writes the
// admin kubeconfig. Call Stop when done.
func Start(opts Options) (*ControlPlane, error) {
	root := opts.Root
	if root == "" {
		r, err := Root()
		if err != nil {
			return nil, err
		}
		root = r
	}
	assets, err := Assets(root)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			_, _ = fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	etcdDir := filepath.Join(dir, "etcd")
	if pids := processesUsing(etcdDir); len(pids) > 0 {
		return nil, fmt.Errorf("localcp: %s is in use by process %s (another krtt-local still running?): stop it first", etcdDir, joinInts(pids))
	}
	if opts.Fresh {
		// Only what this package owns: other tools keep their own state in
		// subdirectories (.krtt/demo, .krtt/bench).
		logf("fresh start: removing the cluster state in %s", dir)
		for _, name := range []string{"etcd", "kubeconfig", "logs"} {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("localcp: remove %s: %w", filepath.Join(dir, name), err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return nil, err
	}
	resumed := false
	if ents, err := os.ReadDir(etcdDir); err == nil && len(ents) > 0 {
		resumed = true
	}

	cp := &ControlPlane{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), Scheme: Scheme(), Resumed: resumed}
	openLog := func(name string) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(dir, "logs", name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			cp.logs = append(cp.logs, f)
		}
		return f, err
	}
	etcdLog, err := openLog("etcd.log")
	if err != nil {
		return nil, err
	}
	apiLog, err := openLog("kube-apiserver.log")
	if err != nil {
		cp.closeLogs()
		return nil, err
	}

	port, err := pickPort(opts.Port)
	if err != nil {
		cp.closeLogs()
		return nil, err
	}
	// A certificate directory of our own (not one envtest allocates and
	// forgets on Stop) lets RestartAPIServer bring kube-apiserver back
	// with the certificates the clients already trust.
	certDir, err := os.MkdirTemp("", "krtt-apiserver-")
	if err != nil {
		cp.closeLogs()
		return nil, err
	}
	cp.certDir = certDir
	api := &envtest.APIServer{Out: apiLog, Err: apiLog, CertDir: certDir}
	api.SecureServing.ListenAddr.Address = "127.0.0.1"
	api.SecureServing.ListenAddr.Port = strconv.Itoa(port)
	// As production clusters often do: setting blockOwnerDeletion then
	// needs update on the owner's finalizers (test/security relies on it;
	// admin clients are not affected).
	api.Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	if opts.Audit {
		if cp.AuditLog, err = configureAudit(api, dir); err != nil {
			cp.closeLogs()
			_ = os.RemoveAll(certDir)
			return nil, err
		}
	}
	etcd := newEtcd(etcdDir, etcdLog, opts.EtcdProfiling)
	env := &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			Etcd:      etcd,
			APIServer: api,
		},
		CRDDirectoryPaths:        []string{filepath.Join(root, "config", "crd", "bases"), filepath.Join(root, "config", "sim", "crd")},
		ErrorIfCRDPathMissing:    true,
		BinaryAssetsDirectory:    assets,
		Scheme:                   cp.Scheme,
		ControlPlaneStartTimeout: 60 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	if resumed {
		logf("starting etcd (state kept in %s) and kube-apiserver on 127.0.0.1:%d", etcdDir, port)
	} else {
		logf("starting etcd (new state in %s) and kube-apiserver on 127.0.0.1:%d", etcdDir, port)
	}
	start := time.Now()
	if _, err := env.Start(); err != nil {
		_ = env.Stop()
		cp.closeLogs()
		_ = os.RemoveAll(certDir)
		return nil, fmt.Errorf("localcp: start control plane (logs in %s): %w", filepath.Join(dir, "logs"), err)
	}
	cp.env = env
	cp.EtcdURL = etcd.URL.String()
	user, err := env.AddUser(envtest.User{Name: "krtt-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("localcp: add admin user: %w", err), cp.Stop())
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("localcp: admin kubeconfig: %w", err), cp.Stop())
	}
	kubeconfig = bytes.ReplaceAll(kubeconfig, []byte("envtest"), []byte("krtt-local"))
	if err := os.WriteFile(cp.Kubeconfig, kubeconfig, 0o600); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	cp.Config = user.Config()
	cp.URL = cp.Config.Host
	if cp.Client, err = client.New(cp.Config, client.Options{Scheme: cp.Scheme}); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	logf("control plane up at %s in %s; kubeconfig %s", cp.URL, time.Since(start).Round(100*time.Millisecond), cp.Kubeconfig)
	return cp, nil
}

// newEtcd is the control plane's etcd, keeping its data in dir and logging
// to log; with profiling it serves pprof at its client address +
// "/debug/pprof".
func newEtcd(dir string, log io.Writer, profiling bool) *envtest.Etcd {
	etcd := &envtest.Etcd{DataDir: dir, Out: log, Err: log}
	if profiling {
		etcd.Configure().Set("enable-pprof", "true")
	}
	return etcd
}

// Stop shuts kube-apiserver down, then etcd. The state directory stays,
// unless ForTest made it. A control plane of Connect is left running.
func (cp *ControlPlane) Stop() error {
	if cp == nil {
		return nil
	}
	var err error
	if cp.proxy != nil {
		err = cp.proxy.Close()
	}
	if cp.env != nil {
		err = cp.env.Stop()
		cp.env = nil
	}
	cp.closeLogs()
	if cp.certDir != "" {
		_ = os.RemoveAll(cp.certDir)
		cp.certDir = ""
	}
	if cp.tempDir {
		_ = os.RemoveAll(cp.Dir)
		cp.tempDir = false
	}
	return err
}

func (cp *ControlPlane) closeLogs() {
	for _, f := range cp.logs {
		_ = f.Close()
	}
	cp.logs = nil
}

// pickPort returns the preferred port when it is free on 127.0.0.1, else
// a free one.
func pickPort(preferred int) (int, error) {
	if preferred == 0 {
		preferred = DefaultPort
	}
	if preferred > 0 {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(preferred))); err == nil {
			_ = l.Close()
			return preferred, nil
		}
	}
	return FreePort()
}

// FreePort returns a port that is free on 127.0.0.1 right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// processesUsing lists the processes whose command line names dir (an etcd
// left running by a killed earlier run holds its data directory). Linux
// only; elsewhere it finds nothing.
func processesUsing(dir string) []int {
	return processesWithArg("--data-dir=" + dir)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
