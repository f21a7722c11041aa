// Package examples holds krtt's example controllers; docs/tutorial.md is
// written from them.
package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// block is a fenced code block of the tutorial and the file it says it
// comes from (`<!-- from PATH -->` on the line before, PATH from the
// repository root).
var block = regexp.MustCompile("(?m)^(?:<!-- from (\\S+) -->\n)?```(go|yaml)\n((?s:.*?))```\n")

// TestTutorialIsTheExamples: every Go and YAML block of docs/tutorial.md
// names the examples file it is copied from and is, verbatim, a part of
// it; so the tutorial shows code that builds and passes the examples'
// tests.
func TestTutorialIsTheExamples(t *testing.T) {
	raw, err := os.ReadFile("../docs/tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := block.FindAllStringSubmatch(string(raw), -1)
	if len(blocks) < 5 {
		t.Fatalf("docs/tutorial.md has %d code blocks from the examples, want the tables, registry, status, setup and test", len(blocks))
	}
	for _, b := range blocks {
		path, body := b[1], b[3]
		if path == "" {
			t.Errorf("a %s block names no examples file (<!-- from examples/... --> before it):\n%s", b[2], body)
			continue
		}
		src, err := os.ReadFile(filepath.Join("..", path))
		if err != nil {
			t.Errorf("block from %s: %v", path, err)
			continue
		}
		if !strings.Contains(string(src), body) {
			t.Errorf("docs/tutorial.md's block from %s is not in that file any more; copy it again:\n%s", path, body)
		}
	}
}
