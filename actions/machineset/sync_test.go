package machineset

import (
	corev1 "k8s.io/api/core/v1"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestLabelValue(t *testing.T) {
	for _, name := range []string{"ms", strings.Repeat("a", 63)} {
		if got := LabelValue(name); got != name {
			t.Errorf("LabelValue(%q) = %q, want the name itself", name, got)
		}
	}
	long70 := strings.Repeat("workers-", 8) + "abcdef"
	for _, name := range []string{strings.Repeat("a", 64), long70, "a.b-" + strings.Repeat("x", 250)} {
		got := LabelValue(name)
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("LabelValue(%d characters) = %q, not a label value: %v", len(name), got, errs)
		}
		if got == name || got != LabelValue(name) {
			t.Errorf("LabelValue(%d characters) = %q: not a stable hash", len(name), got)
		}
	}
	if LabelValue(strings.Repeat("a", 64)) == LabelValue(strings.Repeat("a", 65)) {
		t.Error("two long names hash alike")
	}
	// The value Cluster API's format.MustFormatValue gives this name (its
	// test's vector): a set and its Machines agree with Cluster API tools.
	capi := strings.Repeat("machineSetName", 12)
	if got := LabelValue(capi); got != "hash_FR_ghQ_z" {
		t.Errorf("LabelValue(Cluster API's vector) = %q, want hash_FR_ghQ_z", got)
	}
}

// TestDesiredMachine: the template's labels, annotations, readiness gates,
// minReadySeconds, deletion and health settings reach an existing Machine; keys someone else added stay;
// keys the set managed and the template dropped go; the Machine's own
// references do not change.
func TestDesiredMachine(t *testing.T) {
	ms := set(1, "")
	ms.Name = "ms"
	ms.Spec.Template.ObjectMeta.Annotations = map[string]string{"team": "a"}
	ms.Spec.Template.Spec.InfrastructureRef = clusterv1.ObjectReference{Kind: "SimMachineTemplate", Name: "v2"}
	labels, annotations := machineMetadata(ms)
	m := machine("m", 0)
	m.Labels, m.Annotations = labels, annotations
	m.Spec.InfrastructureRef = clusterv1.ObjectReference{Kind: "SimMachine", Name: "m"}
	if _, changed := desiredMachine(ms, m); changed {
		t.Fatalf("a Machine just created from the template is out of sync: %v %v", m.Labels, m.Annotations)
	}
	m.Labels["mine"], m.Annotations["note"] = "x", "y"
	if _, changed := desiredMachine(ms, m); changed {
		t.Error("keys someone else added make the Machine out of sync")
	}

	// The template changes: tier dropped, zone added, team changed, a drain
	// timeout, a health timeout.
	ms.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": "a", "zone": "z1"}
	ms.Spec.Template.ObjectMeta.Annotations = map[string]string{"team": "b"}
	ms.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](300)
	ms.Spec.Template.Spec.Health.HealthTimeoutSeconds = ptr.To[int32](60)
	ms.Spec.Template.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "example.com/Installed"}}
	ms.Spec.Template.Spec.MinReadySeconds = 30
	ms.Spec.Template.Spec.Taints = []clusterv1.MachineTaint{{Key: "example.com/dedicated", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.TaintPropagationAlways}}
	want, changed := desiredMachine(ms, m)
	if !changed {
		t.Fatal("a changed template leaves the Machine in sync")
	}
	if _, ok := want.Labels["tier"]; ok || want.Labels["zone"] != "z1" || want.Labels["mine"] != "x" || want.Labels[clusterv1.SetNameLabel] != "ms" {
		t.Errorf("labels %v", want.Labels)
	}
	if want.Annotations["team"] != "b" || want.Annotations["note"] != "y" || want.Annotations[clusterv1.ManagedLabelsAnnotation] != "pool,zone" {
		t.Errorf("annotations %v", want.Annotations)
	}
	if ptr.Deref(want.Spec.Deletion.NodeDrainTimeoutSeconds, 0) != 300 || ptr.Deref(want.Spec.Health.HealthTimeoutSeconds, 0) != 60 {
		t.Errorf("deletion %+v health %+v", want.Spec.Deletion, want.Spec.Health)
	}
	if len(want.Spec.ReadinessGates) != 1 || want.Spec.ReadinessGates[0].ConditionType != "example.com/Installed" {
		t.Errorf("readinessGates %+v", want.Spec.ReadinessGates)
	}
	if want.Spec.MinReadySeconds != 30 {
		t.Errorf("minReadySeconds %d", want.Spec.MinReadySeconds)
	}
	if len(want.Spec.Taints) != 1 || want.Spec.Taints[0].Key != "example.com/dedicated" {
		t.Errorf("taints %+v", want.Spec.Taints)
	}
	if want.Spec.InfrastructureRef.Name != "m" {
		t.Errorf("infrastructureRef %+v: a Machine keeps its own", want.Spec.InfrastructureRef)
	}
	if m.Labels["tier"] != "web" {
		t.Error("desiredMachine changed its input")
	}

	// A Machine being deleted gets only the deletion settings, the
	// readiness gates, minReadySeconds and taints (Cluster API
	// syncMachines).
	deleting(m)
	want, _ = desiredMachine(ms, m)
	if want.Labels["zone"] != "" || ptr.Deref(want.Spec.Deletion.NodeDrainTimeoutSeconds, 0) != 300 || want.Spec.Health.HealthTimeoutSeconds != nil ||
		len(want.Spec.ReadinessGates) != 1 || want.Spec.MinReadySeconds != 30 || len(want.Spec.Taints) != 1 {
		t.Errorf("being deleted: labels %v deletion %+v health %+v readinessGates %+v minReadySeconds %d", want.Labels, want.Spec.Deletion, want.Spec.Health, want.Spec.ReadinessGates, want.Spec.MinReadySeconds)
	}
}

func TestMachineName(t *testing.T) {
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "workers"}, Spec: clusterv1.MachineSetSpec{ClusterName: "c1"}}
	random := `[bcdfghjklmnpqrstvwxz2456789]{5}`
	for _, tc := range []struct {
		name, template, setName, want string
	}{
		{"default", "", "workers", `^workers-` + random + `$`},
		{"cluster and set", "{{ .cluster.name }}.{{ .machineSet.name }}-{{ .random }}", "workers", `^c1\.workers-` + random + `$`},
		{"random first", "{{ .random }}-node", "workers", `^` + random + `-node$`},
		// Spaces inside the braces are Go template's business, as in
		// Cluster API.
		{"no spaces", "{{.cluster.name}}-{{  .machineSet.name}}-{{ .random }}", "workers", `^c1-workers-` + random + `$`},
		// Over 63 characters: the first 58 and five random ones (the
		// default template too).
		{"long", "", strings.Repeat("a", 70), `^a{58}` + random + `$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms.Name, ms.Spec.MachineNaming.Template = tc.setName, tc.template
			got, err := machineName(ms)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.want).MatchString(got) {
				t.Errorf("name %q, want %s", got, tc.want)
			}
		})
	}
	// Templates the API server refuses still fail here with the template
	// named, never with a wrong name.
	for _, bad := range []string{"{{ .machineDeployment.name }}-{{ .random }}", "{{ .random", "-{{ .random }}"} {
		ms.Name, ms.Spec.MachineNaming.Template = "workers", bad
		if got, err := machineName(ms); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("template %q: name %q, error %v", bad, got, err)
		}
	}
}
