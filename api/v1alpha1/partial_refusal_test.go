package v1alpha1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// partialRefusal is a bad object whose refusal need only contain want: the
// MachineSet and MachineDeployment catalogs name the rule that refuses, not
// the API server's whole sentence around it.
type partialRefusal struct {
	name   string
	update bool // create the valid object first, then update it mutated
	mutate func(obj)
	want   string
}

// runPartialRefusals sends each case, built from base, with strict field
// validation as kubectl does, and fails unless the API server refuses it
// saying want.
func runPartialRefusals(t *testing.T, kind, prefix string, base func(name string) obj, cases []partialRefusal) {
	freshNamespace(t)
	ctx := context.Background()
	strict := client.FieldValidation("Strict")
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: base(fmt.Sprintf("%s-%d", prefix, i))}
			var err error
			if tc.update {
				if err := env.Client.Create(ctx, u, strict); err != nil {
					t.Fatalf("create the valid %s: %v", kind, err)
				}
				tc.mutate(u.Object)
				err = env.Client.Update(ctx, u, strict)
			} else {
				tc.mutate(u.Object)
				err = env.Client.Create(ctx, u, strict)
			}
			if err == nil {
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("refusal does not say what is wrong\n got: %s\nwant: ...%s...", err.Error(), tc.want)
			}
		})
	}
}
