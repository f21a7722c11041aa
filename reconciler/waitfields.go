package reconciler

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// ObjectFields reads the fields states' waits name from obj by their JSON
// paths (status.deletion.nodeDrainStartTime), with now as the clock: what
// a registry gives engine.Registry.WaitFields. obj is converted once, on
// the first read; a nil obj has no field set.
func ObjectFields(obj client.Object, now time.Time) engine.WaitFields {
	return &objectFields{obj: obj, now: now}
}

type objectFields struct {
	obj  client.Object
	now  time.Time
	done bool
	m    map[string]any
}

func (f *objectFields) Now() time.Time { return f.now }

func (f *objectFields) fields() map[string]any {
	if !f.done {
		f.done = true
		if f.obj != nil {
			// An object the scheme converts; a failure leaves no field set.
			f.m, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(f.obj)
		}
	}
	return f.m
}

func (f *objectFields) Time(path string) (time.Time, bool) {
	raw, ok, err := unstructured.NestedString(f.fields(), strings.Split(path, ".")...)
	if !ok || err != nil || raw == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, raw)
	return t, err == nil
}

func (f *objectFields) Int(path string) (int64, bool) {
	v, ok, err := unstructured.NestedInt64(f.fields(), strings.Split(path, ".")...)
	return v, ok && err == nil
}
