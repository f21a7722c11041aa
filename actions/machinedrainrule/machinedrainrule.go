// Package machinedrainrule is the MachineDrainRule controller: it says on
// a rule whether the drain can evaluate its selectors (Valid condition, a
// Warning Event when it cannot), for a rule stored before the API server
// validated them holds the drain of every Machine it may select.
package machinedrainrule

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/controller"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

// Name is the controller's name: metrics label, Events reporter, the
// TableSet's name.
const Name = "machinedrainrule"

// RegistryName is the name the TableSet gives in spec.registry.
const RegistryName = "machinedrainrule"

// observeTimeout bounds one reconcile's read of the rule (from the cache).
const observeTimeout = 10 * time.Second

// workers: a rule is read and judged in memory; one worker is plenty.
const workers = 1

// Scope is one rule as read.
type Scope struct {
	Key   client.ObjectKey
	Found bool
	Rule  *clusterv1.MachineDrainRule
	Err   error
}

// Registry returns the MachineDrainRule registry.
var Registry = engine.LazyRegistry(RegistryName, register)

func register(reg *engine.Registry[*Scope]) {
	reg.Bool("ruleFound", func(s *Scope) bool { return s.Found })
	reg.Bool("selectorsValid", func(s *Scope) bool { return s.Rule.InvalidSelector() == "" })
	reg.Action("DescribeInvalidSelector", "Name the selector of the rule that cannot be evaluated, and why.", describeInvalidSelector, engine.Pure())
}

func describeInvalidSelector(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("%s cannot be evaluated", s.Rule.InvalidSelector())
}

// Catalogs are the catalogs of the registries the tables name.
func Catalogs() []*engine.Catalog { return []*engine.Catalog{Registry().Catalog()} }

// Spec is the MachineDrainRule controller for the kit.
func Spec(set *engine.TableSet, c client.Client) reconciler.Spec[*clusterv1.MachineDrainRule, *Scope] {
	return reconciler.Spec[*clusterv1.MachineDrainRule, *Scope]{
		Name:           Name,
		Set:            set,
		Registry:       Registry(),
		NewObject:      func() *clusterv1.MachineDrainRule { return &clusterv1.MachineDrainRule{} },
		NewList:        func() client.ObjectList { return &clusterv1.MachineDrainRuleList{} },
		ObserveTimeout: observeTimeout,
		Observe: func(ctx context.Context, key client.ObjectKey, _ time.Time) reconciler.Observation[*clusterv1.MachineDrainRule, *Scope] {
			s := &Scope{Key: key}
			r := &clusterv1.MachineDrainRule{}
			switch err := c.Get(ctx, key, r); {
			case err == nil:
				s.Found, s.Rule = true, r
			case !apierrors.IsNotFound(err):
				s.Err = err
			}
			return reconciler.Observation[*clusterv1.MachineDrainRule, *Scope]{Env: s, Object: s.Rule, Found: s.Found, Err: s.Err}
		},
	}
}

// Setup builds the MachineDrainRule controller on the kit: a rule is woken
// by its own changes only.
func Setup(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	r, err := reconciler.New(Spec(opts.Set, mgr.GetClient()), opts.Kit(mgr, Name))
	if err != nil {
		return err
	}
	return r.Setup(mgr, r.Builder(mgr), workers, nil)
}

// The MachineDrainRule controller's permissions (config/rbac/role.yaml, make manifests).
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedrainrules,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.krtt.dev,resources=machinedrainrules/status,verbs=patch
