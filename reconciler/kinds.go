package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KindSyncGrace is how long reads of a kind first met at run time wait for
// its informer's first list, counted from the first read of the kind (not
// per read): a served, listable kind syncs well within it, and a kind that
// cannot be listed costs every worker at most this long once, not the
// observe timeout on every reconcile.
const KindSyncGrace = 2 * time.Second

// kindSyncPoll is how often a read in the grace looks at the informer.
const kindSyncPoll = 50 * time.Millisecond

// kindProbeEvery spaces the direct lists that find why a kind has not
// synced when its informer reports nothing (a list that hangs rather than
// fails); kindProbeTimeout bounds one.
const (
	kindProbeEvery   = 30 * time.Second
	kindProbeTimeout = 10 * time.Second
)

// KindSync keeps cached reads of kinds met only at run time (provider
// objects, read as unstructured by the contract) from blocking a worker
// until its informer syncs. A cached Get of a kind the operator cannot list
// or watch (RBAC forbids it, a conversion webhook fails, the provider's API
// is down) would otherwise wait for the whole reconcile's context, and a
// fleet of Machines on such a kind holds every worker while healthy ones
// starve. With KindSync such a read fails within KindSyncGrace (at once
// after the kind's first grace) with a *KindNotReadableError naming the
// kind and, once the informer has reported one, why its list or watch fails.
//
// When the informer reports no error (its watch-list waits on an API server
// whose watch cache cannot initialize, as with a failing conversion webhook),
// a direct list of one object, at most every 30 s per kind and never on the
// reader's goroutine, finds the cause.
//
// The informer itself stays: it goes on retrying its list and watch with the
// reflector's back-off (one per kind, never one per read), so reads work
// again as soon as the kind can be listed. Its failures are logged once per
// kind and cause, through WatchErrorHandler.
type KindSync struct {
	log   logr.Logger
	grace time.Duration
	// probe lists uncached, to find the cause when the informer reports
	// none; nil: no probe.
	probe client.Reader

	mu    sync.Mutex
	kinds map[string]*kindState // by the reflector's type description: gvk.String()
}

type kindState struct {
	gvk    schema.GroupVersionKind
	first  time.Time
	synced bool
	// cause is the last error the kind's informer met listing or watching
	// before its first sync; logged is the cause last logged.
	cause  error
	logged string
	// probing: a probe is under way; probed: when the last one started.
	probing bool
	probed  time.Time
}

// NewKindSync returns a KindSync that logs to log.
func NewKindSync(log logr.Logger) *KindSync {
	return &KindSync{log: log, grace: KindSyncGrace, kinds: map[string]*kindState{}}
}

// KindNotReadableError says that a kind's informer has not synced: the
// operator cannot read objects of the kind from its cache yet. It does not
// unwrap to its cause on purpose: a list refused with NotFound (a CRD
// removed) must not read as "the object is gone".
type KindNotReadableError struct {
	GVK schema.GroupVersionKind
	// Cause is the informer's last list or watch error, nil when none was
	// reported yet.
	Cause error
	// For is how long reads of the kind have been waiting.
	For time.Duration
}

func (e *KindNotReadableError) Error() string {
	kind := e.GVK.GroupKind().String() + "/" + e.GVK.Version
	switch {
	case e.Cause == nil:
		return fmt.Sprintf("the operator's cache has not synced the kind %s yet (waiting %s for its first list)", kind, e.For.Round(time.Second))
	case apierrors.IsForbidden(e.Cause):
		return fmt.Sprintf("the operator cannot list or watch %s: its RBAC forbids it; grant list and watch on %s to the operator's ServiceAccount: %v",
			kind, forbiddenResource(e.Cause, e.GVK), e.Cause)
	}
	return fmt.Sprintf("the operator cannot list or watch %s, so its cache has not synced the kind: %v", kind, e.Cause)
}

// forbiddenResource names the resource a Forbidden answer is about
// (resource.group), as RBAC rules name it; the kind when the answer does
// not say.
func forbiddenResource(err error, gvk schema.GroupVersionKind) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if d := st.Status().Details; d != nil && d.Kind != "" {
			return schema.GroupResource{Group: d.Group, Resource: d.Kind}.String()
		}
	}
	return gvk.GroupKind().String()
}

// IsKindNotReadable reports whether err says a kind's informer has not
// synced.
func IsKindNotReadable(err error) bool {
	var e *KindNotReadableError
	return errors.As(err, &e)
}

// NotReadableKind is the kind a KindNotReadableError in err's chain names;
// empty when there is none.
func NotReadableKind(err error) schema.GroupVersionKind {
	var e *KindNotReadableError
	if errors.As(err, &e) {
		return e.GVK
	}
	return schema.GroupVersionKind{}
}

// InformerReader is a cache that reads objects and hands out informers:
// controller-runtime's cache.Cache.
type InformerReader interface {
	client.Reader
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// NewClient is a manager's NewClient (ctrl.Options.NewClient): the client
// controller-runtime builds, with unstructured reads through the cache
// guarded by Reader.
func (k *KindSync) NewClient(config *rest.Config, options client.Options) (client.Client, error) {
	if options.Cache != nil {
		if ir, ok := options.Cache.Reader.(InformerReader); ok {
			options.Cache.Reader = k.Reader(ir)
		}
	}
	if k.probe == nil {
		direct, err := client.New(config, client.Options{Scheme: options.Scheme, Mapper: options.Mapper, HTTPClient: options.HTTPClient})
		if err != nil {
			return nil, err
		}
		k.probe = direct
	}
	return client.New(config, options)
}

// Reader wraps a cache: reads of unstructured objects (kinds met at run
// time) first make sure the kind's informer has synced, and fail with a
// *KindNotReadableError when it has not within the kind's grace. Typed
// kinds are the manager's own watches, synced before any worker starts, and
// pass through.
func (k *KindSync) Reader(c InformerReader) client.Reader {
	return &syncedReader{cache: c, kinds: k}
}

type syncedReader struct {
	cache InformerReader
	kinds *KindSync
}

func (r *syncedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if err := r.kinds.await(ctx, r.cache, u.GroupVersionKind()); err != nil {
			return err
		}
	}
	return r.cache.Get(ctx, key, obj, opts...)
}

func (r *syncedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		gvk := u.GroupVersionKind()
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		if err := r.kinds.await(ctx, r.cache, gvk); err != nil {
			return err
		}
	}
	return r.cache.List(ctx, list, opts...)
}

// await returns once gvk's informer has synced, or a *KindNotReadableError
// once the kind's grace has passed (at once after it). It starts the
// informer if there is none, without blocking on it.
func (k *KindSync) await(ctx context.Context, c InformerReader, gvk schema.GroupVersionKind) error {
	st := k.state(gvk)
	if k.isSynced(st) {
		return nil
	}
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(gvk)
	inf, err := c.GetInformer(ctx, probe, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	if left := time.Until(st.first.Add(k.grace)); left > 0 && !inf.HasSynced() {
		// Errors only say the grace (or the caller's context) ran out; the
		// informer's state decides below.
		_ = wait.PollUntilContextTimeout(ctx, kindSyncPoll, left, true, func(context.Context) (bool, error) {
			return inf.HasSynced(), nil
		})
	}
	if inf.HasSynced() {
		k.markSynced(st)
		return nil
	}
	return k.notReadable(st)
}

// state returns the kind's record, created (and its grace started) by the
// first read.
func (k *KindSync) state(gvk schema.GroupVersionKind) *kindState {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := gvk.String()
	st, ok := k.kinds[key]
	if !ok {
		st = &kindState{gvk: gvk, first: time.Now()}
		k.kinds[key] = st
	}
	return st
}

func (k *KindSync) isSynced(st *kindState) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return st.synced
}

func (k *KindSync) markSynced(st *kindState) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !st.synced && st.cause != nil {
		k.log.Info("the cache has synced a kind it could not list before; its objects are read again",
			"kind", st.gvk.String(), "after", time.Since(st.first).Round(time.Second).String())
	}
	st.synced, st.cause, st.logged = true, nil, ""
}

func (k *KindSync) notReadable(st *kindState) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if st.cause == nil && k.probe != nil && !st.probing && time.Since(st.probed) >= kindProbeEvery {
		st.probing, st.probed = true, time.Now()
		go k.probeCause(st)
	}
	return &KindNotReadableError{GVK: st.gvk, Cause: st.cause, For: time.Since(st.first)}
}

// probeCause lists one object of the kind directly and keeps the error as
// the kind's cause, unless the informer reported one meanwhile.
func (k *KindSync) probeCause(st *kindState) {
	ctx, cancel := context.WithTimeout(context.Background(), kindProbeTimeout)
	defer cancel()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(st.gvk.GroupVersion().WithKind(st.gvk.Kind + "List"))
	err := k.probe.List(ctx, list, client.Limit(1))
	k.mu.Lock()
	defer k.mu.Unlock()
	st.probing = false
	if err == nil || st.synced || st.cause != nil {
		return
	}
	st.cause = err
	if st.logged != err.Error() {
		st.logged = err.Error()
		k.log.Error(err, "cannot list a kind read at run time, and its informer has not synced; reads of it fail at once until it syncs",
			"kind", st.gvk.String(), "why", (&KindNotReadableError{GVK: st.gvk, Cause: err}).Error())
	}
}

// WatchErrorHandler is the cache's DefaultWatchErrorHandler: for a kind read
// through Reader that has not synced, it keeps the error as the kind's cause
// and logs it once per cause (the reflector retries with back-off, up to
// about every 30 s, for as long as the operator runs); everything else goes
// to client-go's default handler.
func (k *KindSync) WatchErrorHandler(ctx context.Context, r *toolscache.Reflector, err error) {
	k.mu.Lock()
	st, ok := k.kinds[r.TypeDescription()]
	if !ok || st.synced {
		k.mu.Unlock()
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
		return
	}
	st.cause = err
	first := st.logged != err.Error()
	st.logged = err.Error()
	gvk := st.gvk
	k.mu.Unlock()
	msg := (&KindNotReadableError{GVK: gvk, Cause: err}).Error()
	if first {
		k.log.Error(err, "cannot list or watch a kind read at run time; reads of it fail at once until it syncs, and the informer keeps retrying with back-off",
			"kind", gvk.String(), "why", msg)
		return
	}
	k.log.V(1).Info("still cannot list or watch a kind read at run time", "kind", gvk.String(), "error", err.Error())
}
