package door

import (
	"bytes"
	"os"
	"testing"

	"github.com/krtt-dev/krtt/engine"
)

// catalog.json is what `krtt lint --catalog door/catalog.json
// door/transitions` checks the tables with; it must be the registry as
// built. Regenerate: go run ./cmd/door -dump-catalog door/catalog.json
func TestCatalogFileIsCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := engine.WriteCatalogs(&b, Catalogs()); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("door/catalog.json is stale: run `go run ./cmd/door -dump-catalog door/catalog.json` in examples/")
	}
	back, err := engine.ReadCatalogFile("catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(back["door"].Entries), len(Catalogs()["door"].Entries); got != want {
		t.Fatalf("read back %d entries, want %d", got, want)
	}
}
