package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/krtt-dev/krtt/actions"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	krttexplain "github.com/krtt-dev/krtt/engine/explain"
)

// pluginName is what krtt is called as a kubectl plugin: a binary named
// kubectl-krtt on the PATH makes `kubectl krtt ...` run it with the same
// arguments, so the commands behave the same either way.
const pluginName = "kubectl-krtt"

// invokedAs is how the user called krtt, for help texts.
func invokedAs() string {
	if filepath.Base(os.Args[0]) == pluginName {
		return "kubectl krtt"
	}
	return "krtt"
}

// explainNow is the clock of krtt explain (tests may fix it).
var explainNow = time.Now

// explainCmd: krtt explain machine NAME | krtt explain table TABLE
func explainCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain machine NAME | explain machineset NAME | explain machinedeployment NAME | explain cluster NAME | explain table TABLE",
		Short: "Explain why a Machine, MachineSet, MachineDeployment or Cluster is where it is, or list a table's rows and their coverage",
		Long: `explain machine observes a Machine exactly as the operator does (same
observers, same facts), asks the Machine tables which row fires and prints
that row, why every other row of the state does not fire, what the Machine
waits on (start time, timeout, hooks, the Deleting condition), which single
fact change would make another row fire, and its last Events. It only reads:
no row's actions are run.

explain machineset does the same for a MachineSet, with its counts
(desired, working, failed, being deleted, Ready, available) and limits
(maxUnhealthy, maxInFlight, the burst per reconcile, the freeze).

explain cluster does the same for a Cluster; while it is being deleted it
names what the teardown waits on (MachineSets, Machines and the deletion
step each Machine is in).
explain machinedeployment does the same for a MachineDeployment: which step
its rollout is in, what it waits on, and each MachineSet's revision,
replicas, Machines and available Machines.

explain table lists a table's rows with the scenarios that cover them.

krtt also works as a kubectl plugin:

  ln -s "$PWD/bin/krtt" ~/bin/kubectl-krtt   # any directory on the PATH
  kubectl krtt explain machine m1 -n default`,
	}
	for _, c := range actions.Controllers {
		if c.Explain != nil {
			cmd.AddCommand(explainObjectCmd(stdout, c))
		}
	}
	cmd.AddCommand(explainTableCmd(stdout, stderr))
	return cmd
}

// explainObjectCmd is krtt explain <resource> NAME for one controller's
// objects: the same flags, client and output for every kind.
func explainObjectCmd(stdout io.Writer, ctl actions.Controller) *cobra.Command {
	resource, setName, explain := ctl.Name, ctl.Name, ctl.Explain
	kind := reflect.TypeOf(ctl.Object).Elem().Name()
	var namespace, kubeconfig, kubecontext, output, tables string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   resource + " NAME [-n NAMESPACE] [--kubeconfig FILE] [--context NAME] [-o text|json] [--tables DIR]",
		Short: ctl.Help,
		Example: fmt.Sprintf(`  krtt explain %[1]s m1 -n default
  kubectl krtt explain %[1]s m1 -n default -o json`, resource),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s explain %s needs exactly one NAME", invokedAs(), resource)
			}
			if output != "text" && output != "json" {
				return usagef("unknown -o %q: use text or json", output)
			}
			set, err := actions.Load(setName, tables)
			if err != nil {
				return err
			}
			c, ns, err := explainClient(kubeconfig, kubecontext)
			if err != nil {
				return err
			}
			if namespace != "" {
				ns = namespace
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			rep, err := explain(ctx, c, set, client.ObjectKey{Namespace: ns, Name: args[0]}, explainNow().UTC())
			if err != nil {
				return err
			}
			if output == "json" {
				if err := rep.JSON(stdout); err != nil {
					return err
				}
			} else {
				rep.Text(stdout)
			}
			if !rep.Found {
				return exitCode(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the "+kind+"'s namespace (default: the kubeconfig context's, else default)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	cmd.Flags().StringVar(&kubecontext, "context", "", "kubeconfig context to use")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&tables, "tables", "", "load the "+kind+" tables from DIR instead of the embedded ones")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up reading the cluster after this long")
	return cmd
}

// explainClient builds a direct (uncached) client the way kubectl finds its
// configuration, and returns the context's namespace.
func explainClient(kubeconfig, kubecontext string) (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubecontext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	c, err := client.New(cfg, client.Options{Scheme: actions.Scheme()})
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}

func explainTableCmd(stdout, stderr io.Writer) *cobra.Command {
	var coverage, features, output, tables string
	cmd := &cobra.Command{
		Use:   "table TABLE [--features DIR | --coverage FILE] [--tables DIR] [-o text|json]",
		Short: "List a table's rows with the scenarios that cover them",
		Long: `table prints every row of a Machine or MachineSet table: id, the states it applies in,
its when clause, what it does and the state it leads to, and which scenarios
cover it: by default the scenarios of --features DIR (default features) whose
@row:<table>:<row> tags name the row (the Gherkin suite fails when a tagged row
does not fire), or the links of --coverage FILE (a JSON file of the form
{"table": {"ROW": ["features/x.feature:12 scenario name"]}}). When neither can
be read, coverage is reported as unknown.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s explain table needs exactly one TABLE", invokedAs())
			}
			if output != "text" && output != "json" {
				return usagef("unknown -o %q: use text or json", output)
			}
			set, err := tableSetOf(stderr, args[0], tables)
			if err != nil {
				return err
			}
			var cov coverageFile
			if coverage != "" {
				cov, err = readCoverage(coverage)
				if errors.Is(err, fs.ErrNotExist) {
					cov, err = nil, nil
				}
			} else if _, statErr := os.Stat(features); statErr == nil {
				cov, err = coverageFromFeatures(features, ".")
			}
			if err != nil {
				return err
			}
			rep, err := krttexplain.Table(set, args[0], cov)
			if err != nil {
				return usageError{err}
			}
			if output == "json" {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			rep.Text(stdout)
			return nil
		},
	}
	cmd.Flags().StringVar(&features, "features", "features", "directory of .feature files whose @row tags give coverage")
	cmd.Flags().StringVar(&coverage, "coverage", "", "JSON file mapping table → row → scenarios, instead of --features; a missing file means coverage unknown")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&tables, "tables", "", "load the tables from DIR instead of the embedded ones (findings that are errors refuse it; warnings are printed)")
	return cmd
}

// tableSetOf returns the set that has the table (or decision table): of
// krtt's embedded sets, or of the tables in dir, checked with the catalogs,
// whose warnings it prints to w; a table no set has is reported against
// the first set.
func tableSetOf(w io.Writer, table, dir string) (*engine.TableSet, error) {
	if dir == "" && catalogFile == "" {
		sets, err := actions.LoadSets("")
		if err != nil {
			return nil, err
		}
		for _, c := range actions.Controllers {
			if s := sets[c.Name]; s.Table(table) != nil || s.Decision(table) != nil {
				return s, nil
			}
		}
		return sets[actions.Controllers[0].Name], nil
	}
	if dir == "" {
		return nil, usagef("--catalog describes your registries: give your tables with --tables DIR")
	}
	cats, err := catalogs()
	if err != nil {
		return nil, err
	}
	lib, err := loadChecked(w, cats, []string{dir})
	if err != nil {
		return nil, err
	}
	if len(lib.Sets) == 0 {
		return nil, fmt.Errorf("no TableSet in %s", dir)
	}
	for _, s := range lib.Sets {
		if s.Table(table) != nil || s.Decision(table) != nil {
			return s, nil
		}
	}
	return lib.Sets[0], nil
}
