package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// clusterOf is the Cluster the scope reconciles, for the kit's actions.
func clusterOf(s *Scope) client.Object { return s.Cluster }

// shownNames is how many names a teardown message lists before "and N more".
const shownNames = 5

func isControlPlane(m *clusterv1.Machine) bool {
	_, ok := m.Labels[clusterv1.ControlPlaneLabel]
	return ok
}

// waitsFor: the teardown waits for a control-plane Machine when the Cluster
// names no control plane object, or when it owns the Machine itself; one a
// control plane object controls goes with that object, which the Cluster
// deletes last (Cluster API's objectsPendingDeleteCount leaves out every
// control-plane Machine then; krtt still deletes those it owns, below).
func (s *Scope) waitsFor(m *clusterv1.Machine) bool {
	return s.Cluster == nil || s.Cluster.Spec.ControlPlaneRef == nil || ownedByCluster(m, s.Cluster)
}

// workers are the Cluster's Machines without the control-plane label, and
// controlPlane the control-plane Machines the teardown waits for.
func (s *Scope) split() (workers, controlPlane []*clusterv1.Machine) {
	for _, m := range s.Machines {
		switch {
		case !isControlPlane(m):
			workers = append(workers, m)
		case s.waitsFor(m):
			controlPlane = append(controlPlane, m)
		}
	}
	return workers, controlPlane
}

// descendants is read on every reconcile of the Cluster, so it looks at its
// Machines without collecting them.
func descendants(s *Scope) string {
	workers, controlPlane := false, false
	for _, m := range s.Machines {
		cp := isControlPlane(m)
		workers, controlPlane = workers || !cp, controlPlane || cp && s.waitsFor(m)
	}
	switch {
	case len(s.MachineDeployments) > 0:
		return "Deployments"
	case len(s.MachineSets) > 0 || workers:
		return "Workers"
	case controlPlane:
		return "ControlPlane"
	}
	return "None"
}

// ownedByCluster: obj carries an owner reference to the Cluster and no
// controller reference to anything else, as Cluster API's
// filterOwnedDescendants picks the stand-alone objects (a Machine of a
// MachineSet is deleted by its set).
func ownedByCluster(obj metav1.Object, c *clusterv1.Cluster) bool {
	owned := false
	for _, ref := range obj.GetOwnerReferences() {
		isCluster := ref.Kind == "Cluster" && ref.Name == c.Name && ref.APIVersion == clusterv1.GroupVersion.String()
		if ref.Controller != nil && *ref.Controller && !isCluster {
			return false
		}
		owned = owned || isCluster
	}
	return owned
}

// deleteObject deletes one object by name and UID (the listed copies are
// the cache's own, never handed to a write); NotFound means it is gone.
func (s *Scope) deleteObject(ctx context.Context, obj client.Object, uid types.UID) error {
	err := s.Client.Delete(ctx, obj, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// deploymentOfCluster: a MachineDeployment naming the Cluster
// (spec.clusterName) that no other object controls. Unlike a stand-alone
// MachineSet, a MachineDeployment gets no owner reference to its Cluster
// (nothing in krtt sets one), so naming the Cluster is what makes it the
// Cluster's, as it is for the MachineDeployment controller itself.
func deploymentOfCluster(md *clusterv1.MachineDeployment, c *clusterv1.Cluster) bool {
	if md.Spec.ClusterName != c.Name {
		return false
	}
	for _, ref := range md.OwnerReferences {
		isCluster := ref.Kind == "Cluster" && ref.Name == c.Name && ref.APIVersion == clusterv1.GroupVersion.String()
		if ref.Controller != nil && *ref.Controller && !isCluster {
			return false
		}
	}
	return true
}

// deleteWorkers deletes, in one pass, what the Cluster owns outside its
// control plane that is not being deleted yet: its MachineDeployments, its
// stand-alone MachineSets and its worker Machines (Cluster API
// filterOwnedDescendants). A deployment's MachineSets and a set's Machines
// are not the Cluster's: each goes with its owner, which keeps its finalizer
// until they are gone, so nothing is deleted from under a controller that
// would recreate it.
func deleteWorkers(ctx context.Context, s *Scope) engine.Outcome {
	workers, _ := s.split()
	var errs []string
	for i := range s.MachineDeployments {
		md := &s.MachineDeployments[i]
		if !md.DeletionTimestamp.IsZero() || !deploymentOfCluster(md, s.Cluster) {
			continue
		}
		obj := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: md.Namespace, Name: md.Name}}
		if err := s.deleteObject(ctx, obj, md.UID); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for i := range s.MachineSets {
		ms := &s.MachineSets[i]
		if !ms.DeletionTimestamp.IsZero() || !ownedByCluster(ms, s.Cluster) {
			continue
		}
		obj := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ms.Namespace, Name: ms.Name}}
		if err := s.deleteObject(ctx, obj, ms.UID); err != nil {
			errs = append(errs, err.Error())
		}
	}
	errs = append(errs, s.deleteMachines(ctx, workers)...)
	if len(errs) > 0 {
		return engine.Failf("%s", strings.Join(errs, "; "))
	}
	return engine.Wait("%s", s.pending())
}

func deleteControlPlaneMachines(ctx context.Context, s *Scope) engine.Outcome {
	_, controlPlane := s.split()
	if errs := s.deleteMachines(ctx, controlPlane); len(errs) > 0 {
		return engine.Failf("%s", strings.Join(errs, "; "))
	}
	return engine.Wait("%s", s.pending())
}

// pending words what the teardown still waits for as the Deleting
// condition of Cluster API's reconcileDelete does (objectsPendingDeleteNames):
// a line per kind, control-plane Machines first, names sorted, five shown.
// Which step each Machine is in is krtt explain's (Remaining).
func (s *Scope) pending() string {
	workers, controlPlane := s.split()
	var lines []string
	add := func(label string, list []string) {
		if len(list) == 0 {
			return
		}
		sort.Strings(list)
		if len(list) > shownNames {
			list = append(list[:shownNames:shownNames], fmt.Sprintf("... (%d more)", len(list)-shownNames))
		}
		lines = append(lines, "* "+label+": "+strings.Join(list, ", "))
	}
	machineNames := func(ms []*clusterv1.Machine) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.Name
		}
		return out
	}
	add("Control plane Machines", machineNames(controlPlane))
	mds := make([]string, len(s.MachineDeployments))
	for i := range s.MachineDeployments {
		mds[i] = s.MachineDeployments[i].Name
	}
	add("MachineDeployments", mds)
	sets := make([]string, len(s.MachineSets))
	for i := range s.MachineSets {
		sets[i] = s.MachineSets[i].Name
	}
	add("MachineSets", sets)
	add("Worker Machines", machineNames(workers))
	return strings.Join(lines, "\n")
}

// Remaining says, for krtt explain cluster, what the teardown of the
// Cluster still waits on: the MachineDeployments, then the MachineSets and
// worker Machines, or, once they are gone, the control-plane Machines, each
// Machine with the deletion step it is in, and last the control plane
// object. The Deleting condition says it in Cluster API's words (pending).
func (s *Scope) Remaining() string {
	msg := s.machinesRemaining()
	var objects []string
	// The control plane object goes first, the infrastructure object last.
	for _, o := range []string{referenceLeft(controlPlane(s), s.Cluster.Spec.ControlPlaneRef), referenceLeft(infrastructure(s), s.Cluster.Spec.InfrastructureRef)} {
		if o != "" {
			objects = append(objects, o)
		}
	}
	cp := strings.Join(objects, ", then ")
	switch {
	case cp == "" && msg == "":
		return "nothing is left"
	case cp == "":
		return msg
	case msg == "":
		return fmt.Sprintf("every MachineDeployment, MachineSet and Machine the Cluster waits for is gone; waiting for %s to be deleted", cp)
	}
	return msg + "; then " + cp
}

// machinesRemaining is Remaining without the control plane object; empty
// when no MachineDeployment, MachineSet or Machine the teardown waits for
// is left. While MachineDeployments are left, the MachineSets and Machines
// they hold are counted with them, not listed again.
func (s *Scope) machinesRemaining() string {
	workers, controlPlane := s.split()
	var parts []string
	ofDeployment := map[string]bool{}
	if len(s.MachineDeployments) > 0 {
		var mds []string
		for i := range s.MachineDeployments {
			md := &s.MachineDeployments[i]
			name := md.Name
			if md.DeletionTimestamp.IsZero() && !deploymentOfCluster(md, s.Cluster) {
				name += " (left to its owner)"
			}
			mds = append(mds, name)
		}
		parts = append(parts, fmt.Sprintf("%s still deleting: %s", plural(len(mds), "MachineDeployment"), names(mds)))
		for i := range s.MachineSets {
			if ref := metav1.GetControllerOf(&s.MachineSets[i]); ref != nil && ref.Kind == "MachineDeployment" {
				ofDeployment[s.MachineSets[i].Name] = true
			}
		}
	}
	var sets []string
	for i := range s.MachineSets {
		if !ofDeployment[s.MachineSets[i].Name] {
			sets = append(sets, s.MachineSets[i].Name)
		}
	}
	var lone []*clusterv1.Machine
	for _, m := range workers {
		if ref := metav1.GetControllerOf(m); ref == nil || ref.Kind != "MachineSet" || !ofDeployment[ref.Name] {
			lone = append(lone, m)
		}
	}
	if len(sets) > 0 {
		parts = append(parts, fmt.Sprintf("%s still deleting: %s", plural(len(sets), "MachineSet"), names(sets)))
	}
	if len(lone) > 0 {
		parts = append(parts, fmt.Sprintf("%s still deleting: %s", plural(len(lone), "worker Machine"), s.machineNames(lone)))
	}
	switch {
	case len(parts) == 0 && len(workers) == 0 && len(controlPlane) == 0:
		return ""
	case len(parts) == 0 && len(workers) == 0:
		return fmt.Sprintf("every worker is gone; %s still deleting: %s", plural(len(controlPlane), "control-plane Machine"), s.machineNames(controlPlane))
	}
	msg := strings.Join(parts, "; ")
	if len(controlPlane) > 0 {
		msg += fmt.Sprintf("; then %s", plural(len(controlPlane), "control-plane Machine"))
	}
	return msg
}

// deleteMachines deletes the Machines the Cluster owns that are not being
// deleted yet; Machines a MachineSet (or another controller) owns are left
// to it.
func (s *Scope) deleteMachines(ctx context.Context, machines []*clusterv1.Machine) []string {
	var errs []string
	for _, m := range machines {
		if !m.DeletionTimestamp.IsZero() || !ownedByCluster(m, s.Cluster) {
			continue
		}
		obj := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
		if err := s.deleteObject(ctx, obj, m.UID); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return errs
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func names(list []string) string {
	sort.Strings(list)
	if len(list) > shownNames {
		list = append(list[:shownNames:shownNames], fmt.Sprintf("and %d more", len(list)-shownNames))
	}
	return strings.Join(list, ", ")
}

// machineNames names the Machines with the deletion step each is in (its
// Deleting condition's reason), so the Cluster says what it waits on.
func (s *Scope) machineNames(machines []*clusterv1.Machine) string {
	out := make([]string, 0, len(machines))
	for _, m := range machines {
		name := m.Name
		switch c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition); {
		case m.DeletionTimestamp.IsZero() && ownedByCluster(m, s.Cluster):
			name += " (deletion requested)"
		case m.DeletionTimestamp.IsZero():
			name += " (left to its owner)"
		case c != nil && c.Status == metav1.ConditionTrue:
			name += " (" + c.Reason + ")"
		}
		out = append(out, name)
	}
	return names(out)
}
