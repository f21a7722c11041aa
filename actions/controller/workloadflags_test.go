package controller

import (
	"flag"
	"io"
	"testing"

	"github.com/krtt-dev/krtt/internal/remote"
)

// TestBindWorkloadClientFlags: the defaults are Cluster API's, and both
// flags reach the options.
func TestBindWorkloadClientFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := BindWorkloadClientFlags(fs)
	if got := opts(); got.ClientQPS != remote.DefaultClientQPS || got.ClientBurst != remote.DefaultClientBurst {
		t.Errorf("defaults: %+v", got)
	}
	if err := fs.Parse([]string{"--workload-client-qps=-1", "--workload-client-burst=7"}); err != nil {
		t.Fatal(err)
	}
	if got := opts(); got.ClientQPS != -1 || got.ClientBurst != 7 {
		t.Errorf("set: %+v", got)
	}
	if err := fs.Parse([]string{"--workload-client-burst=many"}); err == nil {
		t.Error("a burst that is not a number was taken")
	}
}
