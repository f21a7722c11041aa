// Package engine loads KRTT transition tables (Kubernetes Reconciler
// Transition Tables) from YAML, checks them, compiles them into guarded
// state machines and fires them at run time.
//
// A table row keeps the five human columns of a KRTT table (observed status,
// desired spec, trigger, reconciliation action, resulting status) next to
// the parts a machine can check: the states it applies to, a match over
// declared facts, the registered actions it runs and its result.
//
// The core keeps what the operator runs: loading, checking, compiling and
// deciding. Words for people live beside it: engine/render writes the
// documentation pages, engine/explain says why a row fires.
package engine
