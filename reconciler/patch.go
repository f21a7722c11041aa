package reconciler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
//
// Both objects are encoded once, compared and diffed as JSON, status
// apart, and each patch is sent as computed: every reconcile passes here,
// so converting whole objects to maps, or encoding and diffing them again
// for each write (as a generic merge-from helper does), would be most of
// the operator's allocations.
func (p *patcher[O]) patch(ctx context.Context, before, after O, observed bool) error {
	bd, err := docOf(before)
	if err != nil {
		return err
	}
	ad, err := docOf(after)
	if err != nil {
		return err
	}
	if !sameFields(bd.rest, ad.rest) {
		data, err := mergePatch(bd.rest, ad.rest, before.GetResourceVersion())
		if err != nil {
			return err
		}
		obj := p.answer(after)
		if err := p.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patch: %w", err)
		}
		p.own.wrote(client.ObjectKeyFromObject(after), before.GetResourceVersion())
		after.SetResourceVersion(obj.GetResourceVersion())
		if observed && obj.GetGeneration() != after.GetGeneration() {
			p.observeOwnGeneration(after, obj.GetGeneration())
			if ad, err = docOf(after); err != nil {
				return err
			}
		}
	}
	if p.finalizer != "" && hasFinalizer(before, p.finalizer) && !hasFinalizer(after, p.finalizer) && len(after.GetFinalizers()) == 0 {
		// The object goes with this patch; there is no status left to
		// keep. One that another finalizer holds keeps showing where this
		// controller left it.
		return nil
	}
	if sameFields(bd.status, ad.status) {
		return nil
	}
	return p.patchStatus(ctx, before, after, bd.status, ad.status)
}

// answer is an empty object of o's name for a write's answer: the patch is
// sent as computed, so the object the client is handed only names the
// target and takes the answer in.
func (p *patcher[O]) answer(o O) O {
	obj := p.newObject()
	obj.SetNamespace(o.GetNamespace())
	obj.SetName(o.GetName())
	return obj
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

func (p *patcher[O]) patchStatus(ctx context.Context, before, after O, bs, as fields) error {
	changed, err := mergePatch(withoutConditions(bs), withoutConditions(as), "")
	if err != nil {
		return err
	}
	var status fields
	if err := json.Unmarshal(changed, &status); err != nil {
		return err
	}
	changes := ownedChanges(p.status(before).GetConditions(), p.status(after).GetConditions(), p.owned)
	conds, rv := p.status(before).GetConditions(), after.GetResourceVersion()
	for attempt := 1; ; attempt++ {
		data, err := statusPatch(status, conds, changes, rv)
		if err != nil {
			return err
		}
		if data == nil {
			return nil
		}
		err = p.client.Status().Patch(ctx, p.answer(after), client.RawPatch(types.MergePatchType, data))
		switch {
		case err == nil:
			p.own.wrote(client.ObjectKeyFromObject(after), rv)
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
		conds, rv = p.status(latest).GetConditions(), latest.GetResourceVersion()
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

// fields are the top-level fields of a JSON object, each as it is encoded.
type fields map[string]json.RawMessage

// doc is an object as JSON: its status fields apart from the rest.
type doc struct {
	rest, status fields
}

func docOf(o runtime.Object) (doc, error) {
	raw, err := json.Marshal(o)
	if err != nil {
		return doc{}, fmt.Errorf("encode %T: %w", o, err)
	}
	var d doc
	if err := json.Unmarshal(raw, &d.rest); err != nil {
		return doc{}, fmt.Errorf("decode %T: %w", o, err)
	}
	if st, ok := d.rest["status"]; ok {
		delete(d.rest, "status")
		if err := json.Unmarshal(st, &d.status); err != nil {
			return doc{}, fmt.Errorf("decode the status of %T: %w", o, err)
		}
	}
	return d, nil
}

// sameFields compares two encodings field by field. Encoding is
// deterministic (struct fields in order, map keys sorted), so equal bytes
// are equal values; an empty list or object and null are the same, as an
// absent field and an empty one are to semantic equality.
func sameFields(a, b fields) bool {
	for k, v := range a {
		if w, ok := b[k]; !(ok && bytes.Equal(v, w)) && !(isEmpty(v) && isEmpty(w)) {
			return false
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok && !isEmpty(w) {
			return false
		}
	}
	return true
}

func isEmpty(v json.RawMessage) bool {
	s := string(v)
	return s == "" || s == "null" || s == "[]" || s == "{}"
}

func withoutConditions(f fields) fields {
	c := make(fields, len(f))
	for k, v := range f {
		if k != "conditions" {
			c[k] = v
		}
	}
	return c
}

// mergePatch is the JSON merge patch from one encoding to the other; with a
// resourceVersion it carries it too, so the write fails with a conflict
// when the object changed since (a merge patch replaces whole lists, such
// as finalizers, so a change made meanwhile must not be lost).
func mergePatch(before, after fields, resourceVersion string) ([]byte, error) {
	before, after = differing(before, after)
	b, err := json.Marshal(before)
	if err != nil {
		return nil, err
	}
	a, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.CreateMergePatch(b, a)
	if err != nil || resourceVersion == "" {
		return patch, err
	}
	return withResourceVersion(patch, resourceVersion)
}

// differing keeps the fields whose encodings differ: a field equal on both
// sides adds nothing to a merge patch, and the Machine's spec is left
// alone by most writes, so it is neither encoded nor diffed again.
func differing(before, after fields) (fields, fields) {
	b, a := fields{}, fields{}
	for k, v := range before {
		if w, ok := after[k]; !ok || !bytes.Equal(v, w) {
			b[k] = v
		}
	}
	for k, w := range after {
		if v, ok := before[k]; !ok || !bytes.Equal(v, w) {
			a[k] = w
		}
	}
	return b, a
}

func withResourceVersion(patch []byte, resourceVersion string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, err
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	md["resourceVersion"] = resourceVersion
	return json.Marshal(m)
}

// statusPatch is the status write of status (a merge patch of the fields
// other than conditions) and the owned condition changes put on conds, the
// conditions of the version resourceVersion names; nil when it would change
// nothing.
func statusPatch(status fields, conds []metav1.Condition, changes []conditionChange, resourceVersion string) ([]byte, error) {
	list := slices.Clone(conds)
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
	st := maps.Clone(status)
	if !equality.Semantic.DeepEqual(list, conds) {
		raw, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		if st == nil {
			st = fields{}
		}
		st["conditions"] = raw
	}
	if len(st) == 0 {
		return nil, nil
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]string{"resourceVersion": resourceVersion},
		"status":   st,
	})
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

func indexOf(list []metav1.Condition, t string) int {
	for i := range list {
		if list[i].Type == t {
			return i
		}
	}
	return -1
}
