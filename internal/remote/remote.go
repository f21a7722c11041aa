// Package remote connects the operator to the workload cluster of each
// Cluster: the API server that holds the Cluster's Nodes, Pods and volumes.
//
// As in Cluster API, a Cluster's workload cluster is named by the Secret
// <cluster>-kubeconfig (key value) in the Cluster's namespace. Without that
// Secret the Node side is the management cluster itself (self-hosted). With
// it, the Cache opens one connection per Cluster on first use: a
// controller-runtime cluster (a cache with the indexes the Machine controller
// needs, and watches that wake the right Machines), probed periodically, and
// closed when the Secret changes or goes, or when the Cluster goes away.
//
// A connection is in one of four states, which the Machine tables read as
// the fact workloadCluster: Connected, SelfHosted, Unreachable (the API
// server does not answer: nothing seen through it can be trusted), NoAccess
// (the Secret does not parse, or its credentials are refused). Self-hosted
// Clusters are served only when Options.SelfHosted says so (the operator's
// --self-hosted-clusters, with the RBAC of config/rbac-self-hosted);
// otherwise a Cluster without a Secret is NoAccess, with a message that says
// how to enable them, and the tables hold its Node side as they hold one
// whose credentials are refused.
package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/krtt-dev/krtt/internal/selfhosted"
)

// State is how the Node side of a Cluster is reached.
type State string

// The states of a workload cluster connection.
const (
	// Connected: the Secret names an API server that answers and accepts
	// its credentials.
	Connected State = "Connected"
	// SelfHosted: no Secret; the Node side is the management cluster.
	SelfHosted State = "SelfHosted"
	// Unreachable: the API server named by the Secret does not answer.
	Unreachable State = "Unreachable"
	// NoAccess: the Secret does not parse, or the API server refuses its
	// credentials; or there is no Secret and self-hosted Clusters are not
	// served (Connection.SelfHostedDisabled).
	NoAccess State = "NoAccess"
)

// States lists every State, in the order the tables declare them.
var States = []State{Connected, SelfHosted, Unreachable, NoAccess}

// SecretKey is the key of the kubeconfig in the Secret.
const SecretKey = "value"

// SecretName is the name of the kubeconfig Secret of a Cluster.
func SecretName(cluster string) string { return cluster + "-kubeconfig" }

// ClusterOfSecret returns the Cluster a kubeconfig Secret belongs to.
func ClusterOfSecret(secretName string) (string, bool) {
	const suffix = "-kubeconfig"
	if len(secretName) <= len(suffix) || secretName[len(secretName)-len(suffix):] != suffix {
		return "", false
	}
	return secretName[:len(secretName)-len(suffix)], true
}

// KubeconfigSecrets passes only events of Secrets named <cluster>-kubeconfig.
func KubeconfigSecrets() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := ClusterOfSecret(o.GetName())
		return ok
	})
}

// Connection is what one reconcile learns about a Cluster's Node side.
type Connection struct {
	// Client reads and writes the Node side; nil unless State is
	// Connected or SelfHosted.
	Client client.Client
	State  State
	// Server is the API server the Secret names ("" when self-hosted or
	// when the Secret does not parse).
	Server string
	// Secret is namespace/name of the kubeconfig Secret.
	Secret string
	// Message says what the state means, with the error when there is one.
	Message string
	// Since is when the connection entered State (zero when self-hosted).
	Since time.Time
	// ReachableAgain is when the workload cluster last became usable
	// (Connected) after it could not be used (Unreachable or NoAccess),
	// whether the connection saw it go or was opened while it was gone or
	// replaced one that could not be used; zero when it has been usable
	// ever since the connection opened. Timeouts of the Node side count
	// from it (the machine-controller-manager restarts its health timeouts
	// when the target API server is back).
	ReachableAgain time.Time
	// LastProbeSuccess is when the connection last reached the workload
	// cluster (its first connection or a probe since); zero when it never
	// did.
	LastProbeSuccess time.Time
	// Establishing: no attempt reached the workload cluster yet, and fewer
	// than FailureThreshold failed, so it is too early to call it failed
	// (Cluster API's ClusterCache keeps the same count across connection
	// attempts and probes); false once the Secret is found unusable.
	Establishing bool
	// SelfHostedDisabled: the State is NoAccess because the Cluster has no
	// Secret and the operator does not serve self-hosted Clusters; only a
	// Secret or a restart with Options.SelfHosted changes it.
	SelfHostedDisabled bool
}

// Usable: the Node side can be read and written.
func (c Connection) Usable() bool { return usable(c.State) }

func usable(st State) bool { return st == Connected || st == SelfHosted }

// Index is a field index every connection's cache gets.
type Index struct {
	Object  client.Object
	Field   string
	Extract client.IndexerFunc
}

// Watcher starts, for one connection, the watches that wake its
// controller. ctx ends when the connection is closed.
type Watcher interface {
	WatchCluster(ctx context.Context, key client.ObjectKey, c cluster.Cluster) error
}

// WatcherFunc adapts a function to Watcher.
type WatcherFunc func(ctx context.Context, key client.ObjectKey, c cluster.Cluster) error

// WatchCluster calls f.
func (f WatcherFunc) WatchCluster(ctx context.Context, key client.ObjectKey, c cluster.Cluster) error {
	return f(ctx, key, c)
}

// Options configure a Cache.
type Options struct {
	// Scheme of the workload clusters' clients (client-go types suffice).
	Scheme *runtime.Scheme
	// HealthInterval is how often a connection is probed (default 10s).
	HealthInterval time.Duration
	// HealthTimeout bounds one probe and one connection attempt's wait for
	// its caches (default 5s).
	HealthTimeout time.Duration
	// FailureThreshold is how many probes in a row must fail before a
	// connected cluster counts as Unreachable (default 3); one refused
	// credential is NoAccess at once.
	FailureThreshold int
	// Indexes every workload cluster's cache gets.
	Indexes []Index
	// Cache is the base of every workload cluster's cache options (the
	// operator trims cached objects the same way in every cluster).
	Cache cache.Options
	// Now is the clock of Since; time.Now when nil.
	Now func() time.Time
	// SelfHosted serves a Cluster without a kubeconfig Secret from the
	// management cluster. Off, such a Cluster is NoAccess: the operator's
	// default RBAC grants no Node-side rights in the management cluster.
	SelfHosted bool
	// ClientQPS and ClientBurst limit each workload cluster's client
	// (DefaultClientQPS and DefaultClientBurst when zero; a negative QPS
	// sets no client-side limit). A kubeconfig carries no limit of its own,
	// and client-go's fallback (5 per second, bursts of 10) would pace a
	// drain of many Nodes at once far below what the workload API server
	// answers.
	ClientQPS   float32
	ClientBurst int
	// RequestTimeout bounds each call of a workload cluster's client, cache
	// reads included (DefaultRequestTimeout when zero); the watches behind
	// its cache are not bounded.
	RequestTimeout time.Duration
}

// Defaults of Options (Cluster API's ClusterCache probes every 10s with a 5s
// timeout; krtt gives up a little sooner, after 3 failures).
const (
	DefaultHealthInterval   = 10 * time.Second
	DefaultHealthTimeout    = 5 * time.Second
	DefaultFailureThreshold = 3
	// Cluster API's --clustercache-client-qps and --clustercache-client-burst
	// defaults (core/main.go).
	DefaultClientQPS   = 20
	DefaultClientBurst = 30
	// Cluster API's ClusterCache ClientOptions.Timeout default.
	DefaultRequestTimeout = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.HealthInterval <= 0 {
		o.HealthInterval = DefaultHealthInterval
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = DefaultHealthTimeout
	}
	if o.FailureThreshold <= 0 {
		o.FailureThreshold = DefaultFailureThreshold
	}
	if o.ClientQPS == 0 {
		o.ClientQPS = DefaultClientQPS
	}
	if o.ClientBurst <= 0 {
		o.ClientBurst = DefaultClientBurst
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Cache holds one connection per Cluster that has a kubeconfig Secret.
// It is a manager Runnable: Start runs until the manager stops and then
// closes every connection.
type Cache struct {
	local  client.Client
	reader client.Reader
	opts   Options

	mu       sync.Mutex
	ctx      context.Context
	conns    map[client.ObjectKey]*conn
	watchers []Watcher
	subs     []chan event.GenericEvent
	// noSecret: since when each Cluster without a Secret has been refused
	// (self-hosted Clusters not served), so its Since does not move with
	// every reconcile and the Node-side timeouts can run out.
	noSecret map[client.ObjectKey]time.Time
}

// New returns a Cache. local is the management cluster's (cached) client:
// it serves the Secrets' metadata and is the Node side of self-hosted
// Clusters; reader reads a Secret's data uncached, once per connection.
func New(local client.Client, reader client.Reader, opts Options) *Cache {
	return &Cache{local: local, reader: reader, opts: opts.withDefaults(), conns: map[client.ObjectKey]*conn{},
		noSecret: map[client.ObjectKey]time.Time{}}
}

// AddWatcher registers watches to start on every connection, including
// those already open.
func (c *Cache) AddWatcher(w Watcher) {
	c.mu.Lock()
	c.watchers = append(c.watchers, w)
	var open []*conn
	for _, cn := range c.conns {
		open = append(open, cn)
	}
	c.mu.Unlock()
	for _, cn := range open {
		if cl := cn.connectedCluster(); cl != nil {
			if err := w.WatchCluster(cn.ctx, cn.key, cl); err != nil {
				logf.Log.WithName("remote").Error(err, "start watches", "cluster", cn.key)
			}
		}
	}
}

// AddIndexes adds indexes every workload cluster's cache gets, for the
// controllers that read through them. Call before Start.
func (c *Cache) AddIndexes(ix ...Index) {
	c.mu.Lock()
	c.opts.Indexes = append(c.opts.Indexes, ix...)
	c.mu.Unlock()
}

// Subscribe returns a channel that receives an event for a Cluster (its
// namespace and name, as metadata) whenever its connection changes state.
// Call before Start.
func (c *Cache) Subscribe() <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, 64)
	c.mu.Lock()
	c.subs = append(c.subs, ch)
	c.mu.Unlock()
	return ch
}

// Start keeps the cache until ctx ends, then closes every connection.
func (c *Cache) Start(ctx context.Context) error {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	<-ctx.Done()
	c.Close()
	return nil
}

// Close closes every connection. A cache that is never started (krtt
// explain's, for one report) must be closed by its user.
func (c *Cache) Close() {
	c.mu.Lock()
	conns := c.conns
	c.conns = map[client.ObjectKey]*conn{}
	c.noSecret = map[client.ObjectKey]time.Time{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.cancel()
	}
}

// NeedLeaderElection: connections serve the leader's controllers only.
func (c *Cache) NeedLeaderElection() bool { return true }

// Disconnect closes the connection of a Cluster (it went away).
func (c *Cache) Disconnect(key client.ObjectKey) {
	c.mu.Lock()
	delete(c.noSecret, key)
	c.mu.Unlock()
	c.closeConn(key)
}

// closeConn closes the connection of a Cluster whose Secret went away.
func (c *Cache) closeConn(key client.ObjectKey) {
	c.mu.Lock()
	cn := c.conns[key]
	delete(c.conns, key)
	c.mu.Unlock()
	if cn != nil {
		cn.cancel()
	}
}

// Open reports the Clusters with an open connection.
func (c *Cache) Open() []client.ObjectKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]client.ObjectKey, 0, len(c.conns))
	for k := range c.conns {
		out = append(out, k)
	}
	return out
}

// ClientFor returns the Node side of a Cluster: the management cluster when
// it has no kubeconfig Secret (NoAccess unless Options.SelfHosted), else its
// connection (opened on first use, and again when the Secret changed). The
// error is an API error reading the Secret's metadata; a workload cluster
// that cannot be used is a State.
func (c *Cache) ClientFor(ctx context.Context, key client.ObjectKey) (Connection, error) {
	secretKey := client.ObjectKey{Namespace: key.Namespace, Name: SecretName(key.Name)}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.local.Get(ctx, secretKey, meta); err != nil {
		if apierrors.IsNotFound(err) {
			c.closeConn(key)
			if !c.opts.SelfHosted {
				return c.selfHostedDisabled(key, secretKey), nil
			}
			return Connection{Client: c.local, State: SelfHosted, Secret: secretKey.String(),
				Message: fmt.Sprintf("no Secret %s: the Node side is the management cluster", secretKey)}, nil
		}
		return Connection{}, fmt.Errorf("get Secret %s: %w", secretKey, err)
	}
	cn := c.conn(key, meta.ResourceVersion)
	select {
	case <-cn.ready:
	case <-ctx.Done():
		return Connection{}, fmt.Errorf("connect to the workload cluster of %s: %w", key, ctx.Err())
	}
	return cn.snapshot(), nil
}

// selfHostedDisabled is a Cluster without a Secret while self-hosted
// Clusters are not served: NoAccess since it was first seen so, with the
// way out in the message.
func (c *Cache) selfHostedDisabled(key, secretKey client.ObjectKey) Connection {
	c.mu.Lock()
	since, ok := c.noSecret[key]
	if !ok {
		since = c.now()
		c.noSecret[key] = since
	}
	c.mu.Unlock()
	return Connection{State: NoAccess, Secret: secretKey.String(), Since: since, SelfHostedDisabled: true,
		Message: fmt.Sprintf("no Secret %s, and %s", secretKey, selfhosted.Hint)}
}

// conn returns the connection for the Secret version, replacing one opened
// for another version.
func (c *Cache) conn(key client.ObjectKey, secretVersion string) *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A Secret given to a Cluster refused for want of one: its first
	// success is the cluster coming back.
	_, afterOutage := c.noSecret[key]
	delete(c.noSecret, key)
	var failures int
	var lastSuccess time.Time
	if cn := c.conns[key]; cn != nil {
		if cn.secretVersion == secretVersion {
			return cn
		}
		cn.cancel()
		// A Secret fixed while its cluster could not be used: the new
		// connection's first success is the cluster coming back.
		afterOutage = afterOutage || cn.unusable()
		// The probe history is the Cluster's, not the Secret version's.
		failures, lastSuccess = cn.history()
	}
	parent := c.ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	cn := &conn{key: key, secretVersion: secretVersion, ctx: ctx, cancel: cancel, ready: make(chan struct{}),
		secret: client.ObjectKey{Namespace: key.Namespace, Name: SecretName(key.Name)}.String(), afterOutage: afterOutage,
		threshold: c.opts.FailureThreshold, failures: failures, lastSuccess: lastSuccess}
	c.conns[key] = cn
	go c.run(cn)
	return cn
}

// run makes the first attempt, then probes (or retries connecting) every
// HealthInterval until the connection is closed.
func (c *Cache) run(cn *conn) {
	c.attempt(cn)
	close(cn.ready)
	t := time.NewTicker(c.opts.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-cn.ctx.Done():
			return
		case <-t.C:
		}
		c.attempt(cn)
	}
}

// attempt connects a connection that has no cluster yet, or probes one that
// has, and announces a change of state.
func (c *Cache) attempt(cn *conn) {
	before := cn.phase()
	if cn.connectedCluster() == nil {
		if !cn.permanent() {
			c.connect(cn)
		}
	} else {
		c.probeAndRecord(cn)
	}
	if after := cn.phase(); after != before && cn.ctx.Err() == nil {
		c.announce(cn.key)
	}
}

func (c *Cache) announce(key client.ObjectKey) {
	ev := event.GenericEvent{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
	c.mu.Lock()
	subs := append([]chan event.GenericEvent{}, c.subs...)
	c.mu.Unlock()
	for _, ch := range subs {
		select {
		case ch <- ev:
		default:
			// A full channel already holds events that wake the same
			// objects soon; never block the health loop.
		}
	}
}

// connect reads the Secret, probes the API server it names and, when that
// answers, starts a cached cluster with the indexes and watches.
func (c *Cache) connect(cn *conn) {
	ctx, cancel := context.WithTimeout(cn.ctx, c.opts.HealthTimeout)
	defer cancel()
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: cn.key.Namespace, Name: SecretName(cn.key.Name)}
	if err := c.reader.Get(ctx, key, secret); err != nil {
		cn.failed(c.now(), Unreachable, "", fmt.Sprintf("reading Secret %s failed: %v", key, err))
		return
	}
	cfg, err := RESTConfig(secret)
	if err != nil {
		cn.setPermanent(c.now(), NoAccess, err.Error())
		return
	}
	cfg.QPS, cfg.Burst = c.opts.ClientQPS, c.opts.ClientBurst
	if state, msg := c.probe(ctx, cfg, cn.secret); state != Connected {
		cn.failed(c.now(), state, cfg.Host, msg)
		return
	}
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = c.opts.Scheme
		o.Cache = c.opts.Cache
		o.Logger = logf.Log.WithName("remote").WithValues("cluster", cn.key.String())
	})
	if err != nil {
		// Building the cached cluster asks the server again (discovery): a
		// server that stopped answering since the probe is Unreachable and
		// tried again, not a kubeconfig given up on.
		if state, msg := c.probe(ctx, cfg, cn.secret); state != Connected {
			cn.failed(c.now(), state, cfg.Host, msg)
			return
		}
		cn.setPermanent(c.now(), NoAccess, fmt.Sprintf("the kubeconfig in Secret %s cannot be used: %v", cn.secret, err))
		return
	}
	c.mu.Lock()
	indexes := c.opts.Indexes
	c.mu.Unlock()
	for _, ix := range indexes {
		if err := cl.GetFieldIndexer().IndexField(cn.ctx, ix.Object, ix.Field, ix.Extract); err != nil {
			cn.setPermanent(c.now(), NoAccess, fmt.Sprintf("index %s: %v", ix.Field, err))
			return
		}
	}
	go func() {
		if err := cl.Start(cn.ctx); err != nil {
			logf.Log.WithName("remote").Error(err, "workload cluster cache stopped", "cluster", cn.key)
		}
	}()
	c.mu.Lock()
	watchers := append([]Watcher{}, c.watchers...)
	c.mu.Unlock()
	for _, w := range watchers {
		if err := w.WatchCluster(cn.ctx, cn.key, cl); err != nil {
			cn.failed(c.now(), Unreachable, cfg.Host, fmt.Sprintf("start watches on %s: %v", cfg.Host, err))
			return
		}
	}
	// The first reads wait for the informers the watches started; give
	// them a moment here so the first reconcile does not stall on them.
	_ = cl.GetCache().WaitForCacheSync(ctx)
	cn.connected(c.now(), cl, withTimeout(cl.GetClient(), c.opts.RequestTimeout), cfg.Host)
}

// probeAndRecord probes a connected cluster: a refused credential is
// NoAccess at once; other failures count, and FailureThreshold of them in a
// row make it Unreachable; one success makes it Connected again.
func (c *Cache) probeAndRecord(cn *conn) {
	ctx, cancel := context.WithTimeout(cn.ctx, c.opts.HealthTimeout)
	defer cancel()
	cl := cn.connectedCluster()
	state, msg := c.probe(ctx, cl.GetConfig(), cn.secret)
	cn.mu.Lock()
	defer cn.mu.Unlock()
	switch state {
	case Connected:
		cn.failures = 0
		cn.lastSuccess = c.now()
		cn.setLocked(cn.lastSuccess, Connected, cn.server, "")
	case NoAccess:
		cn.setLocked(c.now(), NoAccess, cn.server, msg)
	default:
		cn.failures++
		if cn.failures >= c.opts.FailureThreshold {
			cn.setLocked(c.now(), Unreachable, cn.server, fmt.Sprintf("%s (%d probes in a row failed)", msg, cn.failures))
		}
	}
}

// probe lists at most one Node, uncached: it proves the API server answers
// and that the credentials may read Nodes.
func (c *Cache) probe(ctx context.Context, cfg *rest.Config, secret string) (State, string) {
	pc := rest.CopyConfig(cfg)
	pc.Timeout = c.opts.HealthTimeout
	cl, err := client.New(pc, client.Options{Scheme: c.opts.Scheme})
	if err != nil {
		return NoAccess, fmt.Sprintf("the kubeconfig in Secret %s cannot be used: %v", secret, err)
	}
	err = cl.List(ctx, &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}}, client.Limit(1))
	switch {
	case err == nil:
		return Connected, ""
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		return NoAccess, fmt.Sprintf("the API server %s refused the credentials of Secret %s: %v", cfg.Host, secret, err)
	}
	return Unreachable, fmt.Sprintf("the API server %s does not answer: %v", cfg.Host, err)
}

func (c *Cache) now() time.Time { return c.opts.Now() }

// RESTConfig parses the kubeconfig of a Secret, with errors that say what
// is wrong with it.
func RESTConfig(secret *corev1.Secret) (*rest.Config, error) {
	name := secret.Namespace + "/" + secret.Name
	data, ok := secret.Data[SecretKey]
	if !ok || len(data) == 0 {
		return nil, fmt.Errorf("the Secret %s has no kubeconfig under the key %q", name, SecretKey)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig in Secret %s does not parse: %w", name, err)
	}
	if cfg.Host == "" {
		return nil, errors.New("the kubeconfig in Secret " + name + " names no server")
	}
	return cfg, nil
}

// conn is one Cluster's connection.
type conn struct {
	key           client.ObjectKey
	secret        string
	secretVersion string
	ctx           context.Context
	cancel        context.CancelFunc
	ready         chan struct{}

	mu       sync.Mutex
	cluster  cluster.Cluster
	client   client.Client
	server   string
	st       State
	message  string
	since    time.Time
	failures int
	// final: the Secret cannot work as it is; only a new version helps.
	final bool
	// reachableAgain: see Connection.ReachableAgain. afterOutage: this
	// connection replaced one whose cluster could not be used.
	reachableAgain time.Time
	afterOutage    bool
	// lastSuccess: see Connection.LastProbeSuccess. failures counts the
	// failed connection attempts and probes since; threshold is
	// Options.FailureThreshold (see Connection.Establishing).
	lastSuccess time.Time
	threshold   int
}

// unusable: the connection has tried and the cluster cannot be used.
func (cn *conn) unusable() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.st != "" && !usable(cn.st)
}

// phase is what a reconcile sees change: the state, and whether it is
// still being established.
type phase struct {
	st           State
	establishing bool
}

func (cn *conn) phase() phase {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return phase{cn.st, cn.establishingLocked()}
}

func (cn *conn) establishingLocked() bool {
	return cn.lastSuccess.IsZero() && !cn.final && cn.failures < cn.threshold
}

func (cn *conn) permanent() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.final
}

func (cn *conn) connectedCluster() cluster.Cluster {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.cluster
}

func (cn *conn) set(now time.Time, st State, server, msg string) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.setLocked(now, st, server, msg)
}

// failed records a connection attempt that did not reach a usable cluster.
func (cn *conn) failed(now time.Time, st State, server, msg string) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.failures++
	cn.setLocked(now, st, server, msg)
}

func (cn *conn) history() (int, time.Time) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.failures, cn.lastSuccess
}

func (cn *conn) setPermanent(now time.Time, st State, msg string) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.final = true
	cn.setLocked(now, st, "", msg)
}

func (cn *conn) connected(now time.Time, cl cluster.Cluster, c client.Client, server string) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.cluster, cn.client = cl, c
	cn.lastSuccess, cn.failures = now, 0
	cn.setLocked(now, Connected, server, "")
}

func (cn *conn) setLocked(now time.Time, st State, server, msg string) {
	if st != cn.st {
		cn.since = now
	}
	if usable(st) && (cn.afterOutage || (cn.st != "" && !usable(cn.st))) {
		cn.reachableAgain, cn.afterOutage = now, false
	}
	cn.st, cn.server, cn.message = st, server, msg
}

func (cn *conn) snapshot() Connection {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	out := Connection{State: cn.st, Server: cn.server, Secret: cn.secret, Message: cn.message, Since: cn.since, ReachableAgain: cn.reachableAgain,
		LastProbeSuccess: cn.lastSuccess, Establishing: cn.establishingLocked()}
	if cn.st == Connected && cn.cluster != nil {
		out.Client = cn.client
		out.Message = fmt.Sprintf("connected to %s through Secret %s", cn.server, cn.secret)
	}
	return out
}

// Kubeconfig renders a rest.Config as a kubeconfig, the form the Secret
// holds (tests, make run and the benchmark write Secrets with it).
func Kubeconfig(cfg *rest.Config, name string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Token: cfg.BearerToken, Username: cfg.Username, Password: cfg.Password}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.Write(*kc)
}

// WriteSecret creates (or replaces the data of) the Secret that makes
// cfg's API server the workload cluster of Cluster ns/cluster.
func WriteSecret(ctx context.Context, c client.Client, ns, cluster string, cfg *rest.Config) error {
	data, err := Kubeconfig(cfg, cluster)
	if err != nil {
		return err
	}
	return SetSecret(ctx, c, ns, cluster, data)
}

// SetSecret writes data as the kubeconfig of Cluster ns/cluster.
func SetSecret(ctx context.Context, c client.Client, ns, cluster string, data []byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SecretName(cluster)},
		Data: map[string][]byte{SecretKey: data}}
	err := c.Create(ctx, s)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), cur); err != nil {
		return err
	}
	cur.Data = s.Data
	return c.Update(ctx, cur)
}
