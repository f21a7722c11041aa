package machineset

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/localcp"
	"github.com/krtt-dev/krtt/test/framework/poll"
	simv1 "github.com/krtt-dev/krtt/test/infrastructure/sim/api/v1alpha1"
)

var env *localcp.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(localcp.RunTests(m, func(cp *localcp.ControlPlane) error { env = cp; return nil }))
}

// observed creates a MachineSet of 1 with its templates in a fresh
// namespace and observes it, as a reconcile would.
func observed(t *testing.T) (*Scope, string) {
	t.Helper()
	ctx := context.Background()
	ns := localcp.UniqueName("create")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}},
		&simv1.SimBootstrapConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}},
		&simv1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"pool": "a"}
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ms"},
		Spec: clusterv1.MachineSetSpec{ClusterName: "c1", Replicas: ptr.To[int32](1),
			Selector: clusterv1.MachineSetSelector{MatchLabels: labels},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.TemplateMetadata{Labels: labels},
				Spec: clusterv1.MachineSpec{ClusterName: "c1",
					Bootstrap:         clusterv1.MachineBootstrap{ConfigRef: &clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimBootstrapConfigTemplate", Name: "t"}},
					InfrastructureRef: clusterv1.ObjectReference{APIGroup: "sim.krtt.dev", Kind: "SimMachineTemplate", Name: "t"}}}}}
	if err := env.Client.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	s := (&Observer{Client: env.Client}).Observe(ctx, client.ObjectKeyFromObject(ms), time.Now())
	if s.Err != nil || s.BootstrapTemplate == nil || s.InfrastructureTemplate == nil {
		t.Fatalf("observe: %v, templates %v %v", s.Err, s.BootstrapTemplate != nil, s.InfrastructureTemplate != nil)
	}
	return s, ns
}

// objects counts the objects of list's kind in ns.
func objects(t *testing.T, ns string, list client.ObjectList) int {
	t.Helper()
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return meta.LenList(list)
}

// TestCreateMachineClonesTemplates: a Machine and its two clones, named
// alike, controlled by the set, the Machine referencing the clones.
func TestCreateMachineClonesTemplates(t *testing.T) {
	s, ns := observed(t)
	m, err := createMachine(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Name, "ms-") || len(m.Name) != len("ms-")+5 {
		t.Errorf("name %q, want ms-<5 random characters>", m.Name)
	}
	if m.Spec.InfrastructureRef.Kind != "SimMachine" || m.Spec.InfrastructureRef.Name != m.Name ||
		m.Spec.Bootstrap.ConfigRef.Kind != "SimBootstrapConfig" || m.Spec.Bootstrap.ConfigRef.Name != m.Name {
		t.Errorf("references %+v %+v", m.Spec.Bootstrap.ConfigRef, m.Spec.InfrastructureRef)
	}
	if ref := metav1.GetControllerOf(m); ref == nil || ref.Kind != "MachineSet" || ref.Name != "ms" {
		t.Errorf("controller %+v", ref)
	}
	sm := &simv1.SimMachine{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: m.Name}, sm); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(sm); ref == nil || ref.Kind != "MachineSet" || sm.Labels[clusterv1.SetNameLabel] != "ms" {
		t.Errorf("clone controller %+v labels %v", ref, sm.Labels)
	}
}

// TestCreateMachineLeavesNothingHalfWay: when the infrastructure clone is
// refused, the bootstrap clone already created is deleted again and no
// Machine is created.
func TestCreateMachineLeavesNothingHalfWay(t *testing.T) {
	s, ns := observed(t)
	// A template the clone's CRD refuses (provisionDelaySeconds must be 0
	// or more): any provider's template can be wrong in ways only its
	// objects' validation finds.
	if err := unstructured.SetNestedField(s.InfrastructureTemplate.Object, int64(-1), "spec", "template", "spec", "sim", "provisionDelaySeconds"); err != nil {
		t.Fatal(err)
	}
	_, err := createMachine(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "create SimMachine") {
		t.Fatalf("error %v, want the refused SimMachine", err)
	}
	if n := objects(t, ns, &simv1.SimBootstrapConfigList{}); n != 0 {
		t.Errorf("%d SimBootstrapConfigs left behind", n)
	}
	if n := objects(t, ns, &clusterv1.MachineList{}); n != 0 {
		t.Errorf("%d Machines created", n)
	}
	if n := objects(t, ns, &simv1.SimMachineList{}); n != 0 {
		t.Errorf("%d SimMachines created", n)
	}
}

// TestCreateMachinesFailureIsAnOutcome: whatever the API server answers to a
// Machine create, CreateMachines returns a failed outcome with the API's
// message below Cluster API's "Scaling up from X to Y replicas" (R05's
// onFailure keeps ScalingUp True with it, tells a MachineCreationFailed
// Warning and backs off), deletes the clones it made, and does not panic: a failed create
// leaves a nil *Machine that must not reach WaitForCache as a typed-nil
// client.Object.
func TestCreateMachinesFailureIsAnOutcome(t *testing.T) {
	gr := schema.GroupResource{Group: clusterv1.GroupVersion.Group, Resource: "machines"}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "Machine"}, "m", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "x", "must be no more than 63 bytes")})},
		{"forbidden", apierrors.NewForbidden(gr, "m", errors.New("exceeded quota: machines"))},
		{"already exists", apierrors.NewAlreadyExists(gr, "m")},
		{"conflict", apierrors.NewConflict(gr, "m", errors.New("the object has been modified"))},
		{"timeout", apierrors.NewServerTimeout(gr, "create", 2)},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1)},
		{"internal error", apierrors.NewInternalError(errors.New("etcd is down"))},
		{"admission webhook", apierrors.NewBadRequest(`admission webhook "deny.example.com" denied the request: no Machines here`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ns := observed(t)
			s.Client = refuseMachines{Client: env.Client, err: tc.err}
			var out engine.Outcome
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("CreateMachines panicked: %v", r)
					}
				}()
				out = createMachines(context.Background(), s)
			}()
			if out.Status != engine.Failed || !strings.Contains(out.Message, tc.err.Error()) ||
				!strings.HasPrefix(out.Message, "Scaling up from 0 to 1 replicas is blocked because:\n* ") {
				t.Errorf("outcome %s %q, want Failed with %q below the scaling line", out.Status, out.Message, tc.err.Error())
			}
			if n := objects(t, ns, &simv1.SimMachineList{}) + objects(t, ns, &simv1.SimBootstrapConfigList{}); n != 0 {
				t.Errorf("%d clones left behind", n)
			}
		})
	}
}

// TestCreatedObjects: only the Machines created are waited for; the nil
// a failed creation leaves is not a client.Object.
func TestCreatedObjects(t *testing.T) {
	m := &clusterv1.Machine{}
	if got := createdObjects([]*clusterv1.Machine{nil, m, nil}); len(got) != 1 || got[0] != client.Object(m) {
		t.Errorf("createdObjects = %v, want the one Machine", got)
	}
	if got := createdObjects([]*clusterv1.Machine{nil}); len(got) != 0 {
		t.Errorf("createdObjects of a failed creation = %v, want none", got)
	}
}

// TestCreateMachineWithALongSetName: a set name longer than a label value
// may be gives its Machines and clones the hashed set-name label.
func TestCreateMachineWithALongSetName(t *testing.T) {
	s, ns := observed(t)
	s.Set.Name = strings.Repeat("long-", 14)
	m, err := createMachine(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Labels[clusterv1.SetNameLabel]; got != LabelValue(s.Set.Name) || len(got) > 63 {
		t.Errorf("set-name label %q", got)
	}
	sm := &simv1.SimMachine{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: m.Name}, sm); err != nil {
		t.Fatal(err)
	}
	if sm.Labels[clusterv1.SetNameLabel] != LabelValue(s.Set.Name) {
		t.Errorf("clone labels %v", sm.Labels)
	}
}

// refuseMachines is the API server refusing every Machine create with err;
// other objects (the clones) are created.
type refuseMachines struct {
	client.Client
	err error
}

func (c refuseMachines) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*clusterv1.Machine); ok {
		return c.err
	}
	return c.Client.Create(ctx, obj, opts...)
}

// TestSyncMachinesReachesProviderObjects: a template label and annotation
// added reach the Machine's bootstrap and infrastructure objects, and go
// from them when the template drops them, keys others set staying (Cluster
// API syncMachines, updateLabelsAndAnnotations).
func TestSyncMachinesReachesProviderObjects(t *testing.T) {
	ctx := context.Background()
	s, ns := observed(t)
	s.Set.Spec.Template.ObjectMeta.Annotations = map[string]string{"note": "v1"}
	m, err := createMachine(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	providers := []client.Object{&simv1.SimMachine{}, &simv1.SimBootstrapConfig{}}
	read := func() (labels, annotations []map[string]string) {
		for _, obj := range providers {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Name}, obj); err != nil {
				t.Fatal(err)
			}
			labels, annotations = append(labels, obj.GetLabels()), append(annotations, obj.GetAnnotations())
		}
		return labels, annotations
	}
	// Someone else's label on the infrastructure object stays.
	sm := &simv1.SimMachine{}
	poll.Must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Name}, sm))
	sm.Labels["owner"] = "me"
	poll.Must(t, env.Client.Update(ctx, sm))

	sync := func(tpl clusterv1.TemplateMetadata) {
		t.Helper()
		s.Set.Spec.Template.ObjectMeta = tpl
		s.OutOfSync = outOfSync(s.Set, []*clusterv1.Machine{m})
		if len(s.OutOfSync) != 1 {
			t.Fatal("the Machine is in sync with a changed template")
		}
		if o := syncMachines(ctx, s); o.Status != engine.Done {
			t.Fatalf("sync: %s %v", o.Message, o.Err)
		}
		poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(m), m))
	}
	sync(clusterv1.TemplateMetadata{Labels: map[string]string{"pool": "a", "tier": "web"}, Annotations: map[string]string{"note": "v2"}})
	labels, annotations := read()
	for i := range providers {
		if labels[i]["tier"] != "web" || labels[i]["pool"] != "a" || labels[i][clusterv1.SetNameLabel] != "ms" || annotations[i]["note"] != "v2" {
			t.Errorf("provider object %d: labels %v annotations %v, want the template's", i, labels[i], annotations[i])
		}
	}
	if labels[0]["owner"] != "me" {
		t.Errorf("a label someone else set went: %v", labels[0])
	}

	sync(clusterv1.TemplateMetadata{Labels: map[string]string{"pool": "a"}})
	labels, annotations = read()
	for i := range providers {
		if _, ok := labels[i]["tier"]; ok {
			t.Errorf("provider object %d keeps the label the template dropped: %v", i, labels[i])
		}
		if _, ok := annotations[i]["note"]; ok {
			t.Errorf("provider object %d keeps the annotation the template dropped: %v", i, annotations[i])
		}
		if annotations[i][contract.ClonedFromNameAnnotation] != "t" {
			t.Errorf("provider object %d lost its cloned-from annotation: %v", i, annotations[i])
		}
	}
	if labels[0]["owner"] != "me" {
		t.Errorf("a label someone else set went: %v", labels[0])
	}
}

// TestMarkedMachinesBeyondMaxInFlightAreToldTheyWait: with maxInFlight 1
// and two Machines a health checker marked, one is deleted and the other
// gets OwnerRemediated reason RemediationDeferred; saying it again writes
// nothing.
func TestMarkedMachinesBeyondMaxInFlightAreToldTheyWait(t *testing.T) {
	ctx := context.Background()
	s, ns := twoMarkedMachines(t)
	if out := deleteFailedMachines(ctx, s); out.Status != engine.Done {
		t.Fatalf("deleteFailedMachines: %+v", out)
	}
	list := &clusterv1.MachineList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var live []*clusterv1.Machine
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			live = append(live, &list.Items[i])
		}
	}
	if len(live) != 1 {
		t.Fatalf("%d Machines not being deleted, want 1 (maxInFlight 1)", len(live))
	}
	left := live[0]
	c := meta.FindStatusCondition(left.Status.Conditions, clusterv1.OwnerRemediatedCondition)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1.RemediationDeferredReason ||
		!strings.Contains(c.Message, "(spec.strategy.remediation.maxInFlight is 1)") {
		t.Fatalf("OwnerRemediated of the Machine left = %+v, want False RemediationDeferred naming maxInFlight", c)
	}
	s.Owned = []*clusterv1.Machine{left}
	if out := deferRemediationToInFlight(ctx, s); out.Status != engine.Done || !out.WroteNothing {
		t.Errorf("deferring again: %+v, want done having written nothing", out)
	}
	again := &clusterv1.Machine{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(left), again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != left.ResourceVersion {
		t.Errorf("resourceVersion %s -> %s: the Machine was written again", left.ResourceVersion, again.ResourceVersion)
	}
}

// twoMarkedMachines is a set of 2 (maxInFlight 1, the default) whose two
// Machines a health checker marked for remediation.
func twoMarkedMachines(t *testing.T) (*Scope, string) {
	t.Helper()
	ctx := context.Background()
	s, ns := observed(t)
	s.Set.Spec.Replicas = ptr.To[int32](2)
	for range 2 {
		m, err := createMachine(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		remediationRequested(m)
		for i := range m.Status.Conditions {
			m.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
		if err := env.Client.Status().Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		s.Owned = append(s.Owned, m)
	}
	s.Counts = count(s.Owned, s.Set)
	return s, ns
}

// TestPreflightDeferralKeepsTheMaxInFlightCut: while a preflight check
// fails, the marked Machine maxInFlight would let the set delete is told
// about the check, the other one about maxInFlight, as Cluster API cuts
// before it runs the checks.
func TestPreflightDeferralKeepsTheMaxInFlightCut(t *testing.T) {
	ctx := context.Background()
	s, _ := twoMarkedMachines(t)
	s.Preflight = []string{"SimControlPlane cp is upgrading"}
	if out := deferRemediationToPreflight(ctx, s); out.Status != engine.Done || out.WroteNothing {
		t.Fatalf("deferRemediationToPreflight: %+v", out)
	}
	var messages []string
	for _, m := range s.Owned {
		got := &clusterv1.Machine{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), got); err != nil {
			t.Fatal(err)
		}
		c := meta.FindStatusCondition(got.Status.Conditions, clusterv1.OwnerRemediatedCondition)
		if c == nil || c.Reason != clusterv1.RemediationDeferredReason {
			t.Fatalf("Machine %s: OwnerRemediated %+v, want RemediationDeferred", m.Name, c)
		}
		messages = append(messages, c.Message)
	}
	slices.Sort(messages)
	if messages[0] != "* SimControlPlane cp is upgrading" || !strings.Contains(messages[1], "spec.strategy.remediation.maxInFlight is 1") {
		t.Errorf("messages %q: want one naming the check, one naming maxInFlight", messages)
	}
}
