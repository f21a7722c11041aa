package remote_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/krtt-dev/krtt/internal/remote"
	"github.com/krtt-dev/krtt/internal/selfhosted"
)

// Without Options.SelfHosted a Cluster that has no kubeconfig Secret is not
// served from the management cluster: it is NoAccess, says how to enable
// self-hosted Clusters, and stays NoAccess since the same moment (so the
// Node-side timeouts that count from it can run out) until the Cluster goes.
func TestSelfHostedDisabled(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	local := fake.NewClientBuilder().WithScheme(scheme).Build()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	key := client.ObjectKey{Namespace: "ns", Name: "c1"}
	ctx := context.Background()

	on := remote.New(local, local, remote.Options{Scheme: scheme, SelfHosted: true, Now: clock})
	defer on.Close()
	got, err := on.ClientFor(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != remote.SelfHosted || got.SelfHostedDisabled || got.Client != local {
		t.Fatalf("SelfHosted on: state %s, disabled %v, client %T; want SelfHosted through the management client", got.State, got.SelfHostedDisabled, got.Client)
	}

	off := remote.New(local, local, remote.Options{Scheme: scheme, Now: clock})
	defer off.Close()
	first, err := off.ClientFor(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if first.State != remote.NoAccess || !first.SelfHostedDisabled || first.Usable() || first.Client != nil {
		t.Fatalf("SelfHosted off: state %s, disabled %v, usable %v, client %v; want NoAccess, disabled, no client",
			first.State, first.SelfHostedDisabled, first.Usable(), first.Client)
	}
	for _, want := range []string{"ns/c1-kubeconfig", selfhosted.RBACDir, "--" + selfhosted.Flag} {
		if !strings.Contains(first.Message, want) {
			t.Errorf("message %q does not name %q", first.Message, want)
		}
	}
	if !first.Since.Equal(now) {
		t.Errorf("Since = %s, want the first lookup %s", first.Since, now)
	}

	now = now.Add(time.Minute)
	again, err := off.ClientFor(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Since.Equal(first.Since) {
		t.Errorf("a later lookup moved Since from %s to %s", first.Since, again.Since)
	}

	// A Cluster that went away and comes back starts over.
	off.Disconnect(key)
	back, err := off.ClientFor(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Since.Equal(now) {
		t.Errorf("after Disconnect Since = %s, want %s", back.Since, now)
	}
}
