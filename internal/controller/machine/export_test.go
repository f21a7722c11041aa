package machine

// Patch exposes the reconciler's patch to the integration tests, which
// check that a concurrent writer's change is never overwritten.
var Patch = (*Reconciler).patch
