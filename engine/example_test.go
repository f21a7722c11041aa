package engine_test

import (
	"context"
	"fmt"
	"os"

	"github.com/krtt-dev/krtt/engine"
)

// A standalone table (it carries its own states and facts): a shorter
// Door than the examples module's (examples/door), which splits it into a
// TableSet and its table.
const doorTable = `
apiVersion: krtt.dev/v1alpha1
kind: TransitionTable
metadata: {name: door}
spec:
  registry: door
  initialState: Closed
  hitPolicy: first
  states:
    - {name: Closed, description: The Door is shut.}
    - {name: Open, description: The Door is open.}
    - {name: Gone, terminal: true, description: The Door was deleted.}
  facts:
    - {name: wantOpen, type: bool, description: spec.open is true.}
    - {name: deleted, type: bool, description: The Door was deleted.}
  rows:
    - {id: G01, observed: any, trigger: deleted, action: nothing, resulting: Gone, from: [Closed, Open], when: {deleted: true}, then: {state: Gone}}
    - {id: C01, observed: Closed, trigger: spec.open, action: open, resulting: Open, from: [Closed], when: {wantOpen: true}, do: [Open], then: {state: Open}}
    - {id: C02, observed: Closed, trigger: as wanted, action: nothing, resulting: "-", from: [Closed]}
    - {id: O01, observed: Open, trigger: not spec.open, action: close, resulting: Closed, from: [Open], when: {wantOpen: false}, then: {state: Closed}}
    - {id: O02, observed: Open, trigger: as wanted, action: nothing, resulting: "-", from: [Open]}
`

// door is the environment facts read and actions change: one object's
// world as one reconcile observed it.
type door struct {
	wantOpen, deleted, opened bool
}

func doorRegistry() *engine.Registry[*door] {
	r := engine.NewRegistry[*door]("door")
	r.Bool("wantOpen", func(d *door) bool { return d.wantOpen })
	r.Bool("deleted", func(d *door) bool { return d.deleted })
	r.Action("Open", "Open the Door.", func(_ context.Context, d *door) engine.Outcome {
		d.opened = true
		return engine.OKf("opened")
	}, engine.Pure())
	return r
}

// Load a table, check it against the registry as krtt lint does, and run
// one step: observe the facts, decide, act.
func Example() {
	lib, findings := engine.LoadBytes("door.yaml", []byte(doorTable))
	if findings.HasErrors() {
		fmt.Println(findings)
		return
	}
	reg := doorRegistry()
	fmt.Println("findings:", len(engine.Check(lib, map[string]*engine.Catalog{"door": reg.Catalog()})))

	runner, err := engine.NewRunner(lib.TableSet("door"), reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := &door{wantOpen: true}
	step, err := runner.Step(context.Background(), "default/front", "Closed", d)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(step.Trace.Row, step.Trace.From, "->", step.Trace.To, step.Trace.Message, d.opened)
	// Output:
	// findings: 0
	// C01 Closed -> Open opened true
}

// Decide from facts given by hand, as krtt decide does: no registry, no
// action run.
func ExampleTableSet_Decide() {
	lib, _ := engine.LoadBytes("door.yaml", []byte(doorTable))
	set := lib.TableSet("door")
	facts := set.NewFacts()
	_ = facts.SetBool("wantOpen", false)
	_ = facts.SetBool("deleted", false)
	d, err := set.Decide(context.Background(), "Open", facts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Row.ID, d.From.Name, "->", d.To.Name)
	// Output: O01 Open -> Closed
}

// A controller's binary writes its registries for krtt lint --catalog.
func ExampleWriteCatalogs() {
	_ = engine.WriteCatalogs(os.Stdout, map[string]*engine.Catalog{"door": doorRegistry().Catalog()})
	// Output:
	// {
	//   "apiVersion": "krtt.dev/v1alpha1",
	//   "kind": "Catalogs",
	//   "registries": [
	//     {
	//       "name": "door",
	//       "entries": [
	//         {
	//           "kind": "action",
	//           "name": "Open",
	//           "description": "Open the Door.",
	//           "pure": true
	//         },
	//         {
	//           "kind": "fact",
	//           "name": "deleted"
	//         },
	//         {
	//           "kind": "fact",
	//           "name": "wantOpen"
	//         }
	//       ]
	//     }
	//   ]
	// }
}
