package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
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

// PatchOwnersAndLabels sets obj's owner references to refs (the whole list;
// none removes it) and the given labels (other labels stay), as a JSON patch
// that first tests the object's uid, its owner references and, when it had
// none, its labels against what was observed. Unlike a resourceVersion
// precondition, the write does not fail because something else changed
// meanwhile (a provider writing its status); it fails only when what it
// replaces changed: an owner added or removed since the observation makes
// it a conflict (apierrors.IsConflict), so the caller decides again on the
// newer version instead of overwriting it. obj takes the answer in; a
// failed write leaves it as it was.
func PatchOwnersAndLabels(ctx context.Context, c client.Client, obj client.Object, refs []metav1.OwnerReference, labels map[string]string) error {
	ops := ownersAndLabelsOps(obj, refs, labels)
	if len(ops) == 0 {
		return nil
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	err = c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, data))
	if failedTest(err) {
		gvk, _ := apiutil.GVKForObject(obj, c.Scheme())
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName(),
			errors.New("its owner references or labels changed since they were read"))
	}
	return err
}

type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// ownersAndLabelsOps builds the operations: none when the object already
// has those owner references and labels.
func ownersAndLabelsOps(obj client.Object, refs []metav1.OwnerReference, labels map[string]string) []jsonPatchOp {
	var ops []jsonPatchOp
	observed := obj.GetOwnerReferences()
	if !equality.Semantic.DeepEqual(observed, refs) && (len(observed) > 0 || len(refs) > 0) {
		// A test of a member the object lacks passes with the value null
		// (RFC 6902 leaves it open; the API server's JSON patch library has
		// always done so, and TestPatchOwnersAndLabels checks it).
		var want any = observed
		if len(observed) == 0 {
			want = nil
		}
		ops = append(ops, jsonPatchOp{Op: "test", Path: "/metadata/ownerReferences", Value: nullable(want)})
		if len(refs) == 0 {
			ops = append(ops, jsonPatchOp{Op: "remove", Path: "/metadata/ownerReferences"})
		} else {
			ops = append(ops, jsonPatchOp{Op: "add", Path: "/metadata/ownerReferences", Value: refs})
		}
	}
	current := obj.GetLabels()
	var missing []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if v, ok := current[k]; !ok || v != labels[k] {
			missing = append(missing, k)
		}
	}
	switch {
	case len(missing) == 0:
	case current == nil:
		// Adding the whole map would replace labels set meanwhile.
		ops = append(ops, jsonPatchOp{Op: "test", Path: "/metadata/labels", Value: nullable(nil)},
			jsonPatchOp{Op: "add", Path: "/metadata/labels", Value: labels})
	default:
		for _, k := range missing {
			ops = append(ops, jsonPatchOp{Op: "add", Path: "/metadata/labels/" + escapeJSONPointer(k), Value: labels[k]})
		}
	}
	if len(ops) == 0 {
		return nil
	}
	if uid := obj.GetUID(); uid != "" {
		// Never write to an object recreated under the same name.
		ops = append([]jsonPatchOp{{Op: "test", Path: "/metadata/uid", Value: string(uid)}}, ops...)
	}
	return ops
}

// nullable makes a test operation carry "value": null, which omitempty
// would otherwise leave out.
func nullable(v any) any {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

func escapeJSONPointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// failedTest: the API server answers a JSON patch whose test operation (or
// a path it names) no longer holds with 422 and no cause, which no
// validation error lacks.
func failedTest(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || len(d.Causes) == 0
}
