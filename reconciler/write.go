package reconciler

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MetadataOf is an empty metadata-only object naming obj, for a write's
// answer: the API server then sends back the object's metadata alone, so
// neither side encodes or decodes the whole object for a write whose
// caller only needs the new resourceVersion, generation, labels or owners.
func MetadataOf(c client.Client, obj client.Object) (*metav1.PartialObjectMetadata, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return nil, err
	}
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(gvk)
	answer.SetNamespace(obj.GetNamespace())
	answer.SetName(obj.GetName())
	return answer, nil
}

// PatchFields sends patch, a JSON merge patch written out field by field
// (a nil value removes the field), to obj, and returns the answer's
// metadata; obj itself is left as it was. A patch built from the fields a
// write changes costs a fraction of one derived by encoding the whole
// object before and after and diffing the two. Put the observed
// resourceVersion in it when a change made meanwhile must make the write
// conflict (a merge patch replaces whole lists).
func PatchFields(ctx context.Context, c client.Client, obj client.Object, patch map[string]any) (*metav1.PartialObjectMetadata, error) {
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	answer, err := MetadataOf(c, obj)
	if err != nil {
		return nil, err
	}
	if err := c.Patch(ctx, answer, client.RawPatch(types.MergePatchType, data)); err != nil {
		return nil, err
	}
	return answer, nil
}
