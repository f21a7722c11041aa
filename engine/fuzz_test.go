package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/transitions"
)

// FuzzLoad feeds arbitrary bytes to the table loader and, when they load, to
// every check: neither may panic, a load with errors returns no library, and
// every finding says where (file, line and column)
// and what.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/broken/*.yaml")
	seeds = append(seeds, "testdata/door.yaml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	if err := fs.WalkDir(transitions.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(transitions.FS(), p)
		f.Add(b)
		return err
	}); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "---\n---\n", "a: &x [*x]", "<<: {}", "\t", "apiVersion: [", "{\"kind\": 1}", strings.Repeat("[", 5000), strings.Repeat("[", 10001)} {
		f.Add([]byte(s))
	}
	cats := testCatalogs()
	f.Fuzz(func(t *testing.T, data []byte) {
		lib, findings := LoadBytes("fuzz.yaml", data)
		if findings.HasErrors() && lib != nil {
			t.Fatalf("a load with errors returned a library:\n%s", findings)
		}
		if lib != nil {
			findings = append(findings, Check(lib, cats)...)
		}
		for _, fd := range findings {
			if fd.Pos.File != "fuzz.yaml" || fd.Message == "" || fd.Check == "" {
				t.Fatalf("finding without a file, message or check: %#v", fd)
			}
			if fd.Pos.Line < 1 || fd.Pos.Column < 1 {
				t.Fatalf("finding without a line and column: %s", fd)
			}
		}
	})
}
