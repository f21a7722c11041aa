package machineset

import (
	"fmt"
	"strings"
	"text/template"

	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// randomLength is the length of {{ .random }} and of the suffix a name too
// long for a label value gets.
const randomLength = 5

// machineName names a new Machine of ms by spec.machineNaming.template (the
// default, {{ .machineSet.name }}-{{ .random }}, without one), as Cluster
// API's MachineSetMachineNameGenerator: a name longer than 63 characters
// keeps its first 58 and gets five random ones. The API server refuses a
// template that could fail here; the error is for one that got past it.
func machineName(ms *clusterv1.MachineSet) (string, error) {
	text := ms.Spec.MachineNaming.Template
	if text == "" {
		text = clusterv1.DefaultMachineNameTemplate
	}
	tpl, err := template.New("machineNaming").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("machineNaming.template %q: %w", text, err)
	}
	var b strings.Builder
	data := map[string]any{
		"cluster":    map[string]any{"name": ms.Spec.ClusterName},
		"machineSet": map[string]any{"name": ms.Name},
		"random":     utilrand.String(randomLength),
	}
	if err := tpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("machineNaming.template %q: %w", text, err)
	}
	name := b.String()
	if len(name) > validation.DNS1123LabelMaxLength {
		name = name[:validation.DNS1123LabelMaxLength-randomLength] + utilrand.String(randomLength)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("machineNaming.template %q makes the name %q, which is not an object name: %s", text, name, strings.Join(errs, "; "))
	}
	return name, nil
}
