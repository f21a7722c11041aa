// Package actions is krtt's operator as its binaries and tests see it: the
// list of controllers, their tables (the shipped ones or a reviewed copy
// from a directory, checked against the registries krtt is built with) and
// the manager they run in.
package actions

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/cluster"
	"github.com/krtt-dev/krtt/actions/controller"
	"github.com/krtt-dev/krtt/actions/machine"
	"github.com/krtt-dev/krtt/actions/machinedeployment"
	"github.com/krtt-dev/krtt/actions/machinedrainrule"
	"github.com/krtt-dev/krtt/actions/machineset"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/engine/explain"
)

// Controller is one controller of the operator, as everything that runs or
// checks controllers sees it: the operator sets it up, krtt lint and docs
// check and describe its tables with its catalogs, the tests load its set.
type Controller struct {
	// Name is its TableSet's metadata.name, which is also the
	// controller's name.
	Name string
	// Object is the API type it reconciles (an empty one): the watch filter
	// and the tests' write audit go by it.
	Object client.Object
	// Catalogs are the catalogs of the registries its tables name.
	Catalogs func() []*engine.Catalog
	// Setup adds it to a manager.
	Setup controller.Setup
	// Explain, when set, is `krtt explain <Name> OBJECT`: the report of one
	// object, with what only this kind shows; Help is its one-line help.
	Explain func(ctx context.Context, c client.Client, set *engine.TableSet, key client.ObjectKey, now time.Time) (*explain.Report, error)
	Help    string
	// Unfiltered: the watch filter does not split its objects between
	// instances; every instance reads them all (MachineDrainRules are a
	// namespace's drain policy, whoever manages its Machines), and each
	// writes the same status to them.
	Unfiltered bool
}

// Controllers are every controller krtt has, in the order the operator sets
// them up. A controller is a line here, its tables in transitions/<name>/,
// its facts, actions and Setup in actions/<name>/, its API type (which
// implements kit.Status) and the RBAC markers of its Setup.
var Controllers = []Controller{
	{Name: machine.Name, Object: &clusterv1.Machine{}, Catalogs: machine.Catalogs, Setup: machine.Setup,
		Explain: machine.Explain, Help: "Explain why a Machine is in its state and what would move it on"},
	{Name: machineset.Name, Object: &clusterv1.MachineSet{}, Catalogs: machineset.Catalogs, Setup: machineset.Setup,
		Explain: machineset.Explain, Help: "Explain why a MachineSet is in its state: its counts, limits and what would move it on"},
	{Name: machinedeployment.Name, Object: &clusterv1.MachineDeployment{}, Catalogs: machinedeployment.Catalogs, Setup: machinedeployment.Setup,
		Explain: machinedeployment.Explain, Help: "Explain which step a MachineDeployment's rollout is in and what it waits on"},
	{Name: cluster.Name, Object: &clusterv1.Cluster{}, Catalogs: cluster.Catalogs, Setup: cluster.Setup,
		Explain: cluster.Explain, Help: "Explain why a Cluster is in its state and, while it is deleted, what its teardown waits on"},
	{Name: machinedrainrule.Name, Object: &clusterv1.MachineDrainRule{}, Catalogs: machinedrainrule.Catalogs, Setup: machinedrainrule.Setup,
		Unfiltered: true},
}
