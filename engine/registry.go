package engine

import (
	"context"
	"fmt"
	"sort"
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
)

// Entry describes one registered observer, action or guard for lint and docs.
type Entry struct {
	Kind        EntryKind
	Name        string
	Description string
	// MayWait: the action can report InProgress, so rows running it must
	// say what happens meanwhile (inProgress).
	MayWait bool
	// Reads: the facts a guard depends on.
	Reads []string
}

// Catalog is the Go-free view of a registry: names and descriptions.
type Catalog struct {
	Name    string
	Entries []Entry
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

// Registry holds the Go side of a table set: observers computing facts,
// actions doing work and guards, each by name with a one-line description.
type Registry[E any] struct {
	name      string
	observers map[string]observer[E]
	actions   map[string]action[E]
}

// NewRegistry returns an empty registry; tables name it in spec.registry.
func NewRegistry[E any](name string) *Registry[E] {
	return &Registry[E]{name: name, observers: map[string]observer[E]{}, actions: map[string]action[E]{}}
}

// Name is the registry's name.
func (r *Registry[E]) Name() string { return r.name }

func (r *Registry[E]) addObserver(o observer[E]) {
	if _, dup := r.observers[o.entry.Name]; dup {
		panic(fmt.Sprintf("registry %s: %s %q registered twice", r.name, o.entry.Kind, o.entry.Name))
	}
	r.observers[o.entry.Name] = o
}

// Bool registers an observer for a bool fact.
func (r *Registry[E]) Bool(name, description string, fn func(E) bool) {
	r.addObserver(observer[E]{entry: Entry{Kind: EntryFact, Name: name, Description: description}, value: func(e E) string {
		if fn(e) {
			return "true"
		}
		return "false"
	}})
}

// Enum registers an observer for an enum fact; fn returns a value name.
func (r *Registry[E]) Enum(name, description string, fn func(E) string) {
	r.addObserver(observer[E]{entry: Entry{Kind: EntryFact, Name: name, Description: description}, value: fn})
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

// Action registers an action.
func (r *Registry[E]) Action(name, description string, fn ActionFunc[E], opts ...ActionOption) {
	if _, dup := r.actions[name]; dup {
		panic(fmt.Sprintf("registry %s: action %q registered twice", r.name, name))
	}
	e := Entry{Kind: EntryAction, Name: name, Description: description}
	for _, o := range opts {
		o(&e)
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
	sort.Slice(c.Entries, func(i, j int) bool {
		if c.Entries[i].Kind != c.Entries[j].Kind {
			return c.Entries[i].Kind < c.Entries[j].Kind
		}
		return c.Entries[i].Name < c.Entries[j].Name
	})
	return c
}
