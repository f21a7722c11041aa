package chaos

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// The chaos table in docs/reliability.md is the one make chaos prints: its
// header is printTable's.
func TestDocTableHeader(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(localcp.RepoRoot(), "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| run | Machines |") })
	if i < 0 || i+1 >= len(lines) {
		t.Fatal("docs/reliability.md has no chaos table (a line starting \"| run | Machines |\")")
	}
	if got := lines[i : i+2]; !slices.Equal(got, tableHeader) {
		t.Errorf("docs/reliability.md's chaos table header\n%s\nis not the one make chaos prints\n%s", strings.Join(got, "\n"), strings.Join(tableHeader, "\n"))
	}
}
