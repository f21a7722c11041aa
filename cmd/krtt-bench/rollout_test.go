package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

func revisionSet(name, tpl string, revision string) clusterv1.MachineSet {
	ms := clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		Annotations: map[string]string{clusterv1.RevisionAnnotation: revision}}}
	ms.Spec.Template.Spec.InfrastructureRef.Name = tpl
	return ms
}

func setMachine(name string, ms clusterv1.MachineSet, ready, deleting bool) clusterv1.Machine {
	m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name,
		OwnerReferences: []metav1.OwnerReference{{Kind: "MachineSet", Name: ms.Name, UID: ms.UID, Controller: ptr.To(true)}}}}
	if ready {
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue}}
	}
	if deleting {
		m.DeletionTimestamp = &metav1.Time{Time: time.Unix(1000, 0)}
	}
	return m
}

func reporting(replicas, updated, available int32, observed bool) *clusterv1.MachineDeployment {
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", Generation: 2}}
	md.Status = clusterv1.MachineDeploymentStatus{Replicas: replicas, UpdatedReplicas: updated, AvailableReplicas: available, ObservedGeneration: 1}
	if observed {
		md.Status.ObservedGeneration = 2
	}
	return md
}

// A rollout of 2 is done only when both Machines are of the newest set of
// the new templates and available and the deployment says so of its
// latest spec; every way to fall short keeps it waiting.
func TestRolledOut(t *testing.T) {
	old, cur := revisionSet("md-old", "v1", "1"), revisionSet("md-new", "v2", "2")
	sets := []clusterv1.MachineSet{old, cur}
	done := []clusterv1.Machine{setMachine("n1", cur, true, false), setMachine("n2", cur, true, false)}

	if ok, where := rolledOut(reporting(2, 2, 2, true), sets, done, "v2", 2); !ok {
		t.Fatalf("rolled out: %s", where)
	}
	for name, tc := range map[string]struct {
		md       *clusterv1.MachineDeployment
		sets     []clusterv1.MachineSet
		machines []clusterv1.Machine
	}{
		"no set of the new templates yet": {reporting(2, 2, 2, true), []clusterv1.MachineSet{old}, done},
		"an old Machine is left":          {reporting(2, 2, 2, true), sets, append(done[:1:1], setMachine("o1", old, true, false))},
		"an old Machine is being deleted": {reporting(2, 2, 2, true), sets, append(done[:2:2], setMachine("o1", old, false, true))},
		"a new Machine is not Ready":      {reporting(2, 2, 2, true), sets, []clusterv1.Machine{done[0], setMachine("n2", cur, false, false)}},
		"too few Machines":                {reporting(2, 2, 2, true), sets, done[:1]},
		"the spec is not observed yet":    {reporting(2, 2, 2, false), sets, done},
		"the status lags":                 {reporting(2, 1, 2, true), sets, done},
	} {
		if ok, where := rolledOut(tc.md, tc.sets, tc.machines, "v2", 2); ok {
			t.Errorf("%s: rolled out (%s)", name, where)
		}
	}
	_, where := rolledOut(reporting(3, 1, 2, true), sets, append(done[:1:1], setMachine("o1", old, true, false), setMachine("o2", old, false, true)), "v2", 2)
	if !strings.Contains(where, "revision 1: 2, revision 2: 1") || !strings.Contains(where, "2 available") {
		t.Errorf("where = %q, want the Machines per revision and the available count", where)
	}
}

func TestRolloutCheckHoldsTheLimits(t *testing.T) {
	within := Rollout{PeakMachines: 33, MostMachines: 33, MinAvailable: 30, FewestAvailable: 30}
	if err := within.check(); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	over := within
	over.PeakMachines, over.peakAt = 34, "m-34(...)"
	if err := over.check(); err == nil || !strings.Contains(err.Error(), "34 Machines at once") || !strings.Contains(err.Error(), "m-34") {
		t.Errorf("34 of at most 33: %v", err)
	}
	under := within
	under.MinAvailable = 29
	if err := under.check(); err == nil || !strings.Contains(err.Error(), "only 29 available") {
		t.Errorf("29 of at least 30: %v", err)
	}
}

func TestRolloutReport(t *testing.T) {
	r := result("krtt-rollout", 0, 0, 0, 12)
	r.CreateToRunning, r.DeleteToGone = nil, nil
	r.Rollout = &Rollout{MaxSurge: 3, CreateSeconds: 9.5, WallSeconds: 41.25, Replaced: 30,
		PeakMachines: 33, MostMachines: 33, MinAvailable: 30, FewestAvailable: 30, WatchEvents: 812}
	rep := Report{Mode: modeRollout, N: 30, PodsPerNode: 3, Results: []Result{r}}
	var buf bytes.Buffer
	writeTable(&buf, rep)
	out := buf.String()
	for _, want := range []string{"maxSurge 3, maxUnavailable 0", "requests/Machine replaced",
		"| krtt-rollout | 30 | 9.5s | 41.2s | 33 (≤ 33) | 30 (≥ 30) | 812 |", "| 12.0 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "create→Running wall") {
		t.Errorf("the rollout table has the lifecycle's columns:\n%s", out)
	}
	buf.Reset()
	if err := writeJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mode    string `json:"mode"`
		Results []struct {
			Rollout map[string]any `json:"rollout"`
		} `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Mode != "rollout" || len(doc.Results) != 1 {
		t.Fatalf("JSON: %s", buf.String())
	}
	for k, want := range map[string]float64{"wallSeconds": 41.25, "peakMachines": 33, "mostMachines": 33, "minAvailable": 30, "fewestAvailable": 30, "replaced": 30} {
		if got, _ := doc.Results[0].Rollout[k].(float64); got != want {
			t.Errorf("rollout.%s = %v, want %v", k, doc.Results[0].Rollout[k], want)
		}
	}
}

func TestValidateRollout(t *testing.T) {
	o := options{n: 30, workers: 1, concurrency: 1, output: "text", instances: 1, mode: modeRollout, maxSurge: 3}
	if err := validate(o); err != nil {
		t.Errorf("-mode rollout: %v", err)
	}
	for name, mut := range map[string]func(*options){
		"a peer":          func(o *options) { o.peer = "capi" },
		"no surge nor un": func(o *options) { o.maxSurge = 0 },
		"an unknown mode": func(o *options) { o.mode = "rollback" },
		"instances":       func(o *options) { o.instances = 2 },
	} {
		bad := o
		mut(&bad)
		if err := validate(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
