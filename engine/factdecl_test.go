package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doorCatalogs registers what door.yaml needs, adjusted by extra.
func doorCatalogs(extra func(*Registry[struct{}])) map[string]*Catalog {
	r := NewRegistry[struct{}]("door")
	r.Action("Swing", "Swing the door.", func(context.Context, struct{}) Outcome { return OK() })
	extra(r)
	return map[string]*Catalog{"door": r.Catalog()}
}

// factFinding returns the error findings naming the fact.
func factFinding(fs Findings, fact string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity == SevError && strings.Contains(f.Message, "fact "+fact+" ") {
			out = append(out, f)
		}
	}
	return out
}

func TestFactRegisteredButNotDeclared(t *testing.T) {
	cats := doorCatalogs(func(r *Registry[struct{}]) {
		r.Bool("locked", func(struct{}) bool { return false })
		r.Enum("push", func(struct{}) string { return "None" })
		r.Bool("draft", func(struct{}) bool { return false })
	})
	got := factFinding(lint(cats, "testdata/door.yaml"), "draft")
	if len(got) != 1 || !strings.Contains(got[0].Message, "no table declares it") || got[0].Pos.File != "testdata/door.yaml" {
		t.Fatalf("want one error saying fact draft is registered but not declared, at door.yaml; got %v", got)
	}
}

func TestFactDeclaredButNotRegistered(t *testing.T) {
	cats := doorCatalogs(func(r *Registry[struct{}]) {
		r.Bool("locked", func(struct{}) bool { return false })
	})
	got := factFinding(lint(cats, "testdata/door.yaml"), "push")
	if len(got) != 1 || !strings.Contains(got[0].Message, "has no observer") || got[0].Pos.File != "testdata/door.yaml" || got[0].Pos.Line == 0 {
		t.Fatalf("want one error saying fact push has no observer, at its declaration; got %v", got)
	}
	set := mustLoad(t, "testdata/door.yaml").Sets[0]
	reg := NewRegistry[struct{}]("door")
	reg.Bool("locked", func(struct{}) bool { return false })
	reg.Action("Swing", "", func(context.Context, struct{}) Outcome { return OK() })
	if _, err := NewRunner(set, reg); err == nil || !strings.Contains(err.Error(), "fact push") {
		t.Fatalf("NewRunner must refuse a set whose fact push has no observer; got %v", err)
	}
}

func TestFactDeclaredTwice(t *testing.T) {
	raw, err := os.ReadFile("testdata/door.yaml")
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "porch.yaml")
	if err := os.WriteFile(other, []byte(strings.Replace(string(raw), "name: door", "name: porch", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cats := doorCatalogs(func(r *Registry[struct{}]) {
		r.Bool("locked", func(struct{}) bool { return false })
		r.Enum("push", func(struct{}) string { return "None" })
	})
	got := factFinding(lint(cats, "testdata/door.yaml", other), "locked")
	if len(got) != 1 || !strings.Contains(got[0].Message, "declared twice") ||
		!strings.Contains(got[0].Pos.File+" "+got[0].Message, "door.yaml") || !strings.Contains(got[0].Pos.File+" "+got[0].Message, "porch.yaml") {
		t.Fatalf("want one error saying fact locked is declared twice, naming both files; got %v", got)
	}
}

func mustLoad(t *testing.T, paths ...string) *Library {
	t.Helper()
	lib, fs := LoadPaths(paths...)
	if len(fs) > 0 || lib == nil {
		t.Fatalf("load %v: %v", paths, fs)
	}
	return lib
}
