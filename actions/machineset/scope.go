// Package machineset holds the Go side of the MachineSet tables: the
// observer that reads a MachineSet's world once per reconcile, the facts
// (finite: which side of a limit the set is on) and the actions the rows
// run (with the counts). Lifecycle decisions are rows in
// transitions/machineset.
package machineset

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/reconciler"
)

// BurstReplicas caps the Machines created or deleted in one reconcile (MCM
// BurstReplicas).
const BurstReplicas = 100

// Scope is one reconcile's view of a MachineSet and its Machines. Observe
// fills it once; facts read it, actions act through it and change Set in
// memory, and the kit patches Set once.
type Scope struct {
	Client client.Client
	// Reader is what actions wait on to see their own writes (the
	// manager's cache); Client when nil.
	Reader client.Reader
	Now    time.Time
	Key    client.ObjectKey

	Found bool
	Set   *clusterv1.MachineSet

	Cluster *clusterv1.Cluster

	// Templates the template's spec names; nil when not used or missing.
	BootstrapTemplate, InfrastructureTemplate *unstructured.Unstructured
	// MissingTemplates names the templates that do not exist
	// ("infrastructure template SimMachineTemplate ghost"), MissingKinds
	// their kinds.
	MissingTemplates []string
	MissingKinds     []string

	// StaleRevision: the set belongs to a MachineDeployment whose current
	// revision is another set's, or whose template is no longer the set's
	// (a rollout replaces its Machines);
	// Deployment names that MachineDeployment and its revision.
	StaleRevision bool
	Deployment    string

	// Preflight are the reasons Cluster API's preflight checks give for
	// holding the set's Machine creations and replacements (preflight.go);
	// none when they pass. Only observed for a live set whose Cluster
	// exists.
	Preflight []string

	// Owned are the Machines the set controls (being deleted or not).
	Owned []*clusterv1.Machine
	// Orphans match the selector, belong to the set's Cluster and have no
	// controller (being deleted or not: adopted, a Machine being deleted
	// counts until it is gone).
	Orphans []*clusterv1.Machine
	// Strays are controlled by the set but no longer match it.
	Strays []*clusterv1.Machine
	// Overlaps are the other sets that can select the same Machines
	// (overlap.go), by name; Contested the orphans one of them selects
	// too, which Orphans leaves out.
	Overlaps  []*clusterv1.MachineSet
	Contested []*clusterv1.Machine

	// Counts classifies Owned (Strays excluded).
	Counts Counts

	// OutOfSync are the Machines of Owned that lack what the template
	// gives in place (sync.go).
	OutOfSync []*clusterv1.Machine

	// Recovered are the live Machines of Owned a health checker had marked
	// for remediation (OwnerRemediated False) and now finds healthy
	// (HealthCheckSucceeded True).
	Recovered []*clusterv1.Machine

	// Told holds the Events the actions tell: each Machine created,
	// deleted or adopted, as Cluster API's MachineSet controller records
	// them.
	Told reconciler.Told

	reconciler.ObserveError
}

// Counts are what the facts compare against the spec and what the actions
// and messages report.
type Counts struct {
	// Total: every Machine of the set, being deleted or not (what
	// spec.replicas is compared with, as Cluster API's syncReplicas does).
	Total int
	// Live: not being deleted. Active: live and not to be replaced.
	// Failed: live and failed; Replace: live and failed or marked for
	// remediation by a health checker, Marked the latter only.
	Live, Active, Failed, Replace, Marked int
	// Deleting: being deleted; InFlight: of those, the ones being replaced
	// (failed, or marked and told MachineDeleting: inFlight).
	Deleting, InFlight int
	// Ready and Available: live with that condition True (a Machine is
	// Available once Ready for its spec.minReadySeconds); UpToDate: live
	// and in sync with the template.
	Ready, Available, UpToDate, FullyLabeled int
}

func (s *Scope) reader() client.Reader {
	if s.Reader != nil {
		return s.Reader
	}
	return s.Client
}

// Replicas is spec.replicas (1 when unset, as the API defaults it).
func (s *Scope) Replicas() int {
	if s.Set == nil || s.Set.Spec.Replicas == nil {
		return 1
	}
	return int(*s.Set.Spec.Replicas)
}
