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
// It knows nothing of Machines.
package reconciler
