package machineset

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// kubeadmBootstrapGroup and kubeadmConfigTemplateKind name Cluster API's
// kubeadm bootstrap templates, the only ones whose Machines must join at
// the control plane's minor version.
const (
	kubeadmBootstrapGroup     = "bootstrap.cluster.x-k8s.io"
	kubeadmConfigTemplateKind = "KubeadmConfigTemplate"
)

// maxMinorSkew is how many minor versions a kubelet may lag behind the API
// server (the Kubernetes version skew policy).
const maxMinorSkew = 3

var knownChecks = map[string]bool{
	clusterv1.PreflightCheckAll:                     true,
	clusterv1.PreflightCheckControlPlaneIsStable:    true,
	clusterv1.PreflightCheckKubernetesVersionSkew:   true,
	clusterv1.PreflightCheckKubeadmVersionSkew:      true,
	clusterv1.PreflightCheckControlPlaneVersionSkew: true,
}

// preflight runs Cluster API's MachineSet preflight checks (runPreflightChecks)
// for s: the reasons the set may not create or replace Machines now, none
// when every check passes, is skipped, or has nothing to compare (no control
// plane provider, or one without spec.version). A control plane that cannot
// be read holds the set as a failed check does, as it does in Cluster API.
func (o *Observer) preflight(ctx context.Context, s *Scope) []string {
	skip := skippedChecks(s.Set, s.BootstrapTemplate)
	if skip[clusterv1.PreflightCheckAll] || s.Cluster == nil || s.Cluster.Spec.ControlPlaneRef == nil {
		return nil
	}
	ref := *s.Cluster.Spec.ControlPlaneRef
	cp, err := contract.Get(ctx, o.Client, ref, s.Cluster.Namespace, "control plane")
	switch {
	case err != nil:
		return []string{fmt.Sprintf("the preflight checks could not read the control plane: %v", err)}
	case cp == nil:
		return []string{fmt.Sprintf("the preflight checks could not read the control plane: %s %s/%s does not exist", ref.Kind, s.Cluster.Namespace, ref.Name)}
	}
	failed := preflightChecks(s.Set, cp, skip)
	if len(failed) > 0 {
		if unknown := unknownChecks(skip); unknown != "" {
			failed = append(failed, fmt.Sprintf("the %s annotation names %s, which is no preflight check (%s)",
				clusterv1.SkipPreflightChecksAnnotation, unknown, strings.Join(checkNames(), ", ")))
		}
	}
	return failed
}

// skippedChecks reads the skip-preflight-checks annotation of the set, or of
// its bootstrap template when the set has none (Cluster API
// skippedPreflightChecks).
func skippedChecks(ms *clusterv1.MachineSet, bootstrapTemplate *unstructured.Unstructured) map[string]bool {
	value := ms.Annotations[clusterv1.SkipPreflightChecksAnnotation]
	if value == "" && bootstrapTemplate != nil {
		value = bootstrapTemplate.GetAnnotations()[clusterv1.SkipPreflightChecksAnnotation]
	}
	skip := map[string]bool{}
	for name := range strings.SplitSeq(value, ",") {
		if name = strings.TrimSpace(name); name != "" {
			skip[name] = true
		}
	}
	return skip
}

func unknownChecks(skip map[string]bool) string {
	var out []string
	for name := range skip {
		if !knownChecks[name] {
			out = append(out, strconv.Quote(name))
		}
	}
	if len(out) == 0 {
		return ""
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func checkNames() []string {
	out := make([]string, 0, len(knownChecks))
	for name := range knownChecks {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// preflightChecks is the part of preflight that only reads objects: the
// control plane's spec.version against its status and against the set's
// spec.template.spec.version.
func preflightChecks(ms *clusterv1.MachineSet, cp *unstructured.Unstructured, skip map[string]bool) []string {
	cpName := fmt.Sprintf("%s %s/%s", cp.GetKind(), cp.GetNamespace(), cp.GetName())
	raw, found, err := unstructured.NestedString(cp.Object, "spec", "version")
	switch {
	case err != nil:
		return []string{fmt.Sprintf("the preflight checks could not read spec.version of %s: %v", cpName, err)}
	case !found || raw == "":
		// A control plane without a version gives nothing to compare.
		return nil
	}
	cpVersion, err := parseVersion(raw)
	if err != nil {
		return []string{fmt.Sprintf("the preflight checks could not parse spec.version %q of %s: %v", raw, cpName, err)}
	}
	var failed []string
	if run(skip, clusterv1.PreflightCheckControlPlaneIsStable) {
		if msg := controlPlaneStable(cp, cpName, cpVersion); msg != "" {
			failed = append(failed, msg)
		}
	}
	raw = ms.Spec.Template.Spec.Version
	if raw == "" {
		return failed
	}
	setVersion, err := parseVersion(raw)
	if err != nil {
		return append(failed, fmt.Sprintf("the preflight checks could not parse spec.template.spec.version %q: %v", raw, err))
	}
	if run(skip, clusterv1.PreflightCheckKubernetesVersionSkew) {
		switch cpMinor, setMinor := int(cpVersion.Minor()), int(setVersion.Minor()); {
		case setMinor > cpMinor:
			failed = append(failed, fmt.Sprintf("MachineSet version (%s) and ControlPlane version (%s) do not conform to the kubernetes version skew policy as MachineSet version is higher than ControlPlane version (%q preflight check failed)",
				setVersion, cpVersion, clusterv1.PreflightCheckKubernetesVersionSkew))
		case setMinor < cpMinor-maxMinorSkew:
			failed = append(failed, fmt.Sprintf("MachineSet version (%s) and ControlPlane version (%s) do not conform to the kubernetes version skew policy as MachineSet version is more than %d minor versions older than the ControlPlane version (%q preflight check failed)",
				setVersion, cpVersion, maxMinorSkew, clusterv1.PreflightCheckKubernetesVersionSkew))
		}
	}
	if run(skip, clusterv1.PreflightCheckKubeadmVersionSkew) {
		ref := ms.Spec.Template.Spec.Bootstrap.ConfigRef
		if ref != nil && ref.Kind == kubeadmConfigTemplateKind && ref.APIGroup == kubeadmBootstrapGroup && cpVersion.Minor() != setVersion.Minor() {
			failed = append(failed, fmt.Sprintf("MachineSet version (%s) and ControlPlane version (%s) do not conform to kubeadm version skew policy as kubeadm only supports joining with the same major+minor version as the control plane (%q preflight check failed)",
				setVersion, cpVersion, clusterv1.PreflightCheckKubeadmVersionSkew))
		}
	}
	return failed
}

func run(skip map[string]bool, check string) bool { return !skip[check] }

// controlPlaneStable is Cluster API's ControlPlaneIsStable check with the
// control plane contract's IsProvisioning and IsUpgrading: the control plane
// reports no version yet (provisioning), or reports one older than
// spec.version (upgrading). status.versions, when reported, wins over
// status.version. The messages are Cluster API's; the versions are in the
// control plane's spec and status.
func controlPlaneStable(cp *unstructured.Unstructured, cpName string, cpVersion *version.Version) string {
	reported, err := reportedVersions(cp)
	if err != nil {
		return fmt.Sprintf("the preflight checks could not read the versions %s reports: %v", cpName, err)
	}
	if len(reported) == 0 {
		return fmt.Sprintf("%s is provisioning (%q preflight check failed)", cpName, clusterv1.PreflightCheckControlPlaneIsStable)
	}
	for _, r := range reported {
		v, err := parseVersion(r)
		if err != nil {
			return fmt.Sprintf("the preflight checks could not parse the version %q %s reports: %v", r, cpName, err)
		}
		if compareVersions(cpVersion, v) > 0 {
			return fmt.Sprintf("%s is upgrading (%q preflight check failed)", cpName, clusterv1.PreflightCheckControlPlaneIsStable)
		}
	}
	return ""
}

// reportedVersions are the versions a control plane reports by the
// contract: every status.versions[].version, or else status.version; none
// while it reports neither (or an empty one).
func reportedVersions(cp *unstructured.Unstructured) ([]string, error) {
	if _, found, err := unstructured.NestedFieldNoCopy(cp.Object, "status", "versions"); found {
		if err != nil {
			return nil, err
		}
		entries := contract.Entries(cp, "status", "versions")
		var out []string
		for i, e := range entries {
			v, _, err := unstructured.NestedString(e, "version")
			if err != nil || v == "" {
				return nil, fmt.Errorf("status.versions[%d].version is not a version", i)
			}
			out = append(out, v)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	v, _, err := unstructured.NestedString(cp.Object, "status", "version")
	if err != nil {
		return nil, fmt.Errorf("status.version: %w", err)
	}
	if v == "" {
		return nil, nil
	}
	return []string{v}, nil
}

// parseVersion reads a Kubernetes version as Cluster API's
// semver.ParseTolerant does: a leading v, and a missing patch, are allowed.
func parseVersion(s string) (*version.Version, error) {
	if v, err := version.ParseSemantic(s); err == nil {
		return v, nil
	}
	return version.ParseGeneric(s)
}

// compareVersions orders a and b as Cluster API's version.Compare with
// WithBuildTags: by semantic version, then by build metadata (numeric
// identifiers by value, below textual ones; two different textual
// identifiers, such as commit hashes, have no order and compare as 2, "not
// the same").
func compareVersions(a, b *version.Version) int {
	switch {
	case a.LessThan(b):
		return -1
	case b.LessThan(a):
		return 1
	}
	return compareBuilds(a.BuildMetadata(), b.BuildMetadata())
}

func compareBuilds(a, b string) int {
	var as, bs []string
	if a != "" {
		as = strings.Split(a, ".")
	}
	if b != "" {
		bs = strings.Split(b, ".")
	}
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareBuildIdentifiers(as[i], bs[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(as) == len(bs):
		return 0
	case len(as) < len(bs):
		return -1
	}
	return 1
}

func compareBuildIdentifiers(a, b string) int {
	an, aErr := strconv.ParseUint(a, 10, 64)
	bn, bErr := strconv.ParseUint(b, 10, 64)
	switch {
	case aErr == nil && bErr == nil:
		switch {
		case an < bn:
			return -1
		case an > bn:
			return 1
		}
		return 0
	case aErr == nil:
		return -1
	case bErr == nil:
		return 1
	case a == b:
		return 0
	}
	return 2
}
