// Package door is a complete krtt controller written only against krtt's
// exported packages: a Door (testdata/crd.yaml) opens while its spec asks,
// closes itself after spec.autoCloseSeconds (a timed wait), rings a bell
// (a ConfigMap it owns) when it opens, and deletes the bell behind a
// finalizer. The tables are in transitions/, the Go side in registry.go,
// the status mapping in api.go.
package door

import (
	"context"
	"embed"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/reconciler"
)

//go:embed transitions/*.yaml
var tables embed.FS

// Tables loads the door TableSet and checks it against the registry, as
// krtt lint would: a controller refuses to start on tables with findings.
func Tables() (*engine.TableSet, error) {
	lib, fs := engine.LoadFS(tables, "transitions")
	if lib == nil || fs.HasErrors() {
		return nil, fmt.Errorf("door tables: %v", fs)
	}
	if fs := engine.Check(lib, Catalogs()); len(fs) > 0 {
		return nil, fmt.Errorf("door tables: %v", fs)
	}
	return lib.TableSet("door"), nil
}

// Catalogs are the registries the tables name, by name, for engine.Check
// and `krtt lint --catalog`.
func Catalogs() map[string]*engine.Catalog {
	return map[string]*engine.Catalog{"door": Registry().Catalog()}
}

// Spec is the Door controller for the kit.
func Spec(set *engine.TableSet, c client.Client) reconciler.Spec[*Door, *World] {
	return reconciler.Spec[*Door, *World]{
		Name:      "door",
		Set:       set,
		Registry:  Registry(),
		NewObject: func() *Door { return &Door{} },
		NewList:   func() client.ObjectList { return &DoorList{} },
		Finalizer: Finalizer,
		Observe: func(ctx context.Context, key client.ObjectKey, now time.Time) reconciler.Observation[*Door, *World] {
			w := &World{Now: now, client: c}
			d := &Door{}
			if err := c.Get(ctx, key, d); err != nil {
				if apierrors.IsNotFound(err) {
					err = nil
				}
				return reconciler.Observation[*Door, *World]{Env: w, Err: err}
			}
			w.Door = d
			bell := &corev1.ConfigMap{}
			switch err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: BellName(key.Name)}, bell); {
			case err == nil:
				w.Bell = bell
			case !apierrors.IsNotFound(err):
				w.BellErr = err
			}
			return reconciler.Observation[*Door, *World]{Env: w, Object: d, Found: true, Err: w.BellErr}
		},
	}
}

// Options are what Setup takes besides the manager.
type Options struct {
	// Now is the controller's clock; time.Now when nil.
	Now func() time.Time
	// Traces, when set, receives every row the controller fires.
	Traces func(engine.Trace)
}

// Setup adds the Door controller to the manager, whose scheme must know
// Door (AddToScheme) and ConfigMap.
//
// +kubebuilder:rbac:groups=example.krtt.dev,resources=doors,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=example.krtt.dev,resources=doors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
func Setup(mgr ctrl.Manager, opts Options) error {
	set, err := Tables()
	if err != nil {
		return err
	}
	r, err := reconciler.New(Spec(set, mgr.GetClient()), reconciler.Options{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("door-controller"), Now: opts.Now, Traces: opts.Traces,
	})
	if err != nil {
		return err
	}
	// The bell's changes (its deletion above all) wake its Door.
	return r.Setup(mgr, r.Builder(mgr).Owns(&corev1.ConfigMap{}), 1, nil)
}
