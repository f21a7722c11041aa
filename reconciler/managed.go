package reconciler

import (
	"maps"
	"slices"
	"strings"
)

// A controller that copies labels or annotations from one object onto
// another (a MachineSet's template onto its Machines, a MachineDeployment
// onto its MachineSets) must remove a key once its source drops it, yet
// leave the keys people and other controllers put there. It records the
// keys it copied, comma separated, in an annotation of the target.

// KeyList is the record of the keys of m: sorted, comma separated.
func KeyList(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

// ManagedKeys are the keys the record annotation of annotations lists.
func ManagedKeys(annotations map[string]string, record string) []string {
	v := annotations[record]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// FollowManaged makes have carry want: the managed keys want no longer has
// go, want's keys are set, every other key stays. have is not changed.
func FollowManaged(have map[string]string, managed []string, want map[string]string) map[string]string {
	out := maps.Clone(have)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range managed {
		if _, ok := want[k]; !ok {
			delete(out, k)
		}
	}
	maps.Copy(out, want)
	return out
}

// Record sets the record annotation of annotations to the keys of copied,
// or removes it when there are none.
func Record(annotations map[string]string, record string, copied map[string]string) {
	if l := KeyList(copied); l != "" {
		annotations[record] = l
		return
	}
	delete(annotations, record)
}
