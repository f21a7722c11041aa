// Package reconciler is the controller kit: one table-driven reconciler that
// any krtt controller is built from. A controller brings an API type, a
// checked table set, a registry of facts, actions and status setters, and an
// observer that reads the world once per reconcile; the kit does the rest:
//
//	observe → decide (the compiled state machines) → act (registered actions)
//	→ record (status through registered setters, owned conditions) → patch
//	→ publish (traces, metrics, Events) once the patch landed.
//
// A row whose patch did not land (a newer version of the object, a failed
// write) still acted: its trace is published with Trace.Unwritten saying
// why, krtt_transitions_total counts it as outcome Unwritten, and no Event
// is recorded.
//
// Run to completion (complete.go): after a row whose actions all keep the
// observation truthful, the kit decides again at once on the same
// observation, so a path of rows costs one status patch and one Event. An
// action says so when it is registered, never by guessing:
//
//   - engine.Pure(): it writes nothing to the API server and changes only
//     the reconciled object in memory, never a field a read of the observer
//     is keyed by (a finalizer, a label, a status timestamp).
//   - engine.WritesThrough(): it writes another object (or changes a field
//     a read is keyed by) and puts the change back into the observation:
//     the API server's answer into the observed copy of what it wrote, a
//     re-read from the cache of what the changed field keys. Adopting a
//     provider object, syncing labels onto a Node, copying the providerID
//     the Node is looked up by.
//
// Never marked either way: an action whose effect arrives later, through
// another controller, the garbage collector or the API server (a deletion,
// an eviction, a Pod terminating), or one that writes without putting the
// answer back into the observation. The path stops at such a row.
//
// A finalizer the path added is saved first: until the patch landed, the
// path follows only rows whose actions are all pure, so nothing outside
// the object is written before the finalizer that cleans it up exists.
//
// Writes the kit saves: a row firing again with the same result keeps
// status.lastTransition as it was (its time and via), and a reconcile that
// wrote the object's spec itself and succeeded records the generation its
// own write made as observed, so the next reconcile has nothing to rewrite.
//
// Explain (explain.go) starts krtt explain's report of any kind from the
// same observe and decide, without acting.
// Deadlines (deadline.go): after each reconcile the kit keeps when the
// timeout of the wait of the state the object is left in ends, by the
// engine's timing of that wait (the one its timed-out fact reads), and
// wakes the object then, by its own clock; a clock that jumps (tests) says
// so through Options.ClockJumps.
//
// It knows nothing of Machines.
package reconciler
