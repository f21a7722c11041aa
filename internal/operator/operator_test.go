package operator

import (
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func TestWatchFilter(t *testing.T) {
	var none ctrl.Options
	if err := WatchFilter(&none, ""); err != nil || none.Cache.ByObject != nil || none.LeaderElectionID != "" {
		t.Errorf("an empty filter changed the options: %v %+v %q", err, none.Cache.ByObject, none.LeaderElectionID)
	}

	var o ctrl.Options
	if err := WatchFilter(&o, "Team_A"); err != nil {
		t.Fatal(err)
	}
	if len(o.Cache.ByObject) != 2 {
		t.Fatalf("cache restricted for %d kinds, want Machines and MachineSets", len(o.Cache.ByObject))
	}
	for obj, by := range o.Cache.ByObject {
		switch obj.(type) {
		case *clusterv1.Machine, *clusterv1.MachineSet:
		default:
			t.Errorf("cache restricted for %T, want *Machine or *MachineSet", obj)
		}
		if got, want := by.Label.String(), clusterv1.WatchFilterLabel+"=Team_A"; got != want {
			t.Errorf("selector %q, want %q", got, want)
		}
	}
	if got, want := o.LeaderElectionID, "team-a."+LeaderElectionID; got != want {
		t.Errorf("LeaderElectionID %q, want %q", got, want)
	}

	kept := ctrl.Options{LeaderElectionID: "mine"}
	if err := WatchFilter(&kept, "a"); err != nil || kept.LeaderElectionID != "mine" {
		t.Errorf("a given LeaderElectionID was replaced: %v %q", err, kept.LeaderElectionID)
	}

	err := WatchFilter(&ctrl.Options{}, "not a label value!")
	if err == nil || !strings.Contains(err.Error(), "--watch-filter") {
		t.Errorf("a bad value gave %v, want an error naming --watch-filter", err)
	}
}
