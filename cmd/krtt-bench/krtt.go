package main

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/test/framework/localcp"
)

func krttFlavour(root, operatorBin string, built bool) flavour {
	version := "krtt"
	if rev := binaryRevision(operatorBin); rev != "" {
		version += " " + rev
	} else if !built {
		// A binary built elsewhere (without VCS stamping): the checkout's
		// commit would say nothing about it.
		version += " (prebuilt " + operatorBin + ")"
	} else if out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output(); err == nil {
		version += " " + strings.TrimSpace(string(out))
	}
	return flavour{
		name:    "krtt",
		version: version,
		machine: clusterv1.GroupVersion.WithKind("Machine"),
		start: func(ctx context.Context, b *bench, ns string) (procs, error) {
			if len(b.clusters) == 0 {
				if err := b.client.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName}}); err != nil {
					return nil, err
				}
			}
			return startKrtts(b, operatorBin)
		},
		newMachine: func(ns, name string, controlPlane bool) *unstructured.Unstructured {
			bootstrap, infra := simRefs(name)
			labels := map[string]any{}
			if controlPlane {
				labels["cluster.krtt.dev/control-plane"] = ""
			}
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": clusterv1.GroupVersion.String(),
				"kind":       "Machine",
				"metadata":   map[string]any{"namespace": ns, "name": name, "labels": labels},
				"spec":       map[string]any{"clusterName": clusterName, "bootstrap": bootstrap, "infrastructureRef": infra},
			}}
		},
	}
}

// startKrtts starts the operator, or with -instances K one operator per
// instance, each with its --watch-filter.
func startKrtts(b *bench, bin string) (procs, error) {
	if b.o.instances <= 1 {
		p, err := startKrtt(b, bin, "")
		if err != nil {
			return nil, err
		}
		return procs{p}, nil
	}
	var ps procs
	for i := range b.o.instances {
		p, err := startKrtt(b, bin, instanceFilter(i))
		if err != nil {
			return nil, errors.Join(err, ps.stop())
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// startKrtt starts one operator process, managing the Machines and
// Clusters labelled filter (all when filter is empty).
func startKrtt(b *bench, bin, filter string) (*controllerProc, error) {
	mport, err := localcp.FreePort()
	if err != nil {
		return nil, err
	}
	pport, err := localcp.FreePort()
	if err != nil {
		return nil, err
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", mport)
	probe := fmt.Sprintf("127.0.0.1:%d", pport)
	// controller-runtime's default config has no client-side rate limit
	// (QPS -1), so krtt needs no flag for that.
	name, args := "krtt-operator", []string{
		"--kubeconfig", b.cp.Kubeconfig,
		"--metrics-bind-address", metrics,
		// Plain HTTP on loopback: the bench scrapes without a token.
		"--metrics-secure=false",
		"--health-probe-bind-address", probe,
		"--machine-concurrency", strconv.Itoa(b.o.concurrency),
		"--zap-log-level", "error",
		// The bench's Clusters have no kubeconfig Secret: their Nodes are
		// the simulated provider's, in the bench's control plane.
		"--self-hosted-clusters",
	}
	if b.o.workloadClusters > 0 {
		args = append(args, "--workload-client-qps", strconv.FormatFloat(b.o.workloadQPS, 'g', -1, 64))
	}
	if filter != "" {
		name += "-" + filter
		args = append(args, "--watch-filter", filter)
	}
	args, pprof, err := withProfiler(b, args)
	if err != nil {
		return nil, err
	}
	p, err := startProc(name, bin, args, "http://"+metrics+"/metrics", "http://"+probe+"/readyz", filepath.Join(b.cp.Dir, "logs", name+".log"))
	if err != nil {
		return nil, err
	}
	p.filter, p.pprof = filter, pprof
	if err := p.waitReady(time.Minute); err != nil {
		return nil, errors.Join(err, p.stop())
	}
	return p, nil
}

// binaryRevision is the commit the operator binary was built from, as Go
// recorded it (none under -buildvcs=false): with -operator and -build=false the binary may come from
// another checkout than the bench, and the report must name what ran.
func binaryRevision(bin string) string {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return ""
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}
