package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

func TestParseStatParent(t *testing.T) {
	name, ppid, err := parseStatParent("4242 (kube-apiserver) S 17 4242 17 0 -1 4194560 1 0 0 0 250 75 0 0 20 0 8 0")
	if err != nil || name != "kube-apiserver" || ppid != 17 {
		t.Errorf("got %q %d %v, want kube-apiserver 17", name, ppid, err)
	}
	// A command name may hold spaces and parentheses.
	name, ppid, err = parseStatParent("9 (a (b) c) R 3 9 3 0")
	if err != nil || name != "a (b) c" || ppid != 3 {
		t.Errorf("got %q %d %v, want \"a (b) c\" 3", name, ppid, err)
	}
	if _, _, err := parseStatParent("9 no name"); err == nil {
		t.Error("a line without a command name parsed")
	}
}

// children finds a process the bench started, by name, and not one it did
// not start.
func TestChildrenFindsTheBenchsOwnProcesses(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	kids, err := children(os.Getpid(), "sleep", "etcd")
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || kids[0].pid != cmd.Process.Pid || kids[0].name != "sleep" {
		t.Errorf("children = %+v, want sleep pid %d", kids, cmd.Process.Pid)
	}
	if kids, _ := children(os.Getppid(), "sleep"); len(kids) != 0 {
		t.Errorf("children of the parent = %+v, want none (sleep is the test's child)", kids)
	}
}

func TestPhaseCPUMeanAndReport(t *testing.T) {
	runs := []Result{
		{Controller: "krtt", PhaseCPU: []PhaseCPU{{Phase: "create → Running", WallSeconds: 40, Cores: 2,
			CPUSeconds: map[string]float64{"krtt": 10, "kube-apiserver": 40, "etcd": 8, benchProcess: 20}}}},
		{Controller: "krtt", PhaseCPU: []PhaseCPU{{Phase: "create → Running", WallSeconds: 50, Cores: 2,
			CPUSeconds: map[string]float64{"krtt": 12, "kube-apiserver": 44, "etcd": 10, benchProcess: 22}}}},
	}
	m := meanResult(runs)
	if len(m.PhaseCPU) != 1 {
		t.Fatalf("mean PhaseCPU = %+v", m.PhaseCPU)
	}
	pc := m.PhaseCPU[0]
	if pc.WallSeconds != 45 || pc.CPUSeconds["krtt"] != 11 || pc.CPUSeconds["kube-apiserver"] != 42 || pc.CPUSeconds["etcd"] != 9 || pc.CPUSeconds[benchProcess] != 21 {
		t.Errorf("mean = %+v", pc)
	}
	var buf bytes.Buffer
	writePhaseCPU(&buf, []Result{m})
	want := "CPU by process, krtt create → Running (45.0 s on 2 cores = 90.0 core-s): kube-apiserver 42.0 s, bench 21.0 s, krtt 11.0 s, etcd 9.0 s; together 83.0 core-s, 92%.\n"
	if buf.String() != want {
		t.Errorf("report\n %q, want\n %q", buf.String(), want)
	}
	// A phase one run lacks has no mean.
	runs[1].PhaseCPU = nil
	if got := meanResult(runs).PhaseCPU; len(got) != 0 {
		t.Errorf("mean with a run lacking the phase = %+v, want none", got)
	}
}
