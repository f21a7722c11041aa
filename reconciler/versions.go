package reconciler

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/version"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// MachineVersions counts machines by the Kubernetes version each runs: the
// kubelet's version its Node reports, else spec.version; a Machine with
// neither is not counted (Cluster API's VersionsFromMachines).
func MachineVersions(machines []*clusterv1.Machine) []clusterv1.StatusVersion {
	counts := map[string]int32{}
	for _, m := range machines {
		v := m.Spec.Version
		if m.Status.NodeInfo != nil && m.Status.NodeInfo.KubeletVersion != "" {
			v = m.Status.NodeInfo.KubeletVersion
		}
		if v != "" {
			counts[v]++
		}
	}
	return sortedVersions(counts)
}

// SumVersions adds version counts up, as Cluster API's
// AggregateStatusVersions does for a deployment's MachineSets or a
// Cluster's workers.
func SumVersions(lists ...[]clusterv1.StatusVersion) []clusterv1.StatusVersion {
	counts := map[string]int32{}
	for _, l := range lists {
		for _, v := range l {
			if v.Version != "" {
				counts[v.Version] += v.Replicas
			}
		}
	}
	return sortedVersions(counts)
}

// sortedVersions lists counts lowest version first: by semantic version where
// both parse, those that do not after them, then by the text (nil for none).
func sortedVersions(counts map[string]int32) []clusterv1.StatusVersion {
	if len(counts) == 0 {
		return nil
	}
	parsed := map[string]*version.Version{}
	for v := range counts {
		if p, err := version.ParseSemantic(v); err == nil {
			parsed[v] = p
		}
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		pa, pb := parsed[a], parsed[b]
		switch {
		case pa != nil && pb != nil && pa.LessThan(pb):
			return -1
		case pa != nil && pb != nil && pb.LessThan(pa):
			return 1
		case pa != nil && pb == nil:
			return -1
		case pa == nil && pb != nil:
			return 1
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	out := make([]clusterv1.StatusVersion, 0, len(keys))
	for _, k := range keys {
		out = append(out, clusterv1.StatusVersion{Version: k, Replicas: counts[k]})
	}
	return out
}
