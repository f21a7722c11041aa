package engine

import "testing"

// TestLazyRegistry: the fill functions run once, in order, on first use, and
// every call returns that one registry.
func TestLazyRegistry(t *testing.T) {
	var calls []string
	get := LazyRegistry("lazy",
		func(r *Registry[int]) {
			calls = append(calls, "facts")
			r.Bool("on", func(int) bool { return true })
		},
		func(r *Registry[int]) { calls = append(calls, "actions") },
	)
	if len(calls) != 0 {
		t.Fatalf("filled before first use: %v", calls)
	}
	a, b := get(), get()
	if a != b {
		t.Fatal("two calls returned two registries")
	}
	if len(calls) != 2 || calls[0] != "facts" || calls[1] != "actions" {
		t.Fatalf("fill calls = %v, want [facts actions] once", calls)
	}
	if a.Name() != "lazy" {
		t.Errorf("name %q, want lazy", a.Name())
	}
}
