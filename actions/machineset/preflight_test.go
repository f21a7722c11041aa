package machineset

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func controlPlane(spec string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetKind("SimControlPlane")
	u.SetNamespace("ns")
	u.SetName("cp")
	if spec != "" {
		u.Object["spec"].(map[string]any)["version"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func setOfVersion(v string, bootstrapKind, bootstrapGroup string) *clusterv1.MachineSet {
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ms"}}
	ms.Spec.Template.Spec.Version = v
	if bootstrapKind != "" {
		ms.Spec.Template.Spec.Bootstrap.ConfigRef = &clusterv1.ObjectReference{APIGroup: bootstrapGroup, Kind: bootstrapKind, Name: "t"}
	}
	return ms
}

func versions(vs ...string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = map[string]any{"version": v, "replicas": int64(1)}
	}
	return out
}

// TestPreflightChecks follows Cluster API's machineset_preflight.go case by
// case: which check fails, and nothing when there is nothing to compare.
func TestPreflightChecks(t *testing.T) {
	stable := map[string]any{"version": "v1.31.0"}
	for _, tc := range []struct {
		name string
		set  *clusterv1.MachineSet
		cp   *unstructured.Unstructured
		skip string
		want []string // substrings, one per failed check, in order
	}{
		{name: "a control plane without spec.version gives nothing to compare",
			set: setOfVersion("v1.40.0", "", ""), cp: controlPlane("", nil)},
		{name: "a control plane that reports no version is provisioning",
			set: setOfVersion("", "", ""), cp: controlPlane("v1.31.0", nil),
			want: []string{`SimControlPlane ns/cp is provisioning ("ControlPlaneIsStable" preflight check failed)`}},
		{name: "an empty status.version is provisioning too",
			set: setOfVersion("", "", ""), cp: controlPlane("v1.31.0", map[string]any{"version": ""}),
			want: []string{"is provisioning"}},
		{name: "status.version older than spec.version is upgrading",
			set: setOfVersion("", "", ""), cp: controlPlane("v1.31.0", map[string]any{"version": "v1.30.2"}),
			want: []string{`SimControlPlane ns/cp is upgrading ("ControlPlaneIsStable" preflight check failed)`}},
		{name: "a newer build of the same version is an upgrade",
			set: setOfVersion("", "", ""), cp: controlPlane("v1.31.0+build.2", map[string]any{"version": "v1.31.0+build.1"}),
			want: []string{"is upgrading"}},
		{name: "status.versions wins over status.version: one entry behind is upgrading",
			set: setOfVersion("", "", ""), cp: controlPlane("v1.31.0", map[string]any{"version": "v1.31.0", "versions": versions("v1.30.0", "v1.31.0")}),
			want: []string{"is upgrading"}},
		{name: "status.versions all at spec.version is stable",
			set: setOfVersion("", "", ""), cp: controlPlane("v1.31.0", map[string]any{"versions": versions("v1.31.0")})},
		{name: "a control plane newer in status than in spec is not upgrading",
			set: setOfVersion("", "", ""), cp: controlPlane("v1.30.0", map[string]any{"version": "v1.31.0"})},
		{name: "a set newer than its control plane breaks the skew policy",
			set: setOfVersion("v1.32.0", "", ""), cp: controlPlane("v1.31.0", stable),
			want: []string{`MachineSet version (1.32.0) and ControlPlane version (1.31.0) do not conform to the kubernetes version skew policy as MachineSet version is higher than ControlPlane version ("KubernetesVersionSkew" preflight check failed)`}},
		{name: "a newer patch of the same minor version is allowed",
			set: setOfVersion("v1.31.5", "", ""), cp: controlPlane("v1.31.0", stable)},
		{name: "three minor versions older is allowed",
			set: setOfVersion("v1.28.0", "", ""), cp: controlPlane("v1.31.0", stable)},
		{name: "four minor versions older is not",
			set: setOfVersion("v1.27.9", "", ""), cp: controlPlane("v1.31.0", stable),
			want: []string{`MachineSet version (1.27.9) and ControlPlane version (1.31.0) do not conform to the kubernetes version skew policy as MachineSet version is more than 3 minor versions older than the ControlPlane version ("KubernetesVersionSkew" preflight check failed)`}},
		{name: "kubeadm needs the same minor version",
			set: setOfVersion("v1.30.0", kubeadmConfigTemplateKind, kubeadmBootstrapGroup), cp: controlPlane("v1.31.0", stable),
			want: []string{`MachineSet version (1.30.0) and ControlPlane version (1.31.0) do not conform to kubeadm version skew policy as kubeadm only supports joining with the same major+minor version as the control plane ("KubeadmVersionSkew" preflight check failed)`}},
		{name: "another bootstrap provider is not held to kubeadm's policy",
			set: setOfVersion("v1.30.0", "SimBootstrapConfigTemplate", "sim.krtt.dev"), cp: controlPlane("v1.31.0", stable)},
		{name: "every failed check is listed: upgrading and skewed",
			set: setOfVersion("v1.32.0", kubeadmConfigTemplateKind, kubeadmBootstrapGroup), cp: controlPlane("v1.31.0", map[string]any{"version": "v1.30.0"}),
			want: []string{"is upgrading", "MachineSet version is higher than ControlPlane version", "kubeadm only supports joining"}},
		{name: "a skipped check does not run",
			set: setOfVersion("v1.32.0", "", ""), cp: controlPlane("v1.31.0", map[string]any{"version": "v1.30.0"}), skip: "KubernetesVersionSkew",
			want: []string{"is upgrading"}},
		{name: "names are trimmed",
			set: setOfVersion("v1.32.0", "", ""), cp: controlPlane("v1.31.0", map[string]any{"version": "v1.30.0"}), skip: " ControlPlaneIsStable , KubernetesVersionSkew"},
		{name: "a version that does not parse fails the checks with what it is",
			set: setOfVersion("", "", ""), cp: controlPlane("latest", stable),
			want: []string{`could not parse spec.version "latest" of SimControlPlane ns/cp`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				tc.set.Annotations = map[string]string{clusterv1.SkipPreflightChecksAnnotation: tc.skip}
			}
			got := preflightChecks(tc.set, tc.cp, skippedChecks(tc.set, nil))
			if len(got) != len(tc.want) {
				t.Fatalf("failed checks: got %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("check %d: got %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestSkippedChecksFallsBackToTheBootstrapTemplate: the set's annotation
// wins; without one, the bootstrap template's counts.
func TestSkippedChecksFallsBackToTheBootstrapTemplate(t *testing.T) {
	tmpl := &unstructured.Unstructured{Object: map[string]any{}}
	tmpl.SetAnnotations(map[string]string{clusterv1.SkipPreflightChecksAnnotation: "All"})
	ms := setOfVersion("", "", "")
	if got := skippedChecks(ms, tmpl); !got[clusterv1.PreflightCheckAll] || len(got) != 1 {
		t.Errorf("without an annotation on the set: got %v, want the template's All", got)
	}
	ms.Annotations = map[string]string{clusterv1.SkipPreflightChecksAnnotation: "KubeadmVersionSkew"}
	if got := skippedChecks(ms, tmpl); got[clusterv1.PreflightCheckAll] || !got[clusterv1.PreflightCheckKubeadmVersionSkew] {
		t.Errorf("with an annotation on the set: got %v, want only the set's KubeadmVersionSkew", got)
	}
	if got := skippedChecks(setOfVersion("", "", ""), nil); len(got) != 0 {
		t.Errorf("no annotation anywhere: got %v, want none skipped", got)
	}
}

func TestUnknownChecksNamesTypos(t *testing.T) {
	skip := skippedChecks(&clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		clusterv1.SkipPreflightChecksAnnotation: "ControlplaneIsStable,KubernetesVersionSkew,all"}}}, nil)
	if got, want := unknownChecks(skip), `"ControlplaneIsStable", "all"`; got != want {
		t.Errorf("unknownChecks = %s, want %s", got, want)
	}
}

func TestCompareVersionsWithBuildMetadata(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"v1.31.0", "v1.30.9", 1},
		{"v1.30.0", "v1.31.0", -1},
		{"v1.31.0", "1.31.0", 0},
		{"v1.31", "v1.31.0", 0},
		{"v1.31.0-rc.1", "v1.31.0", -1},
		{"v1.31.0+2", "v1.31.0+10", -1},
		{"v1.31.0+vmware.2", "v1.31.0+vmware.1", 1},
		{"v1.31.0+abc", "v1.31.0+def", 2},
		{"v1.31.0+1", "v1.31.0+abc", -1},
		{"v1.31.0+a.1", "v1.31.0+a", 1},
	} {
		a, err := parseVersion(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := parseVersion(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := compareVersions(a, b); got != tc.want {
			t.Errorf("compareVersions(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
