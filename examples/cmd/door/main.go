// Command door runs the Door controller (package door) in a manager
// against the cluster of the current kubeconfig.
//
//	door                              run the controller
//	door -dump-catalog FILE           write the registries for krtt lint --catalog FILE
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/examples/door"
)

func main() {
	dump := flag.String("dump-catalog", "", "write the catalog of the Door's registries to FILE (- for stdout) and exit")
	flag.Parse()
	if err := run(*dump); err != nil {
		fmt.Fprintln(os.Stderr, "door:", err)
		os.Exit(1)
	}
}

func run(dump string) error {
	switch dump {
	case "":
	case "-":
		return engine.WriteCatalogs(os.Stdout, door.Catalogs())
	default:
		return engine.WriteCatalogFile(dump, door.Catalogs())
	}
	ctrl.SetLogger(zap.New())
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := door.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := door.Setup(mgr, door.Options{}); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
