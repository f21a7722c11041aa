package machine

import "time"

// podGoneWakeDelay is how long after a Pod goes its Machine is woken
// (reconciler.EnqueueCoalesced). A drain pass sends its evictions
// together, so a Node's Pods end within moments of each other; the work
// queue keeps one wake-up per Machine at the earliest time, so a reconcile
// a little after the first Pod went sees the others go too, and the
// drain's status (how many Pods remain) is patched once for them instead
// of once per Pod. The drain decides on what it observes then; only its
// wake-up is a second late.
const podGoneWakeDelay = time.Second
