package localcp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/test/framework/leakcheck"
)

// The control planes `make test` shares between test packages (hack/testcp
// starts them before `go test ./...` and stops them after): the environment
// variables name their admin kubeconfigs. Unset, each package starts its own.
const (
	// SharedEnv names the kubeconfig of the shared management cluster.
	SharedEnv = "KRTT_TEST_KUBECONFIG"
	// SharedWorkloadEnv names the kubeconfig of the shared control plane that
	// plays workload clusters.
	SharedWorkloadEnv = "KRTT_TEST_WORKLOAD_KUBECONFIG"
)

// ForTest returns the control plane a test package runs against: the shared
// one when $KRTT_TEST_KUBECONFIG is set (Stop then only lets go of it), else
// a throw-away one of its own in a temporary directory (Stop removes it), so
// `go test ./pkg` works alone. Either way the krtt CRDs are installed; tests
// keep apart on a shared one by fresh namespaces (UniqueName) and the
// watch-filter label (test/framework/harness).
func ForTest() (*ControlPlane, error) { return forTest(SharedEnv) }

// OwnForTest returns a throw-away control plane of the caller's own, even
// under a shared one: for a test package that changes what every package
// shares (it stops serving a krtt CRD for a while), which would break the
// other packages' requests on a shared control plane.
func OwnForTest() (*ControlPlane, error) { return forTest("") }

// RunTests is a test package's TestMain around ForTest: it takes the
// control plane, hands it to setup (which keeps it in the package's
// variables and prepares what every test needs; nil: nothing to prepare),
// runs the tests unless that failed, fails them when controllers or
// informers are left running (leakcheck.AfterAll), lets the control plane
// go and returns the exit code for os.Exit. m is the *testing.M, as an interface so the
// binaries importing localcp do not link the testing package.
//
//	func TestMain(m *testing.M) {
//		os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error { env = cp; return nil }))
//	}
func RunTests(m interface{ Run() int }, setup func(*ControlPlane) error) int {
	cp, err := ForTest()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop control plane:", err)
		}
	}()
	if setup != nil {
		if err := setup(cp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	// A manager or controller a test forgot to stop keeps reconciling
	// against the shared control planes through other packages' tests.
	if err := leakcheck.AfterAll(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// WorkloadForTest returns a control plane playing a workload cluster, the
// shared one when $KRTT_TEST_WORKLOAD_KUBECONFIG is set, else one of its own.
// StopAPIServer and StartAPIServer take it away from this process's clients
// and bring it back: on its own one they kill and restart kube-apiserver; on
// the shared one (which other packages keep using) they cut and restore a
// proxy in front of it, so the clients see the same refused connections.
func WorkloadForTest() (*ControlPlane, error) {
	cp, err := forTest(SharedWorkloadEnv)
	if err != nil || cp.env != nil {
		return cp, err
	}
	return cp.behindProxy()
}

func forTest(env string) (*ControlPlane, error) {
	if path := os.Getenv(env); path != "" {
		cp, err := Connect(path)
		if err != nil {
			return nil, fmt.Errorf("localcp: the shared control plane of $%s: %w", env, err)
		}
		return cp, nil
	}
	dir, err := os.MkdirTemp("", "krtt-test-")
	if err != nil {
		return nil, err
	}
	cp, err := Start(Options{Dir: dir, Port: -1})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cp.tempDir = true
	return cp, nil
}

// Connect returns a ControlPlane for one already running (started by another
// process) from its admin kubeconfig. Stop does not stop it.
func Connect(kubeconfig string) (*ControlPlane, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{Kubeconfig: kubeconfig, Config: cfg, URL: cfg.Host, Scheme: Scheme(), Resumed: true}
	if cp.Client, err = client.New(cfg, client.Options{Scheme: cp.Scheme}); err != nil {
		return nil, err
	}
	return cp, nil
}

// behindProxy returns a copy of a connected control plane whose clients go
// through a proxy of their own (see WorkloadForTest).
func (cp *ControlPlane) behindProxy() (*ControlPlane, error) {
	p, err := NewProxy(strings.TrimPrefix(cp.URL, "https://"))
	if err != nil {
		return nil, err
	}
	out := *cp
	out.Config = rest.CopyConfig(cp.Config)
	out.Config.Host = "https://" + p.Addr()
	out.URL = out.Config.Host
	out.proxy = p
	if out.Client, err = client.New(out.Config, client.Options{Scheme: out.Scheme}); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return &out, nil
}

var (
	runToken = newRunToken()
	nameSeq  atomic.Int64
)

// UniqueName returns base followed by a token unique to this test process
// and a sequence number: namespaces (and the Nodes named after them) of test
// packages sharing a control plane never meet, and -count=N gets fresh ones.
func UniqueName(base string) string {
	return fmt.Sprintf("%s-%s-%d", base, runToken, nameSeq.Add(1))
}

// RunToken is the token UniqueName puts in names, unique to this process:
// label values that must differ between processes sharing a control plane
// (the watch-filter of each package's operator) use it too.
func RunToken() string { return runToken }

func newRunToken() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err)
		}
		b[i] = alphabet[n.Int64()]
	}
	return string(b)
}
