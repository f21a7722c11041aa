package docs

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// readmeLimit keeps README.md a front page; the rest belongs in docs/.
const readmeLimit = 10240

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// markdown lists README.md and every Markdown file under docs/.
func markdown(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir // make check-generated's scratch copies
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files[1:])
	return files
}

func TestLinks(t *testing.T) {
	root := repoRoot(t)
	broken, err := Check(root, markdown(t, root))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Errorf("broken link %s", b)
	}
}

func TestReadmeSize(t *testing.T) {
	fi, err := os.Stat(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > readmeLimit {
		t.Errorf("README.md is %d bytes, over %d: move detail into docs/ and link it", fi.Size(), readmeLimit)
	}
}

func TestParse(t *testing.T) {
	b, err := os.ReadFile("testdata/fixture.md")
	if err != nil {
		t.Fatal(err)
	}
	links, anchors := Parse("fixture.md", string(b))
	var got []string
	for _, l := range links {
		got = append(got, l.String())
	}
	want := []string{
		"fixture.md:5: other.md#a-section",
		"fixture.md:5: missing.md",
		"fixture.md:12: #a-heading-with-code",
		"fixture.md:12: https://example.com/x",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links\n got %q\nwant %q", got, want)
	}
	for _, a := range []string{"fixture", "a-heading-with-code"} {
		if !anchors[a] {
			t.Errorf("no anchor %q in %v", a, anchors)
		}
	}
}

func TestCheckFixture(t *testing.T) {
	broken, err := Check("testdata", []string{"fixture.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fixture.md:5: missing.md: no such file or directory missing.md"}
	if !reflect.DeepEqual(broken, want) {
		t.Errorf("broken\n got %q\nwant %q", broken, want)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Drain rules (`MachineDrainRule`, `kubectl get kmdr`)": "drain-rules-machinedrainrule-kubectl-get-kmdr",
		"Reliability: chaos runs and invariants":               "reliability-chaos-runs-and-invariants",
		"The `krtt` command: explain, decide, lint, render":    "the-krtt-command-explain-decide-lint-render",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
