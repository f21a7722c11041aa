package features

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// watchMachines lists the Machines sel selects in the scenario's namespace,
// hands them to seed, then watches them from the list's resourceVersion, so
// no event is missed, and hands every event to apply until the scenario
// ends; a watch that fails goes to fail. Invariants that must hold at every
// moment, not only at the end, are checked on what it sees.
func (w *world) watchMachines(ctx context.Context, sel labels.Selector, seed func([]clusterv1.Machine),
	apply func(watch.EventType, *clusterv1.Machine), fail func(error)) error {
	wc, err := client.NewWithWatch(w.h.Env.Config, client.Options{Scheme: w.h.Env.Client.Scheme()})
	if err != nil {
		return err
	}
	list := &clusterv1.MachineList{}
	if err := wc.List(ctx, list, &client.ListOptions{Namespace: w.ns, LabelSelector: sel}); err != nil {
		return err
	}
	seed(list.Items)
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	rv := list.ResourceVersion
	go func() {
		defer close(done)
		for wctx.Err() == nil {
			wi, err := wc.Watch(wctx, &clusterv1.MachineList{}, &client.ListOptions{Namespace: w.ns, LabelSelector: sel,
				Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
			if err != nil {
				if wctx.Err() == nil {
					fail(err)
				}
				return
			}
			for ev := range wi.ResultChan() {
				m, ok := ev.Object.(*clusterv1.Machine)
				if !ok {
					continue
				}
				rv = m.ResourceVersion
				if ev.Type == watch.Bookmark {
					continue
				}
				apply(ev.Type, m)
			}
			wi.Stop()
		}
	}()
	w.undo = append(w.undo, func(context.Context) error { cancel(); <-done; return nil })
	return nil
}
