package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/api/kit"
)

// statusConflictRetries bounds how often a status patch is rebased onto a
// newer object that another writer changed.
const statusConflictRetries = 3

// errStale says the object moved to another state while this reconcile
// decided: the decision is stale, and the newer version's watch event
// brings the object back.
var errStale = fmt.Errorf("the object's state changed meanwhile")

// patcher writes one reconcile's changes: metadata and spec first, with
// optimistic locking (a merge patch replaces whole lists such as finalizers,
// so a concurrent change must not be lost), then status, merging only the
// condition types this controller owns into the newest conditions, so other
// controllers' conditions survive.
type patcher[O client.Object] struct {
	client    client.Client
	apiReader client.Reader
	newObject func() O
	status    func(O) kit.Status
	owned     map[string]bool
	finalizer string
	// initialState is the state an empty status.state stands for: a status
	// written by the object's first reconcile moved nothing.
	initialState string
	// own, when set, learns every resourceVersion a write replaced.
	own *ownWrites
}

// sameState compares two persisted states, an empty one being the initial.
func (p *patcher[O]) sameState(a, b string) bool {
	if a == "" {
		a = p.initialState
	}
	if b == "" {
		b = p.initialState
	}
	return a == b
}

// patch writes what changed between before and after. A conflict on the
// metadata patch, or a status conflict against an object whose state moved,
// returns a conflict error the caller treats as "decide again". observed
// says the reconcile succeeded (its status observes the object's
// generation).
func (p *patcher[O]) patch(ctx context.Context, before, after O, observed bool) error {
	bm, err := toMap(before)
	if err != nil {
		return err
	}
	am, err := toMap(after)
	if err != nil {
		return err
	}
	bs, _ := bm["status"].(map[string]any)
	as, _ := am["status"].(map[string]any)
	delete(bm, "status")
	delete(am, "status")
	if !equality.Semantic.DeepEqual(bm, am) {
		obj := after.DeepCopyObject().(O)
		if err := p.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patch: %w", err)
		}
		p.own.wrote(client.ObjectKeyFromObject(after), before.GetResourceVersion())
		after.SetResourceVersion(obj.GetResourceVersion())
		if observed && obj.GetGeneration() != after.GetGeneration() {
			p.observeOwnGeneration(after, obj.GetGeneration())
			if as, err = statusOf(after); err != nil {
				return err
			}
		}
	}
	if p.finalizer != "" && hasFinalizer(before, p.finalizer) && !hasFinalizer(after, p.finalizer) {
		// The object is about to go; there is no status left to keep.
		return nil
	}
	if equality.Semantic.DeepEqual(bs, as) {
		return nil
	}
	return p.patchStatus(ctx, before, after, bs, as)
}

// observeOwnGeneration moves the status of a reconcile that observed the
// object's generation onto the generation its own spec write made: the
// metadata patch carried the observed resourceVersion, so nobody else
// changed the spec in between, and the status written next describes the
// spec as this reconcile left it. Without it the next reconcile would
// write status once more only to say observedGeneration+1 (status and the
// conditions it set).
func (p *patcher[O]) observeOwnGeneration(after O, gen int64) {
	old := after.GetGeneration()
	after.SetGeneration(gen)
	rec := p.status(after).GetRecord()
	if rec.ObservedGeneration == old {
		rec.ObservedGeneration = gen
		p.status(after).SetRecord(rec)
	}
	conds := p.status(after).GetConditions()
	for i := range conds {
		if p.owned[conds[i].Type] && conds[i].ObservedGeneration == old {
			conds[i].ObservedGeneration = gen
		}
	}
	p.status(after).SetConditions(conds)
}

// statusOf is the object's status as a map.
func statusOf(o client.Object) (map[string]any, error) {
	m, err := toMap(o)
	if err != nil {
		return nil, err
	}
	st, _ := m["status"].(map[string]any)
	return st, nil
}

func (p *patcher[O]) patchStatus(ctx context.Context, before, after O, bs, as map[string]any) error {
	fields, err := fieldPatch(bs, as)
	if err != nil {
		return err
	}
	changes := ownedChanges(p.status(before).GetConditions(), p.status(after).GetConditions(), p.owned)
	base := before.DeepCopyObject().(O)
	base.SetResourceVersion(after.GetResourceVersion())
	for attempt := 1; ; attempt++ {
		target, err := rebase(base, fields, changes, p.status)
		if err != nil {
			return err
		}
		err = p.client.Status().Patch(ctx, target, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		switch {
		case err == nil:
			p.own.wrote(client.ObjectKeyFromObject(after), base.GetResourceVersion())
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsConflict(err) || attempt == statusConflictRetries:
			return fmt.Errorf("patch status: %w", err)
		}
		latest := p.newObject()
		if gerr := p.apiReader.Get(ctx, client.ObjectKeyFromObject(before), latest); gerr != nil {
			return fmt.Errorf("patch status: %w (re-read: %v)", err, gerr)
		}
		if !p.sameState(p.status(latest).GetRecord().State, p.status(before).GetRecord().State) {
			return fmt.Errorf("patch status: %w: %w", errStale, err)
		}
		// Someone else wrote (another controller's condition, a label):
		// put this reconcile's changes on top of theirs.
		base = latest
	}
}

// IsStale reports whether a patch error means the reconcile decided on an
// outdated object; the newer version's event brings it back.
func IsStale(err error) bool {
	return apierrors.IsConflict(err) || errors.Is(err, errStale)
}

func hasFinalizer(o client.Object, f string) bool {
	for _, x := range o.GetFinalizers() {
		if x == f {
			return true
		}
	}
	return false
}

// toMap converts a copy: for unstructured objects the converter hands back
// the object's own map.
func toMap(o runtime.Object) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.DeepCopyObject())
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", o, err)
	}
	return m, nil
}

// fieldPatch is the merge patch from one status to the other, conditions
// left out (they are merged by type).
func fieldPatch(before, after map[string]any) ([]byte, error) {
	strip := func(m map[string]any) ([]byte, error) {
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "conditions" {
				c[k] = v
			}
		}
		return json.Marshal(c)
	}
	b, err := strip(before)
	if err != nil {
		return nil, err
	}
	a, err := strip(after)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(b, a)
}

// conditionChange is one owned condition type this reconcile set (cond) or
// removed (nil).
type conditionChange struct {
	typ  string
	cond *metav1.Condition
}

func ownedChanges(before, after []metav1.Condition, owned map[string]bool) []conditionChange {
	var out []conditionChange
	seen := map[string]bool{}
	for _, list := range [][]metav1.Condition{after, before} {
		for _, c := range list {
			if seen[c.Type] || !owned[c.Type] {
				continue
			}
			seen[c.Type] = true
			a, b := meta.FindStatusCondition(after, c.Type), meta.FindStatusCondition(before, c.Type)
			if a != nil && b != nil && equality.Semantic.DeepEqual(*a, *b) {
				continue
			}
			ch := conditionChange{typ: c.Type}
			if a != nil {
				cc := *a
				ch.cond = &cc
			}
			out = append(out, ch)
		}
	}
	return out
}

// rebase applies the status field patch and the owned condition changes to
// a copy of base.
func rebase[O client.Object](base O, fields []byte, changes []conditionChange, status func(O) kit.Status) (O, error) {
	var zero O
	m, err := toMap(base)
	if err != nil {
		return zero, err
	}
	st, _ := m["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return zero, err
	}
	merged, err := jsonpatch.MergePatch(raw, fields)
	if err != nil {
		return zero, fmt.Errorf("apply status patch: %w", err)
	}
	var ns map[string]any
	if err := json.Unmarshal(merged, &ns); err != nil {
		return zero, err
	}
	m["status"] = ns
	target := base.DeepCopyObject().(O)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, target); err != nil {
		return zero, fmt.Errorf("convert status back: %w", err)
	}
	list := status(target).GetConditions()
	for _, ch := range changes {
		if ch.cond == nil {
			meta.RemoveStatusCondition(&list, ch.typ)
			continue
		}
		if i := indexOf(list, ch.typ); i >= 0 {
			list[i] = *ch.cond
		} else {
			list = append(list, *ch.cond)
		}
	}
	status(target).SetConditions(list)
	return target, nil
}

func indexOf(list []metav1.Condition, t string) int {
	for i := range list {
		if list[i].Type == t {
			return i
		}
	}
	return -1
}
