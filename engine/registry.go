package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// OutcomeStatus is how an action ended.
type OutcomeStatus string

const (
	Done       OutcomeStatus = "Done"
	InProgress OutcomeStatus = "InProgress"
	Failed     OutcomeStatus = "Failed"
)

// Outcome is what an action reports back.
type Outcome struct {
	Status OutcomeStatus
	// Message says what happened or what is awaited; rows can put it into
	// a condition message with {detail}.
	Message string
	Err     error
	// Details are named parts of what the action saw, for a row's condition
	// messages beside {detail}: {name} takes Details[name]. An action
	// declares the names it offers (Offers), so a table that uses one its
	// row's actions never offer is refused when it loads.
	Details map[string]string
	// WroteNothing: the action, not declared pure or write-through, reports
	// that this time it wrote nothing to the API server and changed nothing
	// a read is keyed by (a drain whose Node was cordoned already and that
	// found no Pod left to evict). The observation is as true as after a
	// pure action, so the kit may decide again (see Step.KeptObservation).
	// Never set after a write.
	WroteNothing bool
}

// Untouched marks an outcome as one after which the action wrote nothing
// (see Outcome.WroteNothing).
func (o Outcome) Untouched() Outcome {
	o.WroteNothing = true
	return o
}

// With returns the outcome with the named detail set (see Outcome.Details).
func (o Outcome) With(name, value string) Outcome {
	d := make(map[string]string, len(o.Details)+1)
	for k, v := range o.Details {
		d[k] = v
	}
	d[name] = value
	o.Details = d
	return o
}

// Outcome constructors keep action code short.
func OK() Outcome                    { return Outcome{Status: Done} }
func OKf(f string, a ...any) Outcome { return Outcome{Status: Done, Message: fmt.Sprintf(f, a...)} }
func Wait(f string, a ...any) Outcome {
	return Outcome{Status: InProgress, Message: fmt.Sprintf(f, a...)}
}
func Fail(err error) Outcome           { return Outcome{Status: Failed, Message: err.Error(), Err: err} }
func Failf(f string, a ...any) Outcome { return Fail(fmt.Errorf(f, a...)) }

// ActionFunc does one named piece of work for the environment E (the
// controller's view of one object). It must be idempotent.
type ActionFunc[E any] func(ctx context.Context, env E) Outcome

// EntryKind says what a catalog entry is.
type EntryKind string

const (
	EntryFact   EntryKind = "fact"
	EntryAction EntryKind = "action"
	EntryGuard  EntryKind = "guard"
	// EntryStatus writes a status field a row result names.
	EntryStatus EntryKind = "status"
	// EntryMirror runs on every reconcile after the actions and mirrors
	// what was observed into status (conditions of other objects, dates).
	EntryMirror EntryKind = "mirror"
	// EntrySummary runs last and summarises conditions into one (Ready),
	// unless the row that fired wrote that condition itself.
	EntrySummary EntryKind = "summary"
	// EntryCountFrom moves the start a wait's timeout counts from (a
	// state's wait names it in countFrom).
	EntryCountFrom EntryKind = "countFrom"
	// EntryRequeueAt says when to look at an object again (a row's result
	// names it in requeueAt).
	EntryRequeueAt EntryKind = "requeueAt"
)

// Entry describes one registered observer, action or guard for lint and docs.
type Entry struct {
	Kind EntryKind `json:"kind"`
	Name string    `json:"name"`
	// Description is the line the docs show for an action, guard, status
	// field, mirror or summary. A fact has none here: the tables declare
	// it, with its description, and Go only computes it.
	Description string `json:"description,omitempty"`
	// MayWait: the action can report InProgress, so rows running it must
	// say what happens meanwhile (inProgress).
	MayWait bool `json:"mayWait,omitempty"`
	// Reads: the facts a guard depends on.
	Reads []string `json:"reads,omitempty"`
	// Pure: the action writes nothing to the API server and changes only
	// the reconciled object, in memory (the controller's patches write it):
	// its status, or metadata and spec fields that no read of the observer
	// is keyed by (a finalizer, a label, a copied name; never a reference
	// or an ID another object is looked up by). What the facts were
	// observed from is then unchanged, so after a row whose actions are all
	// pure the controller kit decides again at once (run to completion, see
	// Step.KeptObservation).
	Pure bool `json:"pure,omitempty"`
	// WritesThrough: the action may write to the API server (another
	// object) or change a field of the reconciled object that a read of
	// the observer is keyed by, and puts every such change back into the
	// observation itself: the API server's answer to its write into the
	// observed copy of the object it wrote, a re-read (from the cache) of
	// what the changed field keys. Facts observed anew after it are then
	// what a new observation would find once the cache has caught up with
	// the action's own writes, so the kit may decide again at once, as
	// after a pure action (see Step.KeptObservation).
	//
	// Never marked: an action whose effect arrives later, through another
	// controller, the garbage collector or the API server (an eviction, a
	// Pod's termination, a deletion that finalizers hold); an
	// action that writes an object without putting the answer into the
	// observation; an action that changes what facts read through objects
	// the observation does not hold.
	WritesThrough bool `json:"writesThrough,omitempty"`
	// Offers: the named details (Outcome.Details) the action may give a
	// row's condition messages as {name}.
	Offers []string `json:"offers,omitempty"`
}

// Catalog is the Go-free view of a registry: names and descriptions (of
// everything but facts, which the tables describe).
type Catalog struct {
	Name    string  `json:"name"`
	Entries []Entry `json:"entries"`
}

// Lookup finds an entry by kind and name.
func (c *Catalog) Lookup(kind EntryKind, name string) (Entry, bool) {
	for _, e := range c.Entries {
		if e.Kind == kind && e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

type observer[E any] struct {
	entry Entry
	value func(E) string
}

type action[E any] struct {
	entry Entry
	fn    ActionFunc[E]
}

// Registry holds the Go side of a table set: observers computing the facts
// the tables declare (by name only: the declaration, domain and
// description live in the tables), actions doing work and guards, each by
// name with a one-line description, and the setters that project a row's
// result onto the object's status.
type Registry[E any] struct {
	name      string
	observers map[string]observer[E]
	actions   map[string]action[E]
	status    map[string]statusSetter[E]
	mirrors   []projection[E]
	summaries []projection[E]
	// waitFields reads the fields states' waits name; countFrom holds the
	// hooks they name.
	waitFields func(E) WaitFields
	countFrom  map[string]countFromHook[E]
	// requeueAt holds the hooks rows' results name.
	requeueAt map[string]requeueAtHook[E]
}

type requeueAtHook[E any] struct {
	entry Entry
	fn    func(E) time.Time
}

type countFromHook[E any] struct {
	entry Entry
	fn    func(E, time.Time) time.Time
}

type statusSetter[E any] struct {
	entry Entry
	set   func(E, string)
}

type projection[E any] struct {
	entry Entry
	fn    func(E)
}

// LazyRegistry returns a function that builds the registry named name once,
// on first use, by calling each fill in turn, and returns that same registry
// ever after: the one way a controller package declares its registry.
func LazyRegistry[E any](name string, fill ...func(*Registry[E])) func() *Registry[E] {
	return sync.OnceValue(func() *Registry[E] {
		r := NewRegistry[E](name)
		for _, f := range fill {
			f(r)
		}
		return r
	})
}

// NewRegistry returns an empty registry; tables name it in spec.registry.
func NewRegistry[E any](name string) *Registry[E] {
	return &Registry[E]{name: name, observers: map[string]observer[E]{}, actions: map[string]action[E]{},
		status: map[string]statusSetter[E]{}, countFrom: map[string]countFromHook[E]{}, requeueAt: map[string]requeueAtHook[E]{}}
}

// StatusField registers the setter of a status field that rows name in
// their results (status: {name: value}); lint checks every declared field
// has one, so a field added in YAML cannot be silently dropped.
func (r *Registry[E]) StatusField(name, description string, set func(env E, value string)) {
	if _, dup := r.status[name]; dup {
		panic(fmt.Sprintf("registry %s: status field %q registered twice", r.name, name))
	}
	r.status[name] = statusSetter[E]{entry: Entry{Kind: EntryStatus, Name: name, Description: description}, set: set}
}

// Mirror registers a projection that runs on every reconcile, after the
// row's actions and before the row's conditions are written (so a row's
// condition wins): it copies what was observed onto the object's status.
func (r *Registry[E]) Mirror(name, description string, fn func(env E)) {
	r.mirrors = append(r.mirrors, projection[E]{entry: Entry{Kind: EntryMirror, Name: name, Description: description}, fn: fn})
}

// Summary registers the projection of one condition type from the others;
// it runs last, and not when the row that fired wrote that type itself.
func (r *Registry[E]) Summary(conditionType, description string, fn func(env E)) {
	r.summaries = append(r.summaries, projection[E]{entry: Entry{Kind: EntrySummary, Name: conditionType, Description: description}, fn: fn})
}

// WaitFields registers how the fields that states' waits name (since,
// timeout, armedBy) are read from the environment's object, with the
// observation's clock; the engine computes timed-out facts and deadlines
// from them.
func (r *Registry[E]) WaitFields(fn func(env E) WaitFields) { r.waitFields = fn }

// CountFrom registers a hook a state's wait names in countFrom: given the
// wait's start it returns when the timeout counts from, the start or later.
func (r *Registry[E]) CountFrom(name, description string, fn func(env E, start time.Time) time.Time) {
	if _, dup := r.countFrom[name]; dup {
		panic(fmt.Sprintf("registry %s: countFrom hook %q registered twice", r.name, name))
	}
	r.countFrom[name] = countFromHook[E]{entry: Entry{Kind: EntryCountFrom, Name: name, Description: description}, fn: fn}
}

// RequeueAt registers a hook a row's result names in requeueAt: from the
// observation it returns when to look at the object again (zero: no
// particular time), so a row waiting for a moment the facts know wakes
// then instead of polling.
func (r *Registry[E]) RequeueAt(name, description string, fn func(env E) time.Time) {
	if _, dup := r.requeueAt[name]; dup {
		panic(fmt.Sprintf("registry %s: requeueAt hook %q registered twice", r.name, name))
	}
	r.requeueAt[name] = requeueAtHook[E]{entry: Entry{Kind: EntryRequeueAt, Name: name, Description: description}, fn: fn}
}

// Name is the registry's name.
func (r *Registry[E]) Name() string { return r.name }

func (r *Registry[E]) addObserver(o observer[E]) {
	if _, dup := r.observers[o.entry.Name]; dup {
		panic(fmt.Sprintf("registry %s: %s %q registered twice", r.name, o.entry.Kind, o.entry.Name))
	}
	r.observers[o.entry.Name] = o
}

// Bool registers the observer of a bool fact the tables declare.
func (r *Registry[E]) Bool(name string, fn func(E) bool) {
	r.addObserver(observer[E]{entry: Entry{Kind: EntryFact, Name: name}, value: func(e E) string {
		if fn(e) {
			return "true"
		}
		return "false"
	}})
}

// Enum registers the observer of an enum fact the tables declare; fn
// returns a value name.
func (r *Registry[E]) Enum(name string, fn func(E) string) {
	r.addObserver(observer[E]{entry: Entry{Kind: EntryFact, Name: name}, value: fn})
}

// Guard registers a named predicate for what a fact cannot express; reads
// lists the facts it depends on, for the docs and the checker.
func (r *Registry[E]) Guard(name, description string, reads []string, fn func(E) bool) {
	r.addObserver(observer[E]{entry: Entry{Kind: EntryGuard, Name: GuardFactPrefix + name, Description: description, Reads: reads},
		value: func(e E) string {
			if fn(e) {
				return "true"
			}
			return "false"
		}})
}

// ActionOption adjusts an action's registration.
type ActionOption func(*Entry)

// MayWait marks an action that can report InProgress.
func MayWait() ActionOption { return func(e *Entry) { e.MayWait = true } }

// Pure declares an action pure (see Entry.Pure): it only reads (the
// cache) and changes the object in memory, never a field a read is keyed
// by. It is declared, never guessed; an action that writes to the API
// server must not be.
func Pure() ActionOption { return func(e *Entry) { e.Pure = true } }

// WritesThrough declares that the action keeps the observation truthful
// although it writes (see Entry.WritesThrough): the answer of every write
// goes back into the observed copy, and what a changed field keys is read
// again. Declared, never guessed; an eviction never is, a deletion only
// when the action knows the object is gone (none held it).
func WritesThrough() ActionOption { return func(e *Entry) { e.WritesThrough = true } }

// Offers declares the named details the action may put into a row's
// condition messages ({name}, see Outcome.Details); it gives each of them
// in every outcome, empty when it has nothing to say.
func Offers(names ...string) ActionOption {
	return func(e *Entry) { e.Offers = append(e.Offers, names...) }
}

// Action registers an action.
func (r *Registry[E]) Action(name, description string, fn ActionFunc[E], opts ...ActionOption) {
	if _, dup := r.actions[name]; dup {
		panic(fmt.Sprintf("registry %s: action %q registered twice", r.name, name))
	}
	e := Entry{Kind: EntryAction, Name: name, Description: description}
	for _, o := range opts {
		o(&e)
	}
	if e.Pure && e.WritesThrough {
		panic(fmt.Sprintf("registry %s: action %q is declared both pure (writes nothing) and write-through (writes)", r.name, name))
	}
	r.actions[name] = action[E]{entry: e, fn: fn}
}

// Catalog lists everything registered, sorted by kind and name.
func (r *Registry[E]) Catalog() *Catalog {
	c := &Catalog{Name: r.name}
	for _, o := range r.observers {
		e := o.entry
		if e.Kind == EntryGuard {
			e.Name = e.Name[len(GuardFactPrefix):]
		}
		c.Entries = append(c.Entries, e)
	}
	for _, a := range r.actions {
		c.Entries = append(c.Entries, a.entry)
	}
	for _, st := range r.status {
		c.Entries = append(c.Entries, st.entry)
	}
	for _, p := range r.mirrors {
		c.Entries = append(c.Entries, p.entry)
	}
	for _, p := range r.summaries {
		c.Entries = append(c.Entries, p.entry)
	}
	for _, h := range r.countFrom {
		c.Entries = append(c.Entries, h.entry)
	}
	for _, h := range r.requeueAt {
		c.Entries = append(c.Entries, h.entry)
	}
	sort.Slice(c.Entries, func(i, j int) bool {
		if c.Entries[i].Kind != c.Entries[j].Kind {
			return c.Entries[i].Kind < c.Entries[j].Kind
		}
		return c.Entries[i].Name < c.Entries[j].Name
	})
	return c
}
