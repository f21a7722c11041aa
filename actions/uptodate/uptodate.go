// Package uptodate says which fields of a Machine template roll out (a
// change replaces the Machines) and, in Cluster API's words, how one
// template differs from another in them. The MachineDeployment hashes these
// fields to find the MachineSet of its template; the Machine controller
// compares its MachineSet's template with its MachineDeployment's for the
// Machine's UpToDate condition. Both read them here, so they agree.
package uptodate

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Rollout is what rolls out of a Machine spec: the Kubernetes version, the
// bootstrap and infrastructure references and the failure domain. Cluster
// API's MachineTemplateDeepCopyRolloutFields leaves out the same: metadata,
// readiness gates, minReadySeconds, taints, the deletion and health
// settings.
type Rollout struct {
	Version       string
	Bootstrap     clusterv1.MachineBootstrap
	Infra         clusterv1.ObjectReference
	FailureDomain string
}

// Of is the rollout fields of spec.
func Of(spec *clusterv1.MachineSpec) Rollout {
	return Rollout{Version: spec.Version, Bootstrap: spec.Bootstrap, Infra: spec.InfrastructureRef, FailureDomain: spec.FailureDomain}
}

// Differences lists how current differs from desired, one line each, worded
// as Cluster API's MachineTemplateUpToDate words its condition messages (a
// template kind without its Template suffix, as the Machine's own objects
// are named); none when current is up to date.
func Differences(current, desired Rollout) []string {
	var out []string
	if current.Version != desired.Version {
		out = append(out, fmt.Sprintf("Version %s, %s required", current.Version, desired.Version))
	}
	if !reflect.DeepEqual(current.Bootstrap, desired.Bootstrap) {
		if ref := current.Bootstrap.ConfigRef; ref != nil {
			out = append(out, fmt.Sprintf("%s is not up-to-date", strings.TrimSuffix(ref.Kind, "Template")))
		} else {
			out = append(out, fmt.Sprintf("spec.bootstrap.dataSecretName %s, %s required",
				ptr.Deref(current.Bootstrap.DataSecretName, "nil"), ptr.Deref(desired.Bootstrap.DataSecretName, "nil")))
		}
	}
	if current.Infra != desired.Infra {
		out = append(out, fmt.Sprintf("%s is not up-to-date", strings.TrimSuffix(current.Infra.Kind, "Template")))
	}
	if current.FailureDomain != desired.FailureDomain {
		out = append(out, fmt.Sprintf("Failure domain %s, %s required", current.FailureDomain, desired.FailureDomain))
	}
	return out
}

// Revision is the revision annotation of a MachineSet (the template
// revision it was made for) or of a MachineDeployment (its current one); 0
// when missing or not a number.
func Revision(obj metav1.Object) int64 {
	n, _ := strconv.ParseInt(obj.GetAnnotations()[clusterv1.RevisionAnnotation], 10, 64)
	return n
}

// Hash hashes what rolls out of a MachineDeployment's template (Of): the
// MachineDeployment names and finds the MachineSet of its template by it.
// Once spec.rollout.after has passed by now, it is part of the hash, so the
// set a restart makes has a name of its own (a zero now leaves it out). Fields left empty are left out of what is
// hashed, so a template without a version keeps the hash it had before the
// version was hashed; the JSON names and their order are what existing
// MachineSets' hash labels were made from.
func Hash(md *clusterv1.MachineDeployment, now time.Time) string {
	r := Of(&md.Spec.Template.Spec)
	in := struct {
		Bootstrap     clusterv1.MachineBootstrap `json:"b"`
		Infra         clusterv1.ObjectReference  `json:"i"`
		FailureDomain string                     `json:"f,omitempty"`
		After         *metav1.Time               `json:"a,omitempty"`
		Version       string                     `json:"v,omitempty"`
	}{r.Bootstrap, r.Infra, r.FailureDomain, nil, r.Version}
	if a := md.Spec.Rollout.After; a != nil && !now.IsZero() && !now.Before(a.Time) {
		in.After = a
	}
	b, _ := json.Marshal(in)
	h := fnv.New32a()
	_, _ = h.Write(b)
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}
