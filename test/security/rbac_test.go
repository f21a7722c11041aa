// Package security proves the operator's least privilege: it runs a whole
// Machine lifecycle as a ServiceAccount bound only to the generated RBAC, in
// both of the operator's modes (config/rbac alone for Clusters with a
// kubeconfig Secret; with config/rbac-self-hosted added for self-hosted
// Clusters), and fails when a role grants a verb the lifecycle never used
// (unless the rule is listed below with its reason). It also checks the
// manager Deployment's security settings.
package security

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/krtt-dev/krtt/actions"
	clustercontroller "github.com/krtt-dev/krtt/actions/cluster"
	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/test/framework/harness"
	"github.com/krtt-dev/krtt/test/framework/leakcheck"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/infrastructure/sim"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

const (
	operatorNS = "krtt-system"
	operatorSA = "krtt-operator"
)

var env struct {
	Config *rest.Config
	Client client.Client
}

// TestMain gets the package its control plane (localcp.ForTest: the one
// make test shares, or its own). localcp runs the
// OwnerReferencesPermissionEnforcement admission plugin that production
// clusters often run: with it, setting blockOwnerDeletion on an owner
// reference needs update on the owner's finalizers subresource, a
// permission no request of its own reveals.
func TestMain(m *testing.M) {
	lvl := zapcore.ErrorLevel
	if os.Getenv("KRTT_TEST_LOG") == "debug" {
		lvl = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(false), zap.Level(lvl)))
	os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error {
		env.Config, env.Client = cp.Config, cp.Client
		return nil
	}))
}

// access is one kind of request: what RBAC authorizes.
type access struct {
	Namespace, Group, Resource, Subresource, Verb string
}

func (a access) String() string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	g := a.Group
	if g == "" {
		g = "core"
	}
	if a.Namespace != "" {
		return fmt.Sprintf("%s %s %s in %s", g, r, a.Verb, a.Namespace)
	}
	return fmt.Sprintf("%s %s %s", g, r, a.Verb)
}

// requestAccess reads the group, resource, subresource and verb of a REST
// request the way the API server's RBAC authorizer sees them; ok is false for
// non-resource requests (discovery, /version), which every authenticated user
// may make.
func requestAccess(req *http.Request) (access, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var a access
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		a.Group = parts[1]
		parts = parts[3:]
	default:
		return a, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		a.Namespace = parts[1]
		parts = parts[2:]
	}
	a.Resource = parts[0]
	name := ""
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		a.Subresource = parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			a.Verb = "watch"
		case name == "":
			a.Verb = "list"
		default:
			a.Verb = "get"
		}
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
		if name == "" {
			a.Verb = "deletecollection"
		}
	default:
		a.Verb = strings.ToLower(req.Method)
	}
	return a, true
}

// recorder wraps the operator's transport and notes every request it makes.
type recorder struct {
	mu        sync.Mutex
	requests  map[access]int
	forbidden map[string]int
}

func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		a, ok := requestAccess(req)
		if !ok {
			return resp, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.requests[a]++
		// A streaming watch-list (sendInitialEvents) stands in for a list:
		// RBAC authorizes it as watch, but a client falls back to a plain
		// list where the API server does not serve watch-lists.
		if a.Verb == "watch" && req.URL.Query().Get("sendInitialEvents") == "true" {
			l := a
			l.Verb = "list"
			r.requests[l]++
		}
		if resp != nil && resp.StatusCode == http.StatusForbidden {
			r.forbidden[req.Method+" "+req.URL.Path]++
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// applyRBAC creates the ServiceAccount, the generated ClusterRole and the
// leader-election Role, and their bindings, from config/rbac as shipped.
func applyRBAC(t *testing.T, ctx context.Context) (*rbacv1.ClusterRole, *rbacv1.Role) {
	t.Helper()
	dir := filepath.Join(localcp.RepoRoot(), "config", "rbac")
	// Applied as kubectl apply would: a second run (-count=2) finds them.
	create := func(o client.Object) {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}})
	var role *rbacv1.ClusterRole
	var leRole *rbacv1.Role
	for _, f := range []string{"service_account.yaml", "role.yaml", "role_binding.yaml", "leader_election_role.yaml", "leader_election_role_binding.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		harness.Must(t, err)
		u := &unstructured.Unstructured{}
		harness.Must(t, sigsyaml.Unmarshal(b, &u.Object))
		create(u)
		switch u.GetKind() {
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			harness.Must(t, sigsyaml.Unmarshal(b, role))
		case "Role":
			leRole = &rbacv1.Role{}
			harness.Must(t, sigsyaml.Unmarshal(b, leRole))
		}
	}
	if role == nil || leRole == nil {
		t.Fatal("config/rbac has no ClusterRole or no leader-election Role")
	}
	return role, leRole
}

// selfHostedBinding is the ClusterRoleBinding of config/rbac-self-hosted.
const selfHostedBinding = "krtt-operator-self-hosted"

// applySelfHostedRBAC adds the opt-in component config/rbac-self-hosted (its
// ClusterRole and binding) until the test ends: the tests that run without
// it must find the ServiceAccount with config/rbac alone.
func applySelfHostedRBAC(t *testing.T, ctx context.Context) *rbacv1.ClusterRole {
	t.Helper()
	dir := filepath.Join(localcp.RepoRoot(), "config", "rbac-self-hosted")
	var role *rbacv1.ClusterRole
	for _, f := range []string{"role.yaml", "role_binding.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		harness.Must(t, err)
		u := &unstructured.Unstructured{}
		harness.Must(t, sigsyaml.Unmarshal(b, &u.Object))
		if err := env.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if u.GetKind() == "ClusterRole" {
			role = &rbacv1.ClusterRole{}
			harness.Must(t, sigsyaml.UnmarshalStrict(b, role))
		}
	}
	if role == nil {
		t.Fatal("config/rbac-self-hosted has no ClusterRole")
	}
	t.Cleanup(func() { withoutSelfHostedRBAC(t, context.Background()) })
	return role
}

// withoutSelfHostedRBAC removes the component's binding and waits until the
// API server's authorizer no longer lets the ServiceAccount list Nodes.
func withoutSelfHostedRBAC(t *testing.T, ctx context.Context) {
	t.Helper()
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: selfHostedBinding}}
	if err := env.Client.Delete(ctx, b); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	harness.Await(t, 30*time.Second, "the ServiceAccount without Node rights", func(ctx context.Context) error {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + operatorNS + ":" + operatorSA,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNS, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "nodes"}}}
		if err := env.Client.Create(ctx, sar); err != nil {
			return err
		}
		if sar.Status.Allowed {
			return fmt.Errorf("still allowed to list Nodes: %s", sar.Status.Reason)
		}
		return nil
	})
}

// operatorConfig is the envtest admin config, impersonating the operator's
// ServiceAccount (as its token would authenticate it), with the recorder
// around its transport.
func operatorConfig(rec *recorder) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + operatorNS + ":" + operatorSA,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNS, "system:authenticated"},
	}
	cfg.Wrap(rec.wrap)
	return cfg
}

// unusedOK lists the grants the lifecycle below does not exercise, each with
// why the role still needs it. A grant used by the lifecycle must not be
// listed here (the test fails on a stale entry), and a grant neither used nor
// listed fails the test: remove it from actions/machine/rbac.go.
var unusedOK = map[string]string{
	"ClusterRole: cluster.krtt.dev machines/finalizers update": "OwnerReferencesPermissionEnforcement lets only who may update " +
		"the owner's finalizers set blockOwnerDeletion: the Machine as controller of its provider objects; no request goes there",
	selfHostedRole + ": core pods delete": "a forced Machine deletion (force-deletion label, onDrainTimeout Force, a Node unhealthy " +
		"for 5 minutes) deletes Pods with grace period 0; this lifecycle deletes politely",
	selfHostedRole + ": storage.k8s.io volumeattachments delete": "a forced Machine deletion deletes the Node's VolumeAttachments; " +
		"this lifecycle deletes politely",
	selfHostedRole + ": core namespaces list":  "a MachineDrainRule with a namespaceSelector reads the Pod's Namespace; this lifecycle has no rule",
	selfHostedRole + ": core namespaces watch": "a MachineDrainRule with a namespaceSelector reads the Pod's Namespace; this lifecycle has no rule",
	"ClusterRole: cluster.krtt.dev machinesets/finalizers update": "OwnerReferencesPermissionEnforcement lets only who may " +
		"update the owner's finalizers set blockOwnerDeletion: the MachineSet as controller of the Machines and clones it creates; no request goes there",
	"ClusterRole: cluster.krtt.dev machinesets delete": "a Cluster's teardown deletes the stand-alone MachineSets it owns; " +
		"this lifecycle deletes no Cluster",
	"ClusterRole: authentication.k8s.io tokenreviews create": "the metrics endpoint reviews a scraper's token; this lifecycle " +
		"serves no metrics (TestMetricsEndpointNeedsAReader uses it)",
	"ClusterRole: authorization.k8s.io subjectaccessreviews create": "the metrics endpoint asks whether a scraper may get /metrics; " +
		"this lifecycle serves no metrics (TestMetricsEndpointNeedsAReader uses it)",
	"ClusterRole: cluster.krtt.dev machinesets create": "the MachineDeployment controller creates a MachineSet per revision; " +
		"this lifecycle creates no MachineDeployment",
	"ClusterRole: cluster.krtt.dev machinedeployments delete": "a Cluster's teardown deletes its MachineDeployments; this " +
		"lifecycle deletes no Cluster",
	"ClusterRole: cluster.krtt.dev machinedeployments get": "after a status patch conflict the kit re-reads the MachineDeployment " +
		"uncached; this lifecycle creates no MachineDeployment",
	"ClusterRole: cluster.krtt.dev machinedeployments patch": "the MachineDeployment controller adds its finalizer; this lifecycle " +
		"creates no MachineDeployment",
	"ClusterRole: cluster.krtt.dev machinedeployments/status patch": "the MachineDeployment controller writes its status; this " +
		"lifecycle creates no MachineDeployment",
	"ClusterRole: cluster.krtt.dev machinedeployments/finalizers update": "OwnerReferencesPermissionEnforcement lets only who may " +
		"update the owner's finalizers set blockOwnerDeletion: the MachineDeployment as controller of its MachineSets; no request goes there",
	"ClusterRole: core secrets create": "the Cluster controller writes the <cluster>-kubeconfig Secret of a Cluster with a " +
		"control plane endpoint, no control plane object and a <cluster>-ca Secret; this lifecycle's Cluster has a control plane object",
	"Role: core events patch": "the leader-election event recorder patches an event it repeats (a re-election soon after " +
		"the last); this lifecycle elects once",
	"ClusterRole: cluster.krtt.dev machinedrainrules/status patch": "the MachineDrainRule controller writes a rule's " +
		"Valid condition; this lifecycle has no rule",
	"ClusterRole: cluster.krtt.dev machinedrainrules get": "after a status patch conflict the kit re-reads the rule " +
		"uncached to rebase its change; this lifecycle has no rule",
}

// selfHostedRole names the ClusterRole of config/rbac-self-hosted in the
// grant keys.
const selfHostedRole = "ClusterRole self-hosted"

// unusedSelfHosted adds, for the self-hosted run, the grants of config/rbac
// only a Cluster with a kubeconfig Secret uses (the default-mode run must
// use them).
var unusedSelfHosted = map[string]string{
	"ClusterRole: core secrets get": "reads the data of a Cluster's <cluster>-kubeconfig Secret once per workload cluster " +
		"connection (uncached, so no other Secret's data is held); this run's Clusters are self-hosted and have no such Secret",
}

// usedSometimes lists grants the lifecycle uses or not depending on timing,
// so neither their use nor their absence can fail the test.
var usedSometimes = map[string]string{
	"Role: coordination.k8s.io leases create": "the first leader creates the Lease; a leader elected once it exists " +
		"(an operator restart, a second run of this test) only updates it",
	"ClusterRole: cluster.krtt.dev machines get": "after a status patch conflict the kit re-reads the Machine uncached " +
		"to rebase its change; whether a conflict happens depends on timing",
	"ClusterRole: cluster.krtt.dev clusters get": "after a status patch conflict the kit re-reads the Cluster uncached " +
		"to rebase its change; whether a conflict happens depends on timing",
	"ClusterRole: cluster.krtt.dev machinesets get": "after a status patch conflict the kit re-reads the MachineSet uncached " +
		"to rebase its change; whether a conflict happens depends on timing",
	"ClusterRole: events.k8s.io events patch": "the event recorder patches an event's series when the same event " +
		"repeats within minutes, which depends on how often a wait is reconciled",
}

func init() {
	// Cluster API providers' groups: the lifecycle uses the simulated
	// provider, whose group the same rule grants the same verbs through the
	// same code (objects read by the provider contract, as unstructured).
	for _, g := range []string{"bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io"} {
		for _, v := range []string{"list", "watch", "patch", "delete"} {
			unusedOK[grantKey("ClusterRole", g, "*", v)] = "provider group; the lifecycle exercises the identical grant on sim.krtt.dev"
		}
	}
	for _, g := range []string{"bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"} {
		unusedOK[grantKey("ClusterRole", g, "*", "create")] = "provider group; the MachineSet exercises the identical grant on sim.krtt.dev"
	}
}

// startOperator runs the operator as its ServiceAccount (its requests
// through rec), serving self-hosted Clusters or not, and the simulated
// provider as admin until the test ends or the returned stop is called (it
// waits until both have stopped); it also returns the operator's manager.
func startOperator(t *testing.T, ctx context.Context, rec *recorder, leaderElect, selfHosted bool) (stop func(), opMgr ctrl.Manager) {
	t.Helper()
	// The group stops both when the test ends, and fails it if anything
	// they started still reconciles then.
	g := leakcheck.NewGroup(t)
	mctx, stop := g.Context(), g.Stop
	run := func(name string, mgr ctrl.Manager) { g.Go(name+" manager", mgr) }
	// It manages only this package's objects (harness.Filter), as the
	// control plane may be shared with other packages.
	opts, err := harness.OperatorOptions(harness.Filter)
	harness.Must(t, err)
	opts.LeaderElection, opts.LeaderElectionNamespace, opts.LeaderElectionReleaseOnCancel = leaderElect, operatorNS, true
	opMgr, err = actions.NewManager(operatorConfig(rec), opts)
	harness.Must(t, err)
	harness.Must(t, actions.Setup(mctx, opMgr, nil, controller.Options{Concurrency: 2, SelfHostedClusters: selfHosted}))
	// The simulated provider, kubelet and CSI driver are not the operator:
	// they run with the admin config.
	simMgr, err := harness.NewSimManager(mctx, env.Config, sim.Options{KubeletGracePeriodCap: time.Second, HeartbeatInterval: time.Second})
	harness.Must(t, err)
	run("operator", opMgr)
	run("sim", simMgr)
	return stop, opMgr
}

// TestSelfHostedModeRunsWithGeneratedRBAC: with --self-hosted-clusters and
// config/rbac-self-hosted added to config/rbac, the lifecycle of a
// self-hosted Cluster's Machines (Nodes, Pods, volumes in the management
// cluster) is refused nothing, and every grant of both ClusterRoles is used.
func TestSelfHostedModeRunsWithGeneratedRBAC(t *testing.T) {
	ctx := context.Background()
	role, leRole := applyRBAC(t, ctx)
	shRole := applySelfHostedRBAC(t, ctx)
	rec := &recorder{requests: map[access]int{}, forbidden: map[string]int{}}

	// The operator: impersonating its ServiceAccount, with leader election
	// as the shipped Deployment runs it.
	stop, _ := startOperator(t, ctx, rec, true, true)

	c := env.Client
	ns := localcp.UniqueName("rbac")
	harness.Must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	_, err := harness.ClusterObjects(ctx, c, ns, "c1", true)
	harness.Must(t, err)
	runLifecycle(t, ctx, rec, ns)
	stop()

	if f := rec.forbiddenList(); len(f) > 0 {
		t.Errorf("the operator was refused requests the lifecycle needed; grant them in actions/machine/rbac.go or internal/selfhosted:\n  %s", strings.Join(f, "\n  "))
	}
	used := rec.snapshot()
	t.Logf("requests the operator made, by access:\n  %s", strings.Join(used, "\n  "))
	exempt := withEntries(unusedOK, unusedSelfHosted)
	// A request in the operator's namespace that the leader-election Role
	// allows is the Role's; one the default ClusterRole allows is its; the
	// component's ClusterRole has the rest.
	byRole := func(a access) bool {
		return a.Namespace == operatorNS && slices.ContainsFunc(leRole.Rules, func(r rbacv1.PolicyRule) bool { return covers(r, a) })
	}
	byDefault := func(a access) bool {
		return !byRole(a) && slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return covers(r, a) })
	}
	checkGrantsUsed(t, "Role", leRole.Rules, rec, within(ns, byRole), exempt)
	checkGrantsUsed(t, "ClusterRole", role.Rules, rec, within(ns, byDefault), exempt)
	checkGrantsUsed(t, selfHostedRole, shRole.Rules, rec, within(ns, func(a access) bool { return !byRole(a) && !byDefault(a) }), exempt)
}

// within keeps the requests of the test's own lifecycle: cluster-wide ones
// and those in the operator's and the test's namespaces. The operator also
// reconciles what the package's other tests left in theirs (shuffled, they
// may run first), which says nothing about this test's grants.
func within(ns string, match func(access) bool) func(access) bool {
	return func(a access) bool {
		return (a.Namespace == "" || a.Namespace == ns || a.Namespace == operatorNS) && match(a)
	}
}

// TestDefaultModeRunsWithConfigRBAC: as shipped (config/rbac alone, no
// --self-hosted-clusters) the operator runs the lifecycle of a Cluster whose
// kubeconfig Secret names its workload cluster, makes no request config/rbac
// does not grant (none of Nodes, Pods or volumes in the management cluster),
// uses every grant, and tells a Cluster without a Secret how to enable
// self-hosted Clusters.
func TestDefaultModeRunsWithConfigRBAC(t *testing.T) {
	ctx := context.Background()
	role, leRole := applyRBAC(t, ctx)
	withoutSelfHostedRBAC(t, ctx)
	rec := &recorder{requests: map[access]int{}, forbidden: map[string]int{}}
	stop, _ := startOperator(t, ctx, rec, true, false)

	c := env.Client
	ns := localcp.UniqueName("rbac-default")
	harness.Must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	// The workload cluster is the same API server, reached with the admin
	// credentials the Secret carries: the Node side's requests are not the
	// ServiceAccount's, as a real workload cluster's are not.
	harness.Must(t, remote.WriteSecret(ctx, c, ns, "c1", env.Config))
	_, err := harness.ClusterObjects(ctx, c, ns, "c1", true)
	harness.Must(t, err)
	_, err = harness.ClusterObjects(ctx, c, ns, "no-secret", true)
	harness.Must(t, err)
	harness.Await(t, 60*time.Second, "the Cluster without a Secret says how to enable self-hosted Clusters", func(ctx context.Context) error {
		cl := &clusterv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "no-secret"}, cl); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(cl.Status.Conditions, clustercontroller.WorkloadClusterReachableCondition)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != string(remote.NoAccess) ||
			!strings.Contains(cond.Message, "config/rbac-self-hosted") || !strings.Contains(cond.Message, "--self-hosted-clusters") {
			return fmt.Errorf("WorkloadClusterReachable %+v", cond)
		}
		return nil
	})
	runLifecycle(t, ctx, rec, ns)
	stop()

	if f := rec.forbiddenList(); len(f) > 0 {
		t.Errorf("the operator was refused requests with config/rbac alone:\n  %s", strings.Join(f, "\n  "))
	}
	used := rec.snapshot()
	t.Logf("requests the operator made, by access:\n  %s", strings.Join(used, "\n  "))
	byRole := func(a access) bool {
		return a.Namespace == operatorNS && slices.ContainsFunc(leRole.Rules, func(r rbacv1.PolicyRule) bool { return covers(r, a) })
	}
	byDefault := func(a access) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return covers(r, a) })
	}
	// Not merely unrefused (the binding could have lingered): no request
	// at all outside what config/rbac grants.
	var outside []string
	rec.used(within(ns, func(a access) bool {
		if !byRole(a) && !byDefault(a) {
			outside = append(outside, a.String())
		}
		return false
	}))
	if len(outside) > 0 {
		sort.Strings(outside)
		t.Errorf("without self-hosted Clusters the operator made requests config/rbac does not grant:\n  %s", strings.Join(outside, "\n  "))
	}
	checkGrantsUsed(t, "Role", leRole.Rules, rec, within(ns, byRole), unusedOK)
	checkGrantsUsed(t, "ClusterRole", role.Rules, rec, within(ns, func(a access) bool { return !byRole(a) }), unusedOK)
}

// withEntries is base with more's entries added.
func withEntries(base, more map[string]string) map[string]string {
	out := maps.Clone(base)
	maps.Copy(out, more)
	return out
}

// runLifecycle runs the lifecycle both modes prove on Cluster c1 of ns,
// whose Node side is the control plane's Nodes either way (directly, or
// through the Secret): a Machine created, given a workload that makes its
// deletion read everything it may read, and deleted; then a MachineSet of
// one, created and deleted.
func runLifecycle(t *testing.T, ctx context.Context, rec *recorder, ns string) {
	t.Helper()
	c := env.Client
	_, err := harness.MachineObjects(ctx, c, ns, "c1", "m1", simv1.SimBehavior{ProvisionDelaySeconds: 1, DeleteDelaySeconds: 1})
	harness.Must(t, err)
	node := sim.NodeName(ns, "m1")
	harness.Await(t, 90*time.Second, "Machine Running", func(ctx context.Context) error {
		m := &clusterv1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m1"}, m); err != nil {
			return err
		}
		if m.Status.Phase != clusterv1.MachinePhaseRunning || m.Status.NodeRef == nil || m.Status.NodeRef.Name != node {
			return fmt.Errorf("phase %q nodeRef %+v last row %+v; forbidden so far %v", m.Status.Phase, m.Status.NodeRef, m.Status.LastTransition, rec.forbiddenList())
		}
		return nil
	})

	// A workload that makes the deletion read everything it may read: a Pod
	// behind a PodDisruptionBudget, a Pod with a volume, a DaemonSet's Pod
	// and a Pod the drain must skip that has a volume of its own.
	for _, claim := range []string{"data", "skipped-data"} {
		harness.Must(t, c.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: claim},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}))
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}}}
	harness.Must(t, c.Create(ctx, ds))
	maxUnavailable := intstr.FromInt32(1)
	harness.Must(t, c.Create(ctx, harness.Label(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &maxUnavailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})))
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "store"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-x", Labels: map[string]string{"app": "agent"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pinned", Labels: map[string]string{clusterv1.PodDrainLabel: "skip"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "skipped-data"}}}}}},
	}
	for _, p := range pods {
		harness.Must(t, c.Create(ctx, p))
	}
	harness.Await(t, 60*time.Second, "Pods running, volumes attached", func(ctx context.Context) error {
		return harness.PodsRunning(ctx, c, pods, node, 2)
	})

	harness.Must(t, c.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}))
	harness.Await(t, 120*time.Second, "Machine, its Node, Pods and provider objects gone", func(ctx context.Context) error {
		for _, obj := range []client.Object{
			&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}},
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
			&simv1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}},
			&simv1.SimBootstrapConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}},
			pods[0], pods[1],
		} {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			if err == nil {
				return fmt.Errorf("%T %s still there; forbidden so far %v", obj, obj.GetName(), rec.forbiddenList())
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})

	// A MachineSet of one: it clones its templates, creates its Machine,
	// and on deletion deletes the Machine and waits until it is gone.
	ms, err := harness.MachineSetObjects(ctx, c, ns, "c1", "ms", 1, simv1.SimBehavior{ProvisionDelaySeconds: 1, DeleteDelaySeconds: 1})
	harness.Must(t, err)
	harness.Await(t, 90*time.Second, "the MachineSet's Machine Running", func(ctx context.Context) error {
		machines, err := harness.MachinesOf(ctx, c, ms)
		if err != nil {
			return err
		}
		if len(machines) != 1 || machines[0].Status.Phase != clusterv1.MachinePhaseRunning {
			return fmt.Errorf("%d Machines; forbidden so far %v", len(machines), rec.forbiddenList())
		}
		return nil
	})
	harness.Must(t, c.Delete(ctx, ms))
	harness.Await(t, 120*time.Second, "MachineSet and its Machine gone", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(ms), &clusterv1.MachineSet{})
		if err == nil {
			return fmt.Errorf("MachineSet still there; forbidden so far %v", rec.forbiddenList())
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d Machines left", len(list.Items))
		}
		return nil
	})
}

// checkGrantsUsed fails for every (group, resource, verb) a rule grants that
// no recorded request accepted by mine used and exempt does not explain,
// and for every exempt entry that was used.
func checkGrantsUsed(t *testing.T, what string, rules []rbacv1.PolicyRule, rec *recorder, mine func(access) bool, exempt map[string]string) {
	t.Helper()
	var unused []string
	for _, rule := range rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					key := grantKey(what, g, res, v)
					usedIt := rec.used(func(a access) bool {
						return mine(a) && covers(rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}}, a)
					})
					reason, listed := exempt[key]
					if _, ok := usedSometimes[key]; ok {
						continue
					}
					switch {
					case usedIt && listed:
						t.Errorf("%q is listed as unused (%s) but the lifecycle used it: drop it from unusedOK", key, reason)
					case !usedIt && !listed:
						unused = append(unused, key)
					}
				}
			}
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		t.Errorf("the RBAC grants what the operator never used in a full lifecycle; remove it from the RBAC markers (actions/machine/rbac.go or internal/selfhosted, then make manifests) or config/rbac, or list it in unusedOK with the reason:\n  %s",
			strings.Join(unused, "\n  "))
	}
}

func grantKey(what, group, resource, verb string) string {
	if group == "" {
		group = "core"
	}
	return what + ": " + group + " " + resource + " " + verb
}

// covers reports whether the rule authorizes the access.
func covers(rule rbacv1.PolicyRule, a access) bool {
	full := a.Resource
	if a.Subresource != "" {
		full += "/" + a.Subresource
	}
	return (slices.Contains(rule.APIGroups, "*") || slices.Contains(rule.APIGroups, a.Group)) &&
		(slices.Contains(rule.Resources, "*") || slices.Contains(rule.Resources, full)) &&
		(slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Verbs, a.Verb))
}

// used reports whether any recorded request satisfies match.
func (r *recorder) used(match func(access) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a := range r.requests {
		if match(a) {
			return true
		}
	}
	return false
}

func (r *recorder) forbiddenList() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k, n := range r.forbidden {
		out = append(out, fmt.Sprintf("%s (%d)", k, n))
	}
	sort.Strings(out)
	return out
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for a, n := range r.requests {
		out = append(out, fmt.Sprintf("%s (%d)", a, n))
	}
	sort.Strings(out)
	return out
}
