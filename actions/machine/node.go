package machine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// LabelsFromMachineAnnotation on a Node lists, comma-separated and sorted,
// the label keys krtt copied from the Machine, so a label removed from the
// Machine is removed from the Node too (and labels others set are left alone).
const LabelsFromMachineAnnotation = "cluster.krtt.dev/labels-from-machine"

// syncedLabels returns the Machine labels that belong on the Node: those
// whose key starts with one of clusterv1.NodeLabelSyncPrefixes.
func syncedLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		for _, p := range clusterv1.NodeLabelSyncPrefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v
				break
			}
		}
	}
	return out
}

// syncNode sets the managed Machine labels and the krtt annotations on the
// Node and removes managed labels the Machine no longer has. It patches the
// Node only when something differs.
func syncNode(ctx context.Context, s *Scope) engine.Outcome {
	node := s.Node()
	if node == nil {
		return engine.OK()
	}
	m := s.Machine

	desired := syncedLabels(m.Labels)
	keys := make([]string, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	// The patch names only what changes (nil removes); other writers'
	// labels and annotations are left alone.
	labels, annotations := map[string]any{}, map[string]any{}
	var set, removed []string
	for _, k := range keys {
		if v, ok := node.Labels[k]; !ok || v != desired[k] {
			labels[k] = desired[k]
			set = append(set, k)
		}
	}
	for _, k := range strings.Split(node.Annotations[LabelsFromMachineAnnotation], ",") {
		if _, still := desired[k]; k == "" || still {
			continue
		}
		if _, ok := node.Labels[k]; ok {
			labels[k] = nil
			removed = append(removed, k)
		}
	}
	sort.Strings(removed)

	var annotated []string
	setAnnotation := func(k, v string) {
		if cur, ok := node.Annotations[k]; !ok || cur != v {
			annotations[k] = v
			annotated = append(annotated, k)
		}
	}
	setAnnotation(clusterv1.MachineAnnotation, m.Name)
	setAnnotation(clusterv1.ClusterNameAnnotation, m.Spec.ClusterName)
	setAnnotation(clusterv1.ClusterNamespaceAnnotation, m.Namespace)
	if len(keys) > 0 {
		setAnnotation(LabelsFromMachineAnnotation, strings.Join(keys, ","))
	} else if _, ok := node.Annotations[LabelsFromMachineAnnotation]; ok {
		annotations[LabelsFromMachineAnnotation] = nil
		annotated = append(annotated, LabelsFromMachineAnnotation)
	}

	if len(set) == 0 && len(removed) == 0 && len(annotated) == 0 {
		return engine.OKf("Node %s in sync", node.Name)
	}
	md := map[string]any{}
	if len(labels) > 0 {
		md["labels"] = labels
	}
	if len(annotations) > 0 {
		md["annotations"] = annotations
	}
	// The observed Node takes the answer in; a failed write leaves it as
	// observed.
	if err := reconciler.PatchFields(ctx, s.NodeClient, node, map[string]any{"metadata": md}); err != nil {
		return engine.Fail(fmt.Errorf("sync Node %s: %w", node.Name, err))
	}
	var parts []string
	if len(set) > 0 {
		parts = append(parts, "labels "+strings.Join(set, ","))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed labels "+strings.Join(removed, ","))
	}
	if len(annotated) > 0 {
		parts = append(parts, "annotations "+strings.Join(annotated, ","))
	}
	return engine.OKf("updated Node %s: %s", node.Name, strings.Join(parts, "; "))
}
