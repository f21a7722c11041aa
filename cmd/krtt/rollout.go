package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/machinedeployment"
)

// rolloutCmd: krtt rollout status|history|undo|restart kmd/NAME, as kubectl
// rollout does for Deployments. It reads the deployment's status and
// MachineSets, or changes its spec as a user would.
func rolloutCmd(stdout io.Writer) *cobra.Command {
	var namespace, kubeconfig, kubecontext string
	var toRevision int64
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "rollout status|history|undo|restart kmd/NAME [-n NAMESPACE] [--to-revision N]",
		Short: "Show or steer a MachineDeployment's rollout (status, history, undo, restart)",
		Example: `  krtt rollout status kmd/workers -n default
  krtt rollout history kmd/workers
  krtt rollout undo kmd/workers --to-revision 1
  krtt rollout restart kmd/workers`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("%s rollout needs a verb and kmd/NAME", invokedAs())
			}
			kind, name, ok := strings.Cut(args[1], "/")
			if !ok || (kind != "kmd" && kind != "machinedeployment" && kind != "machinedeployments") || name == "" {
				return usagef("%s rollout works on kmd/NAME, not %q", invokedAs(), args[1])
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
			key := client.ObjectKey{Namespace: ns, Name: name}
			switch args[0] {
			case "status":
				msg, done, stuck, err := machinedeployment.RolloutStatus(ctx, c, key)
				if err != nil {
					return err
				}
				fmt.Fprintln(stdout, msg)
				if stuck || !done {
					return exitCode(1)
				}
			case "history":
				out, err := machinedeployment.History(ctx, c, key)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprint(tw, out)
				return tw.Flush()
			case "undo":
				rev, err := machinedeployment.Undo(ctx, c, key, toRevision)
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "MachineDeployment %s rolled back to the template of revision %d\n", name, rev)
			case "restart":
				if err := machinedeployment.Restart(ctx, c, key, time.Now()); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "MachineDeployment %s restarted: every Machine is replaced\n", name)
			default:
				return usagef("unknown rollout verb %q: use status, history, undo or restart", args[0])
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the MachineDeployment's namespace (default: the kubeconfig context's, else default)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	cmd.Flags().StringVar(&kubecontext, "context", "", "kubeconfig context to use")
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "undo: the revision to go back to (default: the one before the current)")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up talking to the cluster after this long")
	return cmd
}
