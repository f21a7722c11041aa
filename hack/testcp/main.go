// Command testcp runs a command (make test: `go test ./...`) against control
// planes shared by every test package: it starts the management cluster and
// the one playing workload clusters (test/framework/localcp), names their admin
// kubeconfigs in $KRTT_TEST_KUBECONFIG and $KRTT_TEST_WORKLOAD_KUBECONFIG,
// runs the command, stops both and exits with the command's status. Each
// package's TestMain takes them through localcp.ForTest and
// localcp.WorkloadForTest instead of starting its own (about 10 s of CPU
// each), keeping apart by namespaces and the watch-filter label.
//
//	go run ./hack/testcp -- go test ./...
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/testcp -- command [args...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	// envtest logs through controller-runtime; the command's own lines say
	// what matters.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(run(flag.Args()))
}

func run(args []string) int {
	dir, err := os.MkdirTemp("", "krtt-testcp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcp:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	// Interrupts reach the command too (same process group); testcp waits
	// for it to end, then stops the control planes.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)

	env := os.Environ()
	for _, cp := range []struct{ name, env string }{{"management", localcp.SharedEnv}, {"workload", localcp.SharedWorkloadEnv}} {
		c, err := localcp.Start(localcp.Options{Dir: filepath.Join(dir, cp.name), Port: -1})
		if err != nil {
			fmt.Fprintf(os.Stderr, "testcp: start the shared %s control plane: %v\n", cp.name, err)
			return 1
		}
		defer func() {
			if err := c.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "testcp: stop the shared %s control plane: %v\n", cp.name, err)
			}
		}()
		fmt.Fprintf(os.Stderr, "testcp: shared %s control plane at %s (%s=%s)\n", cp.name, c.URL, cp.env, c.Kubeconfig)
		env = append(env, cp.env+"="+c.Kubeconfig)
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "testcp:", err)
		return 1
	}
	return 0
}
