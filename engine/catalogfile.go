package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"gopkg.in/yaml.v3"
)

// CatalogFileKind is the kind of a catalog file.
const CatalogFileKind = "Catalogs"

// catalogFile is what WriteCatalogs writes and ReadCatalogs reads: the
// registries a controller binary is built with, so that krtt, which is
// not, can check that binary's tables (krtt lint --catalog FILE).
type catalogFile struct {
	APIVersion string     `json:"apiVersion" yaml:"apiVersion"`
	Kind       string     `json:"kind" yaml:"kind"`
	Registries []*Catalog `json:"registries" yaml:"registries"`
}

// WriteCatalogs writes the catalogs as JSON, sorted by registry name.
func WriteCatalogs(w io.Writer, catalogs map[string]*Catalog) error {
	f := catalogFile{APIVersion: APIVersion, Kind: CatalogFileKind}
	for _, c := range catalogs {
		f.Registries = append(f.Registries, c)
	}
	sort.Slice(f.Registries, func(i, j int) bool { return f.Registries[i].Name < f.Registries[j].Name })
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// WriteCatalogFile writes the catalogs to path (see WriteCatalogs).
func WriteCatalogFile(path string, catalogs map[string]*Catalog) error {
	var b bytes.Buffer
	if err := WriteCatalogs(&b, catalogs); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// ReadCatalogFile reads a catalog file, JSON (as WriteCatalogs writes it)
// or YAML of the same shape, by registry name.
func ReadCatalogFile(path string) (map[string]*Catalog, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f catalogFile
	// JSON is YAML; the YAML decoder reads both, by the json names.
	var node map[string]any
	if err := yaml.Unmarshal(raw, &node); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	asJSON, err := json.Marshal(node)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(asJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Kind != CatalogFileKind {
		return nil, fmt.Errorf("%s: kind %q, want %s (a file engine.WriteCatalogFile writes)", path, f.Kind, CatalogFileKind)
	}
	out := map[string]*Catalog{}
	for _, c := range f.Registries {
		if c == nil || c.Name == "" {
			return nil, fmt.Errorf("%s: a registry without a name", path)
		}
		if _, dup := out[c.Name]; dup {
			return nil, fmt.Errorf("%s: registry %s listed twice", path, c.Name)
		}
		out[c.Name] = c
	}
	return out, nil
}
