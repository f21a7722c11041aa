package reconciler

import (
	"reflect"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// ObjectFields reads the fields states' waits name from obj by their JSON
// paths (status.deletion.nodeDrainStartTime), with now as the clock: what
// a registry gives engine.Registry.WaitFields. A nil obj has no field set.
//
// A typed object is read in place, following the JSON names of its
// struct fields: converting a whole Machine to a map for one or two
// timestamps was 8% of the operator's allocations. A field of a kind the
// walk does not know, and an object that is neither typed nor
// unstructured, is read from the object converted once.
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

// fields is obj as a map: an unstructured object's own, else converted on
// the first call; a failed conversion leaves no field set.
func (f *objectFields) fields() map[string]any {
	if u, ok := f.obj.(*unstructured.Unstructured); ok {
		return u.Object
	}
	if !f.done {
		f.done = true
		if f.obj != nil {
			f.m, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(f.obj)
		}
	}
	return f.m
}

func (f *objectFields) Time(path string) (time.Time, bool) {
	if v, known := f.walk(path); known {
		if !v.IsValid() {
			return time.Time{}, false
		}
		switch t := v.Interface().(type) {
		case metav1.Time:
			return t.Time, !t.IsZero()
		case metav1.MicroTime:
			return t.Time, !t.IsZero()
		case string:
			return parseTime(t)
		}
		return time.Time{}, false // a number or an object: no time
	}
	raw, ok, err := unstructured.NestedString(f.fields(), strings.Split(path, ".")...)
	if !ok || err != nil {
		return time.Time{}, false
	}
	return parseTime(raw)
}

func parseTime(raw string) (time.Time, bool) {
	if raw == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, raw)
	return t, err == nil
}

func (f *objectFields) Int(path string) (int64, bool) {
	if v, known := f.walk(path); known {
		if !v.IsValid() {
			return 0, false
		}
		switch {
		case v.CanInt():
			return v.Int(), true
		case v.CanUint():
			return int64(v.Uint()), true
		}
		return 0, false // a time, a string or an object: no integer
	}
	v, ok, err := unstructured.NestedInt64(f.fields(), strings.Split(path, ".")...)
	return v, ok && err == nil
}

// walk follows path through a typed object's structs (by JSON name, inline
// structs included), pointers and string-keyed maps. known is false when
// it cannot tell (an unstructured object, an unknown step): the caller
// then reads the converted map. A valid value is the field; an invalid one
// with known true means the field is not set (a nil pointer, no such map
// key, omitted).
func (f *objectFields) walk(path string) (v reflect.Value, known bool) {
	if f.obj == nil {
		return reflect.Value{}, true
	}
	if _, ok := f.obj.(*unstructured.Unstructured); ok {
		return reflect.Value{}, false
	}
	v = reflect.ValueOf(f.obj)
	for _, name := range strings.Split(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, true
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			fi, ok := jsonFields(v.Type())[name]
			if !ok {
				return reflect.Value{}, false
			}
			var err error
			if v, err = v.FieldByIndexErr(fi.index); err != nil {
				return reflect.Value{}, true // through a nil inline pointer
			}
			// What the JSON of the object leaves out is not set, as the
			// converted map would say: a zero omitzero field, or an
			// omitempty one that is empty (never a struct).
			if v.IsZero() && (fi.omitZero || fi.omitEmpty && v.Kind() != reflect.Struct) {
				return reflect.Value{}, true
			}
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return reflect.Value{}, false
			}
			if v = v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key())); !v.IsValid() {
				return reflect.Value{}, true
			}
		default:
			return reflect.Value{}, false
		}
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}, true
		}
		v = v.Elem()
	}
	return v, true
}

var jsonFieldCache sync.Map // reflect.Type → map[string]jsonField

type jsonField struct {
	index               []int
	omitEmpty, omitZero bool
}

// jsonFields maps the JSON names of a struct's fields to their index
// paths, the fields of inline (embedded or ",inline") structs included.
func jsonFields(t reflect.Type) map[string]jsonField {
	if m, ok := jsonFieldCache.Load(t); ok {
		return m.(map[string]jsonField)
	}
	m := map[string]jsonField{}
	var add func(t reflect.Type, prefix []int)
	add = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" && opts == "" {
				continue
			}
			idx := append(append([]int(nil), prefix...), i)
			inline := strings.Contains(","+opts+",", ",inline,") || sf.Anonymous && name == ""
			if inline {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft, idx)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if _, dup := m[name]; !dup {
				o := "," + opts + ","
				m[name] = jsonField{index: idx, omitEmpty: strings.Contains(o, ",omitempty,"), omitZero: strings.Contains(o, ",omitzero,")}
			}
		}
	}
	add(t, nil)
	jsonFieldCache.Store(t, m)
	return m
}
