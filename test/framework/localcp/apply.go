package localcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Applied counts what ApplyKustomization did.
type Applied struct {
	Created, Existing []string
}

// ApplyKustomization creates the objects of the resources listed in
// dir/kustomization.yaml (plain files only, no patches or generators), in
// order, leaving objects that already exist untouched.
func ApplyKustomization(ctx context.Context, c client.Client, dir string) (Applied, error) {
	var res Applied
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return res, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		return res, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	for _, file := range k.Resources {
		objs, err := ReadObjects(filepath.Join(dir, file))
		if err != nil {
			return res, err
		}
		for _, o := range objs {
			name := o.GetKind() + " " + client.ObjectKeyFromObject(o).String()
			err := c.Create(ctx, o)
			switch {
			case apierrors.IsAlreadyExists(err):
				res.Existing = append(res.Existing, name)
			case err != nil:
				return res, fmt.Errorf("create %s from %s: %w", name, file, err)
			default:
				res.Created = append(res.Created, name)
			}
		}
	}
	return res, nil
}

// ReadObjects reads the YAML documents of a file as unstructured objects.
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		out = append(out, u)
	}
}
