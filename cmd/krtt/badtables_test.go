package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/test/framework/badtables"
)

// krtt lint refuses every malformed fixture with the same findings as the
// operator's loader (test/framework/badtables/testdata/bad/*/want.golden) and exits 1.
func TestLintRefusesBadTables(t *testing.T) {
	cases, err := badtables.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			code, out, errOut := krtt(t, "lint", c.Dir)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			if got := badtables.Errors(out, c.Dir); !slices.Equal(got, c.Want) {
				t.Fatalf("--- got\n%s\n--- want (%s)\n%s", strings.Join(got, "\n"), badtables.GoldenFile(c), strings.Join(c.Want, "\n"))
			}
		})
	}
}

func TestLintRefusesHugeFile(t *testing.T) {
	dir := t.TempDir()
	want, err := badtables.Huge(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := krtt(t, "lint", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	if got := badtables.Errors(out, dir); !slices.Equal(got, []string{want}) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}
