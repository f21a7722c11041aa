package chaos

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// drivers are the goroutines that play the rest of the world while a run
// deletes its Machines (hook owners, replica keepers, faults); ctx ends
// when they are told to stop.
type drivers struct {
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func startDrivers(ctx context.Context) *drivers {
	d := &drivers{}
	d.ctx, d.stop = context.WithCancel(ctx)
	return d
}

// run starts fn on a goroutine of its own.
func (d *drivers) run(fn func()) {
	d.wg.Add(1)
	go func() { defer d.wg.Done(); fn() }()
}

// end stops the drivers and waits until each has returned; ending again
// does nothing more.
func (d *drivers) end() {
	d.stop()
	d.wg.Wait()
}

// startAttacher runs the attacher on the VolumeAttachments of nodes from
// the first volume to the end of the leak checks (a VolumeAttachment it
// holds goes only when it lets go), and returns what stops it and waits
// for it.
func (w *world) startAttacher(ctx context.Context, ns string, nodes client.Client, between func(a, b time.Duration) time.Duration) func() {
	ctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.attacher(ctx, ns, nodes, between) }()
	return func() { stop(); <-done }
}
