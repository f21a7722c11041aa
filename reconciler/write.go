package reconciler

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchFields sends patch, a JSON merge patch written out field by field
// (a nil value removes the field), to obj, which takes the answer in; a
// failed write leaves it as it was. A patch built from the fields a write
// changes costs a fraction of one derived by encoding the whole object
// before and after and diffing the two. Put the observed resourceVersion
// in it when a change made meanwhile must make the write conflict (a merge
// patch replaces whole lists).
func PatchFields(ctx context.Context, c client.Client, obj client.Object, patch map[string]any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
